/* Linked with libhelper.a (helper.c, unused.c) built as Mach-O by tests/macho.rs. */
#include <stdio.h>
int helper_add(int a, int b);
extern const char *helper_name;
int main(void) { printf("%s %d\n", helper_name, helper_add(2, 3)); return helper_add(1, 1); }
