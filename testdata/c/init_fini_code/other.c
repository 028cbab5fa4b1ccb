#include <stdio.h>

int detected;

void detect(void) {
  detected = 42;
  printf(".init fragment (other.o)\n");
}
void other_fini(void) { printf(".fini fragment (other.o)\n"); }
/* Aligned: the bytes between this fragment and the one before it are padding. */
#if defined(__aarch64__)
#define CALL "bl"
#else
#define CALL "call"
#endif
__asm__(".section .init,\"ax\",%progbits\n\t.p2align 4\n\t" CALL " detect\n\t.text");
__asm__(".section .fini,\"ax\",%progbits\n\t.p2align 4\n\t" CALL " other_fini\n\t.text");
