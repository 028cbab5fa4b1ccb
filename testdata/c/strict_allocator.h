/* A strict allocator for programs that replace malloc (included by
   own_malloc.c and ../archives/alloc_plugin_host.c): blocks come from a
   static arena with a header, and free aborts on a block it did not make,
   as bash's own malloc does ("free: called with unallocated block"). It
   counts its calls, for programs that check who allocated. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STRICT_MAGIC 0x6a6974727531ULL
struct header { uint64_t magic; size_t size; };
static char arena[1 << 22];
static size_t used;
static volatile int mallocs, frees, reallocs;

void *malloc(size_t n) {
  size_t need = (sizeof(struct header) + n + 15) & ~(size_t)15;
  if (used + need > sizeof arena) return NULL;
  struct header *h = (struct header *)(arena + used);
  used += need;
  h->magic = STRICT_MAGIC;
  h->size = n;
  mallocs++;
  return h + 1;
}

void free(void *p) {
  if (!p) return;
  struct header *h = (struct header *)p - 1;
  if ((char *)h < arena || (char *)h >= arena + sizeof arena || h->magic != STRICT_MAGIC) {
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
