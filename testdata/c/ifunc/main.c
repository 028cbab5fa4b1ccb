/* STT_GNU_IFUNC definitions: a hand-written resolver (as glibc's string
   functions have) and GCC's function multiversioning, which makes one.
   Calls, addresses taken in code and in static data, from the defining
   object and from another, must all agree, as in a native link. */
#include <stdio.h>

typedef int (*op_fn)(int);
int pick(int x);
int scale(int x);
extern op_fn table_in_other[];
op_fn address_in_other(void);
int calls_in_other(int x);

static op_fn table_here[] = {pick, scale};

int main(void) {
  printf("pick(20) = %d, scale(3) = %d\n", pick(20), scale(3));
  printf("via other object: %d\n", calls_in_other(5));
  /* ld gives a PIE no single address for an IFUNC defined in another
     object (code gets the PLT entry, data the chosen function), so only
     what it keeps equal is compared; jitrun keeps every pointer equal. */
  printf("same address in data: %d\n", table_here[0] == table_in_other[0]);
  printf("code == data: %d %d\n", (op_fn)pick == table_here[0], (op_fn)scale == table_in_other[1]);
  printf("through pointers: %d %d\n", table_here[0](1), table_in_other[1](7));
  return 0;
}
