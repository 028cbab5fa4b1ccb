/* A program that loads a plugin which calls back into it (Lua's C modules,
   QuickJS's native modules): with `cc -rdynamic` (jitrun --export-dynamic)
   the plugin finds the program's functions and data; a hidden function
   stays invisible to it. */
#include <dlfcn.h>
#include <stdio.h>

int host_counter = 5;
int host_twice(int x) { return x * 2; }
__attribute__((visibility("hidden"))) int host_hidden(int x) { return x + 1; }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!plugin) {
    printf("dlopen failed\n");
    return 1;
  }
  int (*entry)(void) = (int (*)(void))dlsym(plugin, "plugin_entry");
  int result = entry();
  printf("plugin says %d, counter %d, hidden %d\n", result, host_counter, host_hidden(1));
  void *self_twice = dlsym(RTLD_DEFAULT, "host_twice");
  printf("dlsym(RTLD_DEFAULT) finds host_twice: %d\n", self_twice == (void *)host_twice);
  dlclose(plugin);
  return 0;
}
