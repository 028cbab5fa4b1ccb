/* The program forks; the child crashes. Natively its death prints
   nothing, and under jitrun neither: only the process jitrun runs the
   program in reports its crashes. */
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

__attribute__((noinline)) int crash_in_child(volatile int *p) {
    *p = 1;
    return 0;
}

int main(void) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0)
        return crash_in_child(0);
    int status = 0;
    waitpid(pid, &status, 0);
    printf("child signaled %d\n", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
    return 0;
}
