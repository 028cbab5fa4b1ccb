/* What ps shows: /proc/self/cmdline is the program's command line, and a
   program that rewrites its argv strings (Redis, PostgreSQL, nginx set
   their process title so) changes it, as natively. */
#include <stdio.h>
#include <string.h>
static void show(const char *when) {
  char buf[4096]; FILE *f = fopen("/proc/self/cmdline", "r"); size_t n = fread(buf, 1, sizeof buf, f); fclose(f);
  while (n > 0 && buf[n - 1] == 0) n--;  /* trailing padding */
  for (size_t i = 0; i < n; i++) if (!buf[i]) buf[i] = ' ';
  printf("%s: [%.*s]\n", when, (int)n, buf);
}
int main(int argc, char **argv) {
  show("start");
  size_t room = strlen(argv[0]);
  for (int i = 1; i < argc; i++) room += strlen(argv[i]) + 1;
  memset(argv[0], 0, room); strncpy(argv[0], "server *:7777", room);
  show("titled");
  return 0;
}
