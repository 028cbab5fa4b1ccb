/* Times commands for benches/compare.py, which compiles this at benchmark time.
 *
 * Why a C helper: a process started from Python inherits Python's resident
 * set as its peak RSS (ru_maxrss counts the parent's pages up to exec), and
 * Python's own spawn overhead blurs a 1 ms hello world. This runner is tiny,
 * spawns with posix_spawn, and measures each step with a monotonic clock and
 * wait4's per-child ru_maxrss.
 *
 * Input on stdin: the number of contenders; for each, its number of steps;
 * for each step, argc and then argc lines of arguments. Then runs, warmups
 * and a random seed. The contenders run interleaved in a new random order
 * each round; stdout and stderr of the commands go to /dev/null.
 *
 * Output: one line per timed run: "contender nanoseconds maxrss_kib", where
 * the time covers all steps and the RSS is the largest of its steps. A step
 * that fails prints "contender fail status" and stops the runner with 1.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct step {
    char **argv;
};

struct contender {
    int steps;
    struct step *step;
};

static char *read_line(void) {
    char *line = NULL;
    size_t cap = 0;
    ssize_t n = getline(&line, &cap, stdin);
    if (n < 0) {
        fprintf(stderr, "runner: truncated input\n");
        exit(2);
    }
    if (n > 0 && line[n - 1] == '\n')
        line[n - 1] = 0;
    return line;
}

static long read_number(void) {
    char *line = read_line();
    long v = strtol(line, NULL, 10);
    free(line);
    return v;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Runs every step of contender c; returns 0 and fills time and rss, or the
 * failing status. */
static int run(struct contender *c, posix_spawn_file_actions_t *fa, double *ns, long *rss_kib) {
    double start = now_ns();
    long peak = 0;
    for (int s = 0; s < c->steps; s++) {
        pid_t pid;
        char **argv = c->step[s].argv;
        if (posix_spawnp(&pid, argv[0], fa, NULL, argv, environ) != 0)
            return 127;
        int status;
        struct rusage usage;
        if (wait4(pid, &status, 0, &usage) < 0)
            return 126;
        if (usage.ru_maxrss > peak)
            peak = usage.ru_maxrss;
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    *ns = now_ns() - start;
    *rss_kib = peak;
    return 0;
}

int main(void) {
    int n = (int)read_number();
    struct contender *cs = calloc(n, sizeof *cs);
    for (int i = 0; i < n; i++) {
        cs[i].steps = (int)read_number();
        cs[i].step = calloc(cs[i].steps, sizeof *cs[i].step);
        for (int s = 0; s < cs[i].steps; s++) {
            int argc = (int)read_number();
            char **argv = calloc(argc + 1, sizeof *argv);
            for (int a = 0; a < argc; a++)
                argv[a] = read_line();
            cs[i].step[s].argv = argv;
        }
    }
    int runs = (int)read_number();
    int warmups = (int)read_number();
    srand((unsigned)read_number());

    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);

    int *order = calloc(n, sizeof *order);
    for (int round = 0; round < warmups + runs; round++) {
        for (int i = 0; i < n; i++)
            order[i] = i;
        for (int i = n - 1; i > 0; i--) {
            int j = rand() % (i + 1);
            int t = order[i];
            order[i] = order[j];
            order[j] = t;
        }
        for (int k = 0; k < n; k++) {
            int i = order[k];
            double ns;
            long rss;
            int status = run(&cs[i], &fa, &ns, &rss);
            if (status != 0) {
                printf("%d fail %d\n", i, status);
                return 1;
            }
            if (round >= warmups)
                printf("%d %.0f %ld\n", i, ns, rss);
        }
    }
    return 0;
}
