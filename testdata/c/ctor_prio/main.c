// jitrun-test: args=first
// Constructors and destructors with priorities across two objects, plus
// an init_array entry written by hand and atexit from a constructor: the
// order must match what ld and the C runtime give.
#include <stdio.h>
#include <stdlib.h>

extern int other_value;
void other_report(void);

__attribute__((constructor(200))) static void ctor_200(void) { printf("main ctor 200 (other_value=%d)\n", other_value); }
__attribute__((constructor(101))) static void ctor_101(void) { printf("main ctor 101\n"); }
__attribute__((constructor)) static void ctor_default(void) { printf("main ctor default\n"); }
__attribute__((constructor(65535))) static void ctor_65535(void) { printf("main ctor 65535\n"); }
__attribute__((destructor(101))) static void dtor_101(void) { printf("main dtor 101\n"); }
__attribute__((destructor(300))) static void dtor_300(void) { printf("main dtor 300\n"); }
__attribute__((destructor)) static void dtor_default(void) { printf("main dtor default\n"); }

static void from_ctor_atexit(void) { printf("atexit registered by a constructor\n"); }
__attribute__((constructor(150))) static void ctor_150(void) {
  printf("main ctor 150 registers atexit\n");
  atexit(from_ctor_atexit);
}

static void by_hand(int argc, char **argv, char **envp) {
  printf("init_array entry by hand: argc=%d argv[1]=%s envp?%d\n", argc, argc > 1 ? argv[1] : "-", envp != 0);
}
__attribute__((used, section(".init_array"))) static void (*by_hand_entry)(int, char **, char **) = by_hand;

static void fini_by_hand(void) { printf("fini_array entry by hand\n"); }
__attribute__((used, section(".fini_array"))) static void (*fini_by_hand_entry)(void) = fini_by_hand;

static void main_atexit(void) { printf("atexit registered by main\n"); }

int main(void) {
  atexit(main_atexit);
  printf("main runs\n");
  other_report();
  return 0;
}
