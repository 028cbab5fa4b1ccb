/* What ps and /proc show of a process's command line and environment,
   and the room a process-title setter finds (Redis's setproctitle,
   PostgreSQL, perl's $0 take argv's strings and then environ's, as long
   as each starts where the previous one ended), and the stack's vectors
   (argc, argv, its null, envp, its null, the auxiliary vector, as startup
   code that walks on from argv finds them): all as natively. */
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static size_t slurp(const char *path, char *buf, size_t cap) {
  int fd = open(path, O_RDONLY);
  ssize_t n = fd < 0 ? -1 : read(fd, buf, cap);
  if (fd >= 0) close(fd);
  return n < 0 ? 0 : (size_t)n;
}

static void show_cmdline(const char *when) {
  static char buf[1 << 16];
  size_t n = slurp("/proc/self/cmdline", buf, sizeof buf);
  size_t shown = n;
  while (shown > 0 && buf[shown - 1] == 0) shown--;
  printf("%s: %zu bytes, %zu trailing NULs: [", when, n, n - shown);
  for (size_t i = 0; i < shown && i < 60; i++) putchar(buf[i] ? buf[i] : '|');
  printf("%s]\n", shown > 60 ? "..." : "");
}

int main(int argc, char **argv, char **envp) {
  show_cmdline("start");
  printf("argv[-1] is argc: %s\n", ((long *)argv)[-1] == argc ? "yes" : "no");
  printf("envp follows argv's null: %s\n", argv + argc + 1 == envp && envp == environ ? "yes" : "no");
  char **past = envp;
  while (*past) past++;
  long page_size = 0;
  for (Elf64_auxv_t *aux = (Elf64_auxv_t *)(past + 1); aux->a_type != AT_NULL; aux++)
    if (aux->a_type == AT_PAGESZ) page_size = (long)aux->a_un.a_val;
  printf("auxv follows the environment: %s\n", page_size == sysconf(_SC_PAGESIZE) ? "yes" : "no");
  char *end = argv[0];
  for (int i = 0; i < argc && argv[i] == end; i++) end = argv[i] + strlen(argv[i]) + 1;
  printf("environ follows argv: %s\n", environ[0] && environ[0] == end ? "yes" : "no");
  int env_strings = 0;
  for (int i = 0; environ[i] && environ[i] == end; i++, env_strings++) end = environ[i] + strlen(environ[i]) + 1;
  static char env[1 << 16];
  size_t n = slurp("/proc/self/environ", env, sizeof env);
  size_t at = 0;
  int same = 1;
  for (int i = 0; environ[i] && same; i++) {
    size_t len = strlen(environ[i]) + 1;
    same = at + len <= n && memcmp(env + at, environ[i], len) == 0;
    at += len;
  }
  printf("/proc/self/environ is the environment: %s\n", same && at == n ? "yes" : "no");

  /* Take the whole area over for a title, environment copied away first. */
  size_t room = (size_t)(end - argv[0]);
  printf("title room: argv and %s environment strings\n", env_strings > 0 ? "the" : "no");
  for (int i = 0; environ[i]; i++) environ[i] = strdup(environ[i]);
  memset(argv[0], 0, room);
  memset(argv[0], 'x', room - 1);
  memcpy(argv[0], "server: ", 8);
  static char shown[1 << 16];
  size_t len = slurp("/proc/self/cmdline", shown, sizeof shown);
  while (len > 0 && shown[len - 1] == 0) len--;
  printf("cmdline shows the whole title: %s\n",
         len == room - 1 && memcmp(shown, argv[0], len) == 0 ? "yes" : "no");
  return 0;
}
