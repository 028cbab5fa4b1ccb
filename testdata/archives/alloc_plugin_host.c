/* A program with its own allocator (its free aborts on blocks it did not
   make) that loads a plugin with dlopen and frees what the plugin
   allocated: natively the plugin's malloc binds to the program's. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAGIC 0x706c7567696eULL
struct header { uint64_t magic; size_t size; };
static char arena[1 << 22];
static size_t used;

void *malloc(size_t n) {
  size_t need = (sizeof(struct header) + n + 15) & ~(size_t)15;
  if (used + need > sizeof arena) return NULL;
  struct header *h = (struct header *)(arena + used);
  used += need;
  h->magic = MAGIC;
  h->size = n;
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
}

void *calloc(size_t count, size_t size) {
  void *p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *realloc(void *p, size_t n) {
  void *q = malloc(n);
  if (q && p) memcpy(q, p, ((struct header *)p - 1)->size < n ? ((struct header *)p - 1)->size : n);
  free(p);
  return q;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  void *plugin = dlopen(argv[1], RTLD_NOW);
  if (!plugin) {
    printf("dlopen failed\n");
    return 1;
  }
  char *(*copy)(const char *) = (char *(*)(const char *))dlsym(plugin, "plugin_copy");
  char *text = copy ? copy("allocated by the plugin") : NULL;
  printf("%s\n", text ? text : "no copy");
  free(text);
  return 0;
}
