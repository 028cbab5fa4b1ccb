/* The address of a libc function is one value everywhere: taken in code
   (32-bit immediate under -fno-pic) and in static data (64-bit), as the
   canonical PLT address of a native non-PIE link makes it. */
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
typedef int (*cmp_fn)(const char *, const char *);
static const struct { const char *name; cmp_fn fn; } table[] = {{"strcmp", strcmp}, {"strcasecmp", (cmp_fn)0}};
int main(void) {
  cmp_fn f = strcmp;
  printf("same: %d %d\n", table[0].fn == f, table[0].fn == strcmp);
  printf("call: %d\n", table[0].fn("a", "b") < 0);
  void (*ex)(int) = exit;
  printf("exit seen: %d\n", ex == exit);
  return 0;
}
