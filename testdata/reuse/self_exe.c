/* A program that starts itself again through /proc/self/exe, as libuv's
   test runner (uv_exepath + uv_spawn), test harnesses and re-exec'ing
   servers do. Under jitrun --self-exe PATH, /proc/self/exe is PATH. With
   "child N" it prints N and its argument count and exits with N;
   otherwise it checks every way. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int wait_for(pid_t pid) {
  int status;
  if (pid < 0 || waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int run_child(const char *path, int how, int code) {
  char number[16];
  snprintf(number, sizeof number, "%d", code);
  char *args[] = {(char *)path, "child", number, NULL};
  fflush(stdout);
  if (how == 2) {
    pid_t pid;
    return posix_spawn(&pid, path, NULL, NULL, args, environ) == 0 ? wait_for(pid) : -1;
  }
  pid_t pid = fork();
  if (pid == 0) {
    /* The variadic ones with more arguments than registers hold. */
    if (how == 0) execv(path, args);
    else if (how == 1) execve(path, args, environ);
    else if (how == 3) execl(path, path, "child", number, "a", "b", "c", "d", (char *)NULL);
    else if (how == 4) execlp(path, path, "child", number, (char *)NULL);
    else if (how == 6) fexecve(open(path, O_RDONLY | O_CLOEXEC), args, environ);
    else execle(path, path, "child", number, "a", "b", "c", (char *)NULL, environ);
    _exit(127);
  }
  return wait_for(pid);
}

int main(int argc, char **argv) {
  if (argc > 2 && strcmp(argv[1], "child") == 0) {
    printf("child %s, %d arguments\n", argv[2], argc);
    return atoi(argv[2]);
  }
  char link[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", link, sizeof link - 1);
  link[n < 0 ? 0 : n] = 0;
  char resolved[PATH_MAX];
  const char *real = realpath("/proc/self/exe", resolved);
  printf("readlink and realpath agree: %d\n", real && strcmp(real, link) == 0);
  if (argc > 1) printf("readlink is the expected path: %d\n", strcmp(link, argv[1]) == 0);
  const char *execfn = (const char *)getauxval(AT_EXECFN);
  printf("AT_EXECFN is the same file: %d\n", execfn && realpath(execfn, resolved) && strcmp(resolved, link) == 0);
  printf("execv(readlink path): %d\n", run_child(link, 0, 3));
  printf("execve(/proc/self/exe): %d\n", run_child("/proc/self/exe", 1, 4));
  printf("posix_spawn(/proc/self/exe): %d\n", run_child("/proc/self/exe", 2, 5));
  printf("execl(/proc/self/exe): %d\n", run_child("/proc/self/exe", 3, 6));
  printf("execlp(/proc/self/exe): %d\n", run_child("/proc/self/exe", 4, 7));
  printf("execle(/proc/self/exe): %d\n", run_child("/proc/self/exe", 5, 8));
  printf("fexecve(open(/proc/self/exe)): %d\n", run_child("/proc/self/exe", 6, 9));
  return 0;
}
