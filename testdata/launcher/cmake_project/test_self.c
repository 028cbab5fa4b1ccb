#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* Runs itself again as a child through /proc/self/exe, as programs that
   re-execute themselves do; the child exits 7. */
int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "child") == 0) return 7;
  pid_t pid = fork();
  if (pid == 0) {
    execl("/proc/self/exe", argv[0], "child", (char *)0);
    _exit(99);
  }
  int status;
  waitpid(pid, &status, 0);
  printf("child exited %d\n", WEXITSTATUS(status));
  return WIFEXITED(status) && WEXITSTATUS(status) == 7 ? 0 : 1;
}
