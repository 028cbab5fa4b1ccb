/* A program with its own allocator (its free aborts on blocks it did not
   make) that loads a plugin with dlopen and frees what the plugin
   allocated: natively the plugin's malloc binds to the program's. */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../c/strict_allocator.h"

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
