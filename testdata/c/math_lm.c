// jitrun-test: libs=-lm
// libm: results printed with limited precision so they do not depend on
// how the compiler folds constants.
#include <math.h>
#include <stdio.h>
#include <float.h>

static volatile double inputs[] = {0.0, 0.5, 1.0, 2.0, 3.75, 10.0, 123.456, -2.5};

int main(void) {
  for (unsigned i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    double x = inputs[i];
    printf("x=%8.3f sqrt=%.6f pow=%.6f sin=%.6f cos=%.6f exp=%.6g fmod=%.6f\n", x, sqrt(fabs(x)), pow(x, 1.5),
           sin(x), cos(x), exp(x / 4), fmod(x, 1.25));
    printf("   floor=%.1f ceil=%.1f round=%.1f lround=%ld trunc=%.1f atan2=%.6f hypot=%.6f\n", floor(x), ceil(x),
           round(x), lround(x), trunc(x), atan2(x, 2.0), hypot(x, 3.0));
    if (x > 0) printf("   log=%.6f log10=%.6f log2=%.6f cbrt=%.6f\n", log(x), log10(x), log2(x), cbrt(x));
  }
  int e;
  double m = frexp(48.0, &e);
  printf("frexp: %.4f * 2^%d, ldexp back %.1f\n", m, e, ldexp(m, e));
  double ip;
  double fp = modf(-3.25, &ip);
  printf("modf: %.2f %.2f\n", ip, fp);
  printf("isnan=%d isinf=%d signbit=%d\n", isnan(NAN) != 0, isinf(-INFINITY) != 0, signbit(-0.0) != 0);
  printf("nan prints as %f, inf as %f\n", NAN, -INFINITY);
  volatile float f = 2.0f;
  printf("sqrtf=%.5f powf=%.3f fminf=%.1f fmaxf=%.1f\n", sqrtf(f), powf(f, 10.0f), fminf(f, -1.0f), fmaxf(f, 9.0f));
  volatile long double ld = 2.0L;
  printf("sqrtl=%.10Lf\n", sqrtl(ld));
  printf("DBL_EPSILON=%g tgamma(5)=%.1f erf(1)=%.6f\n", DBL_EPSILON, tgamma(5.0), erf(1.0));
  return 0;
}
