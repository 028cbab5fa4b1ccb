// jitrun-test: cflags=-fno-builtin
/* A program with its own allocator, as bash and servers linking tcmalloc
   or jemalloc have: natively every library's malloc, free, calloc and
   realloc are the program's, so blocks libc allocates (strdup, getline,
   reallocarray, stdio buffers) can go to the program's free. This one
   checks a header on every free and aborts on a block it did not make. */
#define _GNU_SOURCE
#include <pwd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC 0x6a6974727531ULL
struct header { uint64_t magic; size_t size; };
static char arena[1 << 22];
static size_t used;
static volatile int mallocs, frees, reallocs;

void *malloc(size_t n) {
  size_t need = (sizeof(struct header) + n + 15) & ~(size_t)15;
  if (used + need > sizeof arena) return NULL;
  struct header *h = (struct header *)(arena + used);
  used += need;
  h->magic = MAGIC;
  h->size = n;
  mallocs++;
  return h + 1;
}

void free(void *p) {
  if (!p) return;
  struct header *h = (struct header *)p - 1;
  if ((char *)h < arena || (char *)h >= arena + sizeof arena || h->magic != MAGIC) {
    static const char message[] = "free: a block this allocator did not make\n";
    write(2, message, sizeof message - 1);
    abort();
  }
  frees++;
}

void *calloc(size_t count, size_t size) {
  void *p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *realloc(void *p, size_t n) {
  reallocs++;
  void *q = malloc(n);
  if (q && p) {
    struct header *h = (struct header *)p - 1;
    memcpy(q, p, h->size < n ? h->size : n);
    free(p);
  }
  return q;
}

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
