// Linker-generated __start_SEC/__stop_SEC for a C-identifier section that
// collects items from several objects (a plugin registry), plus a second
// section of plain integers and a section referenced only weakly (empty).
#include <stdio.h>
#include <string.h>

struct item {
  const char *name;
  int (*handler)(int);
  int priority;
};

#define ITEM(n, h, p) \
  static const struct item item_##n __attribute__((used, section("my_items"), aligned(8))) = {#n, h, p}

extern const struct item __start_my_items[], __stop_my_items[];
extern const int __start_my_numbers[], __stop_my_numbers[];
extern const char __start_never_used[] __attribute__((weak));
extern const char __stop_never_used[] __attribute__((weak));

static int twice(int x) { return 2 * x; }
ITEM(doubler, twice, 5);

static const int numbers_here[] __attribute__((used, section("my_numbers"))) = {10, 20};

int main(void) {
  size_t n = (size_t)(__stop_my_items - __start_my_items);
  printf("%zu items\n", n);
  /* Objects contribute in link order, but print sorted to be robust. */
  const struct item *sorted[16];
  for (size_t i = 0; i < n && i < 16; i++) sorted[i] = &__start_my_items[i];
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (strcmp(sorted[j]->name, sorted[i]->name) < 0) {
        const struct item *t = sorted[i];
        sorted[i] = sorted[j];
        sorted[j] = t;
      }
  for (size_t i = 0; i < n; i++)
    printf("%-10s priority %d handler(21)=%d\n", sorted[i]->name, sorted[i]->priority, sorted[i]->handler(21));
  long total = 0;
  for (const int *p = __start_my_numbers; p < __stop_my_numbers; p++) total += *p;
  printf("%td numbers, total %ld\n", __stop_my_numbers - __start_my_numbers, total);
  printf("never_used section: %s\n", &__start_never_used[0] == &__stop_never_used[0] ? "empty" : "present");
  return 0;
}
