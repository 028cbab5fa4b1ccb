#include <stdio.h>

int other_value;

__attribute__((constructor(101))) static void other_ctor_101(void) { printf("other ctor 101\n"); }
__attribute__((constructor(200))) static void other_ctor_200(void) {
  other_value = 200;
  printf("other ctor 200\n");
}
__attribute__((constructor(1000))) static void other_ctor_1000(void) { printf("other ctor 1000\n"); }
__attribute__((constructor)) static void other_ctor_default(void) { printf("other ctor default\n"); }
__attribute__((destructor(101))) static void other_dtor_101(void) { printf("other dtor 101\n"); }
__attribute__((destructor(1000))) static void other_dtor_1000(void) { printf("other dtor 1000\n"); }
__attribute__((destructor)) static void other_dtor_default(void) { printf("other dtor default\n"); }

void other_report(void) { printf("other_value=%d\n", other_value); }
