// jitrun-test: args=one two  three -x --long=value
// jitrun-test: env=JT_COLOR=blue
// jitrun-test: env=JT_EMPTY=
// jitrun-test: env=JT_SPACES=a b c
// argc/argv (not argv[0], whose value differs by design), the envp
// argument, environ, getenv, setenv/unsetenv and their visibility.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int count_prefixed(char **env, const char *prefix) {
  int n = 0;
  for (char **e = env; *e; e++)
    if (strncmp(*e, prefix, strlen(prefix)) == 0) n++;
  return n;
}

static int by_string(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv, char **envp) {
  printf("argc=%d argv[argc]=%s\n", argc, argv[argc] == NULL ? "NULL" : "not NULL");
  printf("argv[0] is %s\n", argv[0] && argv[0][0] ? "non-empty" : "empty");
  for (int i = 1; i < argc; i++) printf("argv[%d]=<%s>\n", i, argv[i]);
  printf("envp == environ: %s\n", envp == environ ? "yes" : "no");

  char *mine[16];
  int n = 0;
  for (char **e = environ; *e && n < 16; e++)
    if (strncmp(*e, "JT_", 3) == 0) mine[n++] = *e;
  qsort(mine, n, sizeof mine[0], by_string);
  for (int i = 0; i < n; i++) printf("env %s\n", mine[i]);

  const char *names[] = {"JT_COLOR", "JT_EMPTY", "JT_SPACES", "JT_MISSING"};
  for (int i = 0; i < 4; i++) {
    const char *v = getenv(names[i]);
    printf("getenv(%s) = %s%s%s\n", names[i], v ? "'" : "", v ? v : "NULL", v ? "'" : "");
  }
  setenv("JT_NEW", "fresh", 1);
  setenv("JT_COLOR", "red", 0);
  printf("after setenv: JT_NEW=%s JT_COLOR=%s prefixed=%d\n", getenv("JT_NEW"), getenv("JT_COLOR"),
         count_prefixed(environ, "JT_"));
  unsetenv("JT_COLOR");
  printf("after unsetenv: JT_COLOR=%s prefixed=%d\n", getenv("JT_COLOR") ? "set" : "unset",
         count_prefixed(environ, "JT_"));
  putenv("JT_PUT=via putenv");
  printf("putenv: %s\n", getenv("JT_PUT"));
  return argc;
}
