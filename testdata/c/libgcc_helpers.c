// jitrun-test: libs=-lm
// Arithmetic gcc leaves to libgcc: 128-bit division, popcount without
// -mpopcnt, complex multiplication and division, powi. Natively these come
// from libgcc.a; jitrun finds them in libgcc_s, which it loads on demand.
#include <complex.h>
#include <stdio.h>

static volatile unsigned long long seed = 0x9e3779b97f4a7c15ull;

int main(void) {
    unsigned __int128 big = ((unsigned __int128)seed << 64) | (seed ^ 0xabcdefull);
    unsigned long long divisor = seed >> 17;
    unsigned __int128 q = big / divisor, r = big % divisor;
    __int128 signed_q = -(__int128)big / (__int128)(divisor | 1);
    printf("q=%016llx%016llx r=%llx\n", (unsigned long long)(q >> 64), (unsigned long long)q,
           (unsigned long long)r);
    printf("signed q high=%llx\n", (unsigned long long)((unsigned __int128)signed_q >> 64));
    printf("popcount=%d parity=%d\n", __builtin_popcountll(seed), __builtin_parityll(seed));
    volatile double complex a = 1.5 + 2.0 * I, b = -0.5 + 4.25 * I;
    double complex p = a * b, d = a / b;
    printf("mul=%.6f%+.6fi div=%.6f%+.6fi\n", creal(p), cimag(p), creal(d), cimag(d));
    volatile double x = 1.0001;
    volatile int n = 1000;
    printf("powi=%.9f\n", __builtin_powi(x, n));
    return (int)(r & 0x3f);
}
