// Empty stdin: getchar returns EOF at once, feof is set, reading again
// still gives EOF, clearerr resets the flag; scanf reports EOF.
#include <stdio.h>

int main(void) {
  int c = getchar();
  printf("first getchar: %s\n", c == EOF ? "EOF" : "data");
  printf("feof=%d ferror=%d\n", feof(stdin) != 0, ferror(stdin) != 0);
  char line[32];
  printf("fgets: %s\n", fgets(line, sizeof line, stdin) ? "line" : "NULL");
  int x = 5;
  printf("scanf: %d x=%d\n", scanf("%d", &x), x);
  clearerr(stdin);
  printf("after clearerr feof=%d\n", feof(stdin) != 0);
  printf("fread: %zu\n", fread(line, 1, sizeof line, stdin));
  return 0;
}
