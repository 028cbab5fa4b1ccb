// jitrun-test: cflags=-fno-builtin
/* A program with its own allocator, as bash and servers linking tcmalloc
   or jemalloc have: natively every library's malloc, free, calloc and
   realloc are the program's, so blocks libc allocates (strdup, getline,
   reallocarray, stdio buffers) can go to the program's free. This one
   (strict_allocator.h) aborts on a block it did not make. */
#define _GNU_SOURCE
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "strict_allocator.h"

int main(void) {
  int before = mallocs;
  char *copy = strdup("from libc's strdup");
  printf("strdup uses the program's malloc: %s\n", mallocs > before ? "yes" : "no");
  free(copy);

  before = reallocs;
  int *numbers = reallocarray(NULL, 8, sizeof *numbers);
  printf("reallocarray uses the program's realloc: %s\n", reallocs > before ? "yes" : "no");
  free(numbers);

  FILE *text = fmemopen("one\ntwo\n", 8, "r");
  char *line = NULL;
  size_t room = 0;
  int lines = 0;
  while (getline(&line, &room, text) > 0) lines++;
  fclose(text);
  free(line);
  printf("getline read %d lines into a block the program frees\n", lines);
  printf("frees: %s\n", frees >= 3 ? "at least 3" : "fewer");

  /* libc grows the environment with realloc: the array it started from
     (the kernel's, or one a batch's "env" made) must be this allocator's. */
  for (int i = 0; i < 40; i++) {
    char name[16];
    snprintf(name, sizeof name, "OWN_MALLOC_%d", i);
    setenv(name, "set", 1);
  }
  unsetenv("OWN_MALLOC_3");
  printf("environment grown: %s\n", getenv("OWN_MALLOC_39") ? "yes" : "no");

  /* libc loads name-service modules (nsswitch.conf) on the first lookup
     that the files do not answer; they must allocate from here too. */
  struct passwd *user = getpwnam("no-such-user-jitrun");
  printf("a missing user: %s\n", user ? "found" : "not found");
  user = getpwnam("root");
  printf("root: %s\n", user ? "found" : "not found");
  return 0;
}
