/* A program whose behaviour a batch selects by writing `mutant_id` before
 * constructors run (tests/reuse.rs). `runs` counts runs in this process, so
 * in-process repeats (state persists) and isolated ones (fresh each time)
 * can be told apart. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int mutant_id;
char label[16] = "none";
const int answer = 42;
static int runs;
static int seen_by_constructor = -1;

__attribute__((constructor)) static void init(void) { seen_by_constructor = mutant_id; }

int main(int argc, char **argv) {
    runs++;
    switch (mutant_id) {
    case 1: /* crash */
        *(volatile int *)0 = 1;
        return 0;
    case 2:
        abort();
    case 3: /* hang */
        for (;;)
            pause();
    case 4:
        printf("failing\n");
        return 3;
    case 5: /* large output: 3 MiB on stdout, a little on stderr */
        for (int i = 0; i < 3 * 1024; i++) {
            static char block[1024];
            memset(block, 'x', sizeof block);
            fwrite(block, 1, sizeof block, stdout);
        }
        fputs("done\n", stderr);
        return 0;
    case 6: { /* echo stdin, show an environment variable and the arguments */
        char buf[256];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, stdin)) > 0)
            fwrite(buf, 1, n, stdout);
        printf("|K=%s|", getenv("K") ? getenv("K") : "(unset)");
        for (int i = 1; i < argc; i++)
            printf("%s|", argv[i]);
        printf("\n");
        return 0;
    }
    case 7: /* hang with a background child in the same process group */
        if (fork() == 0) {
            fprintf(stderr, "background %d\n", (int)getpid());
            for (;;)
                pause();
        }
        for (;;)
            pause();
    case 8: /* exit() from deep inside, after output on both streams */
        fprintf(stderr, "to stderr\n");
        printf("to stdout\n");
        exit(9);
    }
    printf("mutant %d label %s constructor saw %d run %d\n", mutant_id, label, seen_by_constructor, runs);
    return 0;
}
