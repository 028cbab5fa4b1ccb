// A child the program forks dies of SIGSEGV; with an argument the program
// then crashes too. Natively the child's death prints nothing (a death
// test reads that stderr), while jitrun reports the program's own crash.
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile int *volatile target;

int main(int argc, char **argv) {
  (void)argv;
  pid_t pid = fork();
  if (pid == 0) {
    *target = 1;
    return 0;
  }
  int status;
  waitpid(pid, &status, 0);
  printf("child died from signal %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  fflush(stdout);
  if (argc > 1) *target = 1;
  return 0;
}
