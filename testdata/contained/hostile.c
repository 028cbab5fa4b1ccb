/* Hostile programs for contained runs: `mode` (set by jitrun, or the
 * HOSTILE_MODE variable for a native build) picks what it does; argv[1]
 * is a path or a port where a mode needs one. Each prints what happened
 * and exits 0 when the hostile act succeeded, 3 when it was refused. */
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

int mode = -1;

static void *idle_thread(void *arg) {
    (void)arg;
    for (;;) pause();
    return 0;
}

/* CPU time used by this process so far, in milliseconds. */
static long cpu_ms(void) {
    struct rusage usage;
    getrusage(RUSAGE_SELF, &usage);
    return usage.ru_utime.tv_sec * 1000 + usage.ru_utime.tv_usec / 1000 + usage.ru_stime.tv_sec * 1000 +
           usage.ru_stime.tv_usec / 1000;
}

int main(int argc, char **argv) {
    if (mode < 0 && getenv("HOSTILE_MODE")) mode = atoi(getenv("HOSTILE_MODE"));
    const char *arg = argc > 1 ? argv[1] : "";
    switch (mode) {
    case 0:
        puts("ok");
        return 0;
    case 1: /* allocate and touch memory without end */
        for (;;) {
            char *p = malloc(1 << 20);
            if (!p) {
                puts("malloc failed");
                return 3;
            }
            memset(p, 1, 1 << 20);
        }
    case 2: /* fork bomb: every child waits, the parent keeps forking */
        for (;;) {
            pid_t pid = fork();
            if (pid == 0) {
                for (;;) pause();
            }
        }
    case 3: /* busy loop */
        for (volatile unsigned long i = 0;; i++) {
        }
    case 4: { /* write a file past any size limit */
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            perror("open");
            return 4;
        }
        static char chunk[1 << 16];
        for (int i = 0; i < 1600; i++) /* 100 MiB */
            if (write(fd, chunk, sizeof chunk) < 0) {
                perror("write");
                return 3;
            }
        puts("wrote 100 MiB");
        return 0;
    }
    case 5: { /* create a file at argv[1] */
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            printf("create refused: %s\n", strerror(errno));
            return 3;
        }
        write(fd, "owned\n", 6);
        close(fd);
        puts("created");
        return 0;
    }
    case 6: { /* connect to 127.0.0.1:argv[1] */
        int s = socket(AF_INET, SOCK_STREAM, 0);
        if (s < 0) {
            printf("socket refused: %s\n", strerror(errno));
            return 3;
        }
        struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(atoi(arg)),
                                   .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        if (connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) {
            printf("connect refused: %s\n", strerror(errno));
            return 3;
        }
        write(s, "hello\n", 6);
        puts("connected");
        return 0;
    }
    case 7: /* ignore SIGTERM, then sleep forever */
        signal(SIGTERM, SIG_IGN);
        puts("ignoring SIGTERM");
        fflush(stdout);
        for (;;) pause();
    case 8: { /* write a file in $TMPDIR */
        char path[4096];
        snprintf(path, sizeof path, "%s/scratch", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) {
            printf("temp refused: %s\n", strerror(errno));
            return 3;
        }
        close(fd);
        printf("temp ok %s\n", getenv("TMPDIR") ? getenv("TMPDIR") : "(none)");
        return 0;
    }
    case 9: /* signal the parent (jitrun) */
        if (kill(getppid(), 0) != 0) {
            printf("signal refused: %s\n", strerror(errno));
            return 3;
        }
        puts("could signal the parent");
        return 0;
    case 10: /* ptrace the parent */
        if (ptrace(PTRACE_ATTACH, getppid(), 0, 0) != 0) {
            printf("ptrace refused: %s\n", strerror(errno));
            return 3;
        }
        ptrace(PTRACE_DETACH, getppid(), 0, 0);
        puts("attached");
        return 0;
    case 11: /* threads without end */
        for (;;) {
            pthread_t thread;
            int error = pthread_create(&thread, 0, idle_thread, 0);
            if (error) {
                printf("pthread_create: %s\n", strerror(error));
                fflush(stdout);
                for (;;) pause();
            }
        }
    case 12: { /* measured work: touch argv[1] MiB, then spin ~1 s of CPU */
        long mib = atol(arg);
        char *p = malloc(mib << 20);
        for (long i = 0; i < mib << 20; i += 4096) p[i] = 1;
        while (cpu_ms() < 1000) {
        }
        printf("%d\n", p[4096]);
        return 0;
    }
    case 13: /* a child that leaves the process group and lives on */
        if (fork() == 0) {
            setsid();
            printf("escaped %d\n", getpid());
            fflush(stdout);
            for (;;) pause();
        }
        sleep(1);
        return 0;
    default:
        printf("unknown mode %d\n", mode);
        return 2;
    }
}
