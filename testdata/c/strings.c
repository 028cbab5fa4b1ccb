// string.h and ctype.h: copying, searching, tokenizing, comparing,
// memory functions on overlapping buffers, and conversions.
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int main(void) {
  char buf[128] = "The rain in Spain";
  printf("strlen=%zu strchr=%s strrchr=%s\n", strlen(buf), strchr(buf, 'a'), strrchr(buf, 'a'));
  printf("strstr=%s strpbrk=%s strspn=%zu strcspn=%zu\n", strstr(buf, "in S"), strpbrk(buf, "xyzS"),
         strspn(buf, "ehT "), strcspn(buf, "ai"));
  strcat(buf, " stays mainly");
  strncat(buf, " in the plain, truncated", 14);
  puts(buf);
  char copy[128];
  strncpy(copy, buf, sizeof copy);
  printf("cmp=%d ncmp=%d casecmp=%d\n", strcmp(copy, buf) == 0, strncmp("abcdef", "abcxyz", 3),
         strcasecmp("HeLLo", "hello"));
  printf("order: %d %d\n", strcmp("apple", "banana") < 0, strcmp("b", "a") > 0);

  char csv[] = "name,age,,city;country";
  for (char *tok = strtok(csv, ",;"); tok; tok = strtok(NULL, ",;")) printf("[%s]", tok);
  putchar('\n');
  char path[] = "/usr/local/lib/file.so";
  char *save, *part = strtok_r(path, "/", &save);
  while (part) {
    printf("<%s>", part);
    part = strtok_r(NULL, "/", &save);
  }
  putchar('\n');

  char mem[32] = "0123456789abcdefghij";
  memmove(mem + 4, mem, 10);
  printf("memmove overlap: %s\n", mem);
  memmove(mem, mem + 6, 10);
  printf("memmove back: %s\n", mem);
  memset(mem, '-', 5);
  printf("memset: %s memcmp=%d memchr=%s\n", mem, memcmp("abc", "abd", 3) < 0, (char *)memchr(mem, 'f', 20));

  char *dup = strdup("duplicate me");
  char *ndup = strndup("duplicate me", 9);
  printf("%s / %s\n", dup, ndup);
  free(dup);
  free(ndup);

  const char *nums[] = {"42", "-17abc", "0x1F", "077", "3.5e2", "  12", "junk"};
  for (int i = 0; i < 7; i++) {
    char *end;
    long l = strtol(nums[i], &end, 0);
    double d = strtod(nums[i], NULL);
    printf("%-7s strtol=%ld rest='%s' strtod=%g atoi=%d\n", nums[i], l, end, d, atoi(nums[i]));
  }
  printf("strtoul=%lu strtoll=%lld\n", strtoul("4294967295", NULL, 10), strtoll("-9223372036854775807", NULL, 10));

  char mixed[] = "Hello, World 123!";
  for (char *p = mixed; *p; p++) *p = isupper((unsigned char)*p) ? tolower(*p) : toupper(*p);
  printf("swapped case: %s\n", mixed);
  int alpha = 0, digit = 0, space = 0, punct = 0;
  for (const char *p = "Hello, World 123!"; *p; p++) {
    alpha += isalpha((unsigned char)*p) != 0;
    digit += isdigit((unsigned char)*p) != 0;
    space += isspace((unsigned char)*p) != 0;
    punct += ispunct((unsigned char)*p) != 0;
  }
  printf("alpha=%d digit=%d space=%d punct=%d\n", alpha, digit, space, punct);
  char reversed[64];
  const char *src = "stressed";
  size_t n = strlen(src);
  for (size_t i = 0; i < n; i++) reversed[i] = src[n - 1 - i];
  reversed[n] = 0;
  printf("%s -> %s\n", src, reversed);
  return 0;
}
