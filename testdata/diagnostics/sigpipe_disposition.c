/* Says whether SIGPIPE is ignored, as inherited across exec. */
#include <signal.h>
#include <stdio.h>

int main(void) {
    struct sigaction current;
    sigaction(SIGPIPE, NULL, &current);
    printf("SIGPIPE %s\n", current.sa_handler == SIG_IGN ? "ignored" : "default");
    return 0;
}
