#include <stdio.h>

int detected;

void detect(void) {
  detected = 42;
  printf(".init fragment (other.o)\n");
}
void other_fini(void) { printf(".fini fragment (other.o)\n"); }
/* Aligned: the bytes between this fragment and the one before it are padding. */
__asm__(".section .init,\"ax\",@progbits\n\t.p2align 4\n\tcall detect\n\t.text");
__asm__(".section .fini,\"ax\",@progbits\n\t.p2align 4\n\tcall other_fini\n\t.text");
