// An image large enough (a 12 MiB table) that jitrun writes it on several
// threads: fixups in code before the table and in data after it must all
// be applied, each exactly once.
#include <stdio.h>
#include <string.h>

#define BIG (12 << 20)

extern const unsigned char big_table[BIG];
extern const char *const names[];
extern int (*ops[])(int);
const char *describe(int i);

static const char *local_names[] = {"alpha", "beta", "gamma"};
static const char *(*describer)(int) = describe;

int main(void) {
  unsigned long sum = 0;
  for (size_t i = 0; i < BIG; i += 4096) sum += big_table[i];
  printf("sum %lu first %d last %d\n", sum, big_table[0], big_table[BIG - 1]);
  for (int i = 0; names[i]; i++) printf("%s(%d) = %d\n", names[i], i + 3, ops[i](i + 3));
  for (int i = 0; i < 3; i++) printf("%s: %s\n", local_names[i], describer(i));
  return (int)(sum % 7);
}
