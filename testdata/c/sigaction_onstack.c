// A handler installed with SA_ONSTACK runs on an alternate stack only once
// the program has one: before, on the thread's own stack. sigaction reports
// the flags as the program set them.
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *main_frame;
static char *alt_base;
static size_t alt_size;
static volatile int where; // 1: near main's frame, 2: on our alternate stack, 3: elsewhere

static void on_usr1(int sig) {
  char here;
  (void)sig;
  intptr_t distance = main_frame - &here;
  if (alt_base && &here >= alt_base && &here < alt_base + alt_size)
    where = 2;
  else if (distance > 0 && distance < (1 << 20))
    where = 1;
  else
    where = 3;
}

int main(void) {
  char frame;
  main_frame = &frame;
  struct sigaction sa, old;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_usr1;
  sa.sa_flags = SA_ONSTACK | SA_RESTART;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGUSR1, &sa, NULL) != 0) return 1;
  if (sigaction(SIGUSR1, NULL, &old) != 0) return 1;
  printf("reported: onstack %d restart %d\n", !!(old.sa_flags & SA_ONSTACK), !!(old.sa_flags & SA_RESTART));
  raise(SIGUSR1);
  printf("no alternate stack: handler ran %s\n", where == 1 ? "on the thread's stack" : where == 2 ? "on ours" : "elsewhere");

  alt_size = 1 << 16;
  alt_base = malloc(alt_size);
  stack_t ss = {.ss_sp = alt_base, .ss_size = alt_size, .ss_flags = 0};
  if (sigaltstack(&ss, NULL) != 0) return 1;
  where = 0;
  raise(SIGUSR1);
  printf("own alternate stack: handler ran %s\n", where == 1 ? "on the thread's stack" : where == 2 ? "on it" : "elsewhere");

  // Installed again while the program's stack is in place: used directly.
  sa.sa_flags = SA_ONSTACK;
  sigaction(SIGUSR2, &sa, NULL);
  where = 0;
  raise(SIGUSR2);
  printf("second handler: %s\n", where == 2 ? "on the alternate stack" : "not on it");
  if (sigaction(SIGUSR2, NULL, &old) != 0) return 1;
  printf("reported: onstack %d\n", !!(old.sa_flags & SA_ONSTACK));
  return 0;
}
