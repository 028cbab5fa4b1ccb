/* A buffer the program allocates and libc's getline grows: the program's
   malloc and libc's realloc must be one allocator. They are natively,
   and must be under jitrun too when a replacement allocator is preloaded
   (git's test suite runs everything with LD_PRELOAD=libc_malloc_debug.so.0,
   whose malloc@GLIBC_2.2.5 is not a default version; see
   tests/differential_c.rs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  char *line = malloc(4);
  size_t room = 4;
  FILE *text = fmemopen("a line longer than four bytes\nand another\n", 42, "r");
  if (!line || !text) return 2;
  int lines = 0;
  size_t longest = 0;
  for (ssize_t n; (n = getline(&line, &room, text)) > 0; lines++)
    if ((size_t)n > longest) longest = (size_t)n;
  fclose(text);
  printf("%d lines, the longest %zu bytes, the buffer grown: %s\n", lines, longest, room > 4 ? "yes" : "no");
  free(line);
  return 0;
}
