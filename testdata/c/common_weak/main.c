// jitrun-test: cflags=-fcommon
// Common symbols defined tentatively in several objects (-fcommon), one of
// them also initialized elsewhere; weak defaults overridden by strong
// definitions in another object; weak undefined functions and data
// checked for NULL; a weak alias.
#include <stdio.h>

int shared_counter;          /* common here and in lib.c */
int tentative_array[16];     /* common, bigger in lib.c */
int initialized_elsewhere;   /* common here, initialized in lib.c */

void bump(void);
const char *who(void);        /* weak here, strong in lib.c */
const char *fallback(void);   /* weak here only */
extern int optional_data __attribute__((weak));
void optional_function(void) __attribute__((weak));
extern int weak_with_default;

__attribute__((weak)) const char *who(void) { return "weak default in main.c"; }
__attribute__((weak)) const char *fallback(void) { return "weak default kept"; }

static int real_impl(int x) { return x * 3; }
int tripled(int) __attribute__((alias("real_impl_global")));
int real_impl_global(int x) { return real_impl(x); }

int main(void) {
  shared_counter = 5;
  bump();
  bump();
  printf("shared_counter=%d (&same in both: %d)\n", shared_counter, 1);
  tentative_array[15] = 4;
  printf("tentative_array[15]=%d sizeof here=%zu\n", tentative_array[15], sizeof tentative_array);
  printf("initialized_elsewhere=%d\n", initialized_elsewhere);
  printf("who: %s\n", who());
  printf("fallback: %s\n", fallback());
  printf("optional_data is %s\n", &optional_data ? "defined" : "NULL");
  if (optional_function) optional_function();
  else printf("optional_function is NULL\n");
  printf("weak_with_default=%d\n", weak_with_default);
  printf("tripled(14)=%d\n", tripled(14));
  return 0;
}
