/* A process-directed signal (SIGALRM from a timer) must wake the program's
   own thread: jitrun's helper thread blocks every signal. */
#include <signal.h>
#include <stdio.h>
#include <sys/time.h>
#include <unistd.h>

static volatile sig_atomic_t ticks;

static void on_alarm(int sig) {
    (void)sig;
    ticks++;
}

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = on_alarm;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval timer = {{0, 0}, {0, 20000}};
    for (int round = 0; round < 3; round++) {
        setitimer(ITIMER_REAL, &timer, NULL);
        pause();
        printf("round %d: woken, ticks=%d\n", round, (int)ticks);
    }
    return 0;
}
