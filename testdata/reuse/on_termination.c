/* A program that cleans up when asked to stop (SIGTERM or SIGINT): it
   writes its pid to argv[1], waits, and on the signal rewrites argv[1].
   With argv[2] = "ignore" it ignores both signals instead. */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static volatile sig_atomic_t stop;

static void on_signal(int sig) { stop = sig; }

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int ignore = argc > 2 && strcmp(argv[2], "ignore") == 0;
  signal(SIGTERM, ignore ? SIG_IGN : on_signal);
  signal(SIGINT, ignore ? SIG_IGN : on_signal);
  FILE *f = fopen(argv[1], "w");
  if (!f) return 2;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  while (!stop) pause();
  f = fopen(argv[1], "a");
  fprintf(f, "cleaned up after signal %d\n", (int)stop);
  fclose(f);
  return 3;
}
