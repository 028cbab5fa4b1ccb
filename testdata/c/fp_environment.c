// jitrun-test: libs=-lm
/* A process starts with a clean floating-point environment: no exception
   flags raised, round to nearest. Programs check it (fmt's tests call
   fegetexceptflag and expect no exception from code that raises none);
   jitrun's own arithmetic before the program starts must not show. */
#include <fenv.h>
#include <stdio.h>

int main(void) {
    unsigned mxcsr = 0;
    unsigned short x87_status = 0, x87_control = 0;
#if defined(__x86_64__)
    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstsw %0" : "=m"(x87_status));
    __asm__ volatile("fnstcw %0" : "=m"(x87_control));
#endif
    printf("raised %#x, rounding %d, mxcsr %#x, x87 status %#x control %#x\n", fetestexcept(FE_ALL_EXCEPT),
           fegetround(), mxcsr, x87_status, x87_control);
    volatile double third = 1.0 / 3.0;
    printf("after 1/3 (%.3f): inexact %d\n", third, fetestexcept(FE_INEXACT) != 0);
    return 0;
}
