/* An LD_PRELOAD interposer with a plain (unversioned) malloc, as
   debugging and profiling allocators are: it counts the program's
   allocations of a telltale size and says so at exit. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>

static void *(*real_malloc)(size_t);
static unsigned long counted;

void *malloc(size_t size) {
  if (!real_malloc) real_malloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "malloc");
  if (size >= 100000 && size < 100010) counted++;
  return real_malloc(size);
}

__attribute__((destructor)) static void report(void) {
  fprintf(stderr, "the preloaded malloc saw %lu of 10 allocations\n", counted);
}
