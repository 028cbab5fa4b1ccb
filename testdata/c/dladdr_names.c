/* dladdr, dladdr1, backtrace_symbols and backtrace_symbols_fd on the
   program's own addresses (crash loggers such as Redis's, programs that
   look for their own path). Natively the executable is one of the
   loader's objects; under jitrun the image must be too. The file name is
   argv[0]; names exist only for exported symbols (-rdynamic, see
   dladdr_rdynamic.c). Addresses and image offsets differ between the two
   runs, so they are masked; offsets from a symbol are the same code's. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int global_data = 5;
static const char *program;
static volatile int sink;

/* PROG(name+0x1f) [ADDR], or PROG(+OFF) [ADDR] without a name. */
static void show(const char *how, const char *line) {
  size_t n = strlen(program);
  printf("%s: ", how);
  if (strncmp(line, program, n) == 0) {
    printf("PROG");
    line += n;
  } else {
    printf("%.*s", (int)strcspn(line, "(["), line);
    line += strcspn(line, "([");
  }
  const char *close = *line == '(' ? strchr(line, ')') : NULL;
  if (close && line[1] != '+' && line[1] != '-' && line[1] != ')')
    printf("(%.*s)", (int)(close - line - 1), line + 1);
  else
    printf("(+OFF)");
  printf(" [ADDR]\n");
}

static void show_fd_lines(int fd) {
  char text[4096];
  ssize_t n = read(fd, text, sizeof text - 1);
  text[n > 0 ? n : 0] = 0;
  for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
    show("fd", line);
}

static void on_usr1(int sig) {
  /* backtrace_symbols_fd is the one meant for signal handlers. */
  void *frames[2];
  (void)sig;
  int n = backtrace(frames, 2);
  int pipes[2];
  if (n < 1 || pipe(pipes) != 0) return;
  backtrace_symbols_fd(frames, 1, pipes[1]);
  close(pipes[1]);
  show_fd_lines(pipes[0]);
  close(pipes[0]);
}

__attribute__((noinline, noipa)) static void inner(void) {
  void *frames[8];
  int n = backtrace(frames, 8);
  if (n < 3) {
    printf("backtrace: only %d frames\n", n);
    return;
  }
  char **lines = backtrace_symbols(frames, 3);
  for (int i = 0; i < 3; i++) show("symbols", lines[i]);
  free(lines);
  fflush(stdout);
  int pipes[2];
  if (pipe(pipes) != 0) return;
  backtrace_symbols_fd(frames, 3, pipes[1]);
  close(pipes[1]);
  show_fd_lines(pipes[0]);
  close(pipes[0]);
  sink++;
}

__attribute__((noinline, noipa)) void outer(void) {
  inner();
  sink++;
}

int main(int argc, char **argv) {
  (void)argc;
  program = argv[0];
  Dl_info info;
  int found = dladdr((void *)outer, &info);
  printf("dladdr(outer): %d, file is argv[0]: %d, base set: %d, name %s, address is outer: %d\n", found,
         found && info.dli_fname == argv[0], found && info.dli_fbase != NULL,
         found && info.dli_sname ? info.dli_sname : "(none)", found && info.dli_saddr == (void *)outer);
  found = dladdr((char *)&global_data + 2, &info);
  printf("dladdr(&global_data + 2): %d, name %s\n", found, found && info.dli_sname ? info.dli_sname : "(none)");
  found = dladdr((void *)16, &info);
  printf("dladdr(16): %d\n", found);
  const ElfW(Sym) *symbol = NULL;
  found = dladdr1((void *)main, &info, (void **)&symbol, RTLD_DL_SYMENT);
  printf("dladdr1(main): %d, symbol %s, size matches: %d, function: %d\n", found, symbol ? "found" : "none",
         symbol ? symbol->st_size > 0 : 0, symbol ? ELF64_ST_TYPE(symbol->st_info) == STT_FUNC : 0);
  outer();
  signal(SIGUSR1, on_usr1);
  raise(SIGUSR1);
  printf("done\n");
  return 0;
}
