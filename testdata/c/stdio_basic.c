// jitrun-test: args=alpha beta
// stdio: the printf family, puts, fputs to stderr, setvbuf with a static
// buffer, fflush, and output that is still buffered when main returns.
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <inttypes.h>

static char stdout_buffer[BUFSIZ];

int main(int argc, char **argv) {
  if (setvbuf(stdout, stdout_buffer, _IOFBF, sizeof stdout_buffer) != 0) {
    fputs("setvbuf failed\n", stderr);
    return 1;
  }
  printf("%d %i %u %x %X %o %c %s %%\n", -42, 17, 3000000000u, 0xbeef, 0xcafe, 8, 'z', "str");
  printf("[%5d] [%-5d] [%05d] [%+d] [% d]\n", 42, 42, 42, 42, 42);
  printf("[%.3f] [%10.2e] [%g] [%G] [%a]\n", 3.14159265, 12345.678, 0.0001, 1e20, 1.0);
  printf("[%ld] [%lld] [%lu] [%zu] [%td]\n", -1L, -9000000000LL, 18446744073709551615UL, sizeof(long double),
         (ptrdiff_t)-3);
  printf("[%" PRId64 "] [%" PRIx32 "] [%" PRIu8 "]\n", INT64_MIN, UINT32_MAX, (uint8_t)255);
  printf("[%*d] [%-*.*s]\n", 6, 7, 8, 3, "abcdefgh");
  printf("[%hhd] [%hd] [%#x] [%#o]\n", (signed char)200, (short)70000, 255, 8);
  for (int i = 1; i < argc; i++) printf("arg %d: %s (%zu chars)\n", i, argv[i], strlen(argv[i]));

  char buffer[64];
  int n = snprintf(buffer, sizeof buffer, "%s-%04d-%.2f", "id", 7, 2.5);
  printf("snprintf wrote %d: %s\n", n, buffer);
  n = snprintf(buffer, 8, "%s", "truncated output");
  printf("snprintf wanted %d, kept '%s'\n", n, buffer);
  sprintf(buffer, "%08.3f|%-8s|", -1.5, "ab");
  puts(buffer);

  int a, b;
  char word[16];
  if (sscanf("12 34 word", "%d %d %15s", &a, &b, word) == 3) printf("sscanf: %d %d %s\n", a, b, word);

  puts("puts adds a newline");
  fputs("fputs does not\n", stdout);
  putchar('!');
  putchar('\n');
  fputs("to stderr, unbuffered\n", stderr);
  fprintf(stderr, "stderr with format %d\n", 99);
  fflush(stdout);
  fprintf(stdout, "after fflush\n");
  fwrite("fwrite bytes\n", 1, 13, stdout);
  // Left in the static buffer: exit must flush it.
  printf("still buffered at return");
  return 0;
}
