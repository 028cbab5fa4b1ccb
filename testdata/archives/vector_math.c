// Calls libmvec (SSE2 variant of sin), which libm.so names AS_NEEDED: the
// reference loads it, as a native link with -lm records it as needed.
#include <dlfcn.h>
#include <emmintrin.h>
#include <stdio.h>

__m128d _ZGVbN2v_sin(__m128d x);

int main(void) {
    double out[2];
    _mm_storeu_pd(out, _ZGVbN2v_sin(_mm_set_pd(1.0, 0.5)));
    printf("sin %.6f %.6f\n", out[0], out[1]);
    printf("libmvec %s\n", dlopen("libmvec.so.1", RTLD_NOW | RTLD_NOLOAD) ? "loaded" : "not loaded");
    return 0;
}
