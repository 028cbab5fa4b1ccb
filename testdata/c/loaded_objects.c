// The shared objects in the process, as dl_iterate_phdr lists them: a C
// program that uses atexit (which jitrun's runtime implements with
// __cxa_atexit, a libc function named like the C++ ABI's) gets no C++
// runtime loaded beside it.
#define _GNU_SOURCE
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int show(struct dl_phdr_info *info, size_t size, void *data) {
  (void)size;
  (void)data;
  const char *slash = strrchr(info->dlpi_name, '/');
  const char *name = slash ? slash + 1 : info->dlpi_name;
  /* The vDSO's name differs between kernels' and loaders' reports. */
  if (strncmp(name, "linux-vdso", 10) != 0) printf("loaded: '%s'\n", name);
  return 0;
}

static void bye(void) { printf("atexit handler\n"); }

int main(void) {
  atexit(bye);
  dl_iterate_phdr(show, NULL);
  return 0;
}
