// Code that objects put in .init and .fini runs as natively, where crti.o
// and crtn.o wrap it into _init and _fini: _init after .preinit_array and
// before .ctors and .init_array, _fini after .fini_array and .dtors.
// OpenSSL's CPU detection is such a fragment (`call OPENSSL_cpuid_setup`).
// Fragments of two objects, one aligned so that padding lies between them.
#include <stdio.h>

extern int detected;
void other_fragment_ran(void);

void init_fragment(void) { printf(".init fragment (main.o), detected=%d\n", detected); }
void fini_fragment(void) { printf(".fini fragment (main.o)\n"); }
#if defined(__aarch64__)
#define CALL "bl"
#else
#define CALL "call"
#endif
__asm__(".section .init,\"ax\",%progbits\n\t" CALL " init_fragment\n\t.text");
__asm__(".section .fini,\"ax\",%progbits\n\t" CALL " fini_fragment\n\t.text");

static void preinit(void) { printf("preinit_array\n"); }
static void init(void) { printf("init_array, detected=%d\n", detected); }
static void fini(void) { printf("fini_array\n"); }
static void ctor(void) { printf(".ctors\n"); }
static void dtor(void) { printf(".dtors\n"); }
__attribute__((used, section(".preinit_array"))) static void (*preinit_entry)(void) = preinit;
__attribute__((used, section(".init_array"))) static void (*init_entry)(void) = init;
__attribute__((used, section(".fini_array"))) static void (*fini_entry)(void) = fini;
__attribute__((used, section(".ctors"))) static void (*ctor_entry)(void) = ctor;
__attribute__((used, section(".dtors"))) static void (*dtor_entry)(void) = dtor;

int main(void) {
  printf("main, detected=%d\n", detected);
  return 0;
}
