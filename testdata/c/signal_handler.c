// Signal handlers: raise(SIGUSR1) with signal(), sigaction with SA_SIGINFO
// for SIGUSR2, a blocked signal delivered on unblock, and an alarm-free
// SIGFPE-free path; the handler writes only to volatile sig_atomic_t.
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t usr1_count, usr2_signo, usr2_code_is_user;

static void on_usr1(int sig) {
  if (sig == SIGUSR1) usr1_count++;
}

static void on_usr2(int sig, siginfo_t *info, void *context) {
  (void)context;
  usr2_signo = sig;
  usr2_code_is_user = info->si_code == SI_TKILL || info->si_code == SI_USER;
}

int main(void) {
  if (signal(SIGUSR1, on_usr1) == SIG_ERR) return 1;
  raise(SIGUSR1);
  raise(SIGUSR1);
  printf("usr1_count=%d\n", (int)usr1_count);

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_usr2;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGUSR2, &sa, NULL);
  raise(SIGUSR2);
  printf("usr2 signo=%d user=%d\n", (int)usr2_signo, (int)usr2_code_is_user);

  sigset_t block, old;
  sigemptyset(&block);
  sigaddset(&block, SIGUSR1);
  sigprocmask(SIG_BLOCK, &block, &old);
  raise(SIGUSR1);
  sigset_t pending;
  sigpending(&pending);
  printf("blocked: count=%d pending=%d\n", (int)usr1_count, sigismember(&pending, SIGUSR1));
  sigprocmask(SIG_SETMASK, &old, NULL);
  printf("unblocked: count=%d\n", (int)usr1_count);

  signal(SIGUSR1, SIG_IGN);
  raise(SIGUSR1);
  printf("ignored: count=%d\n", (int)usr1_count);
  printf("strsignal: %s / %s\n", strsignal(SIGUSR1), strsignal(SIGSEGV));
  return 0;
}
