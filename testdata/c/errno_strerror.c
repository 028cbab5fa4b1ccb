// jitrun-test: libs=-lm
// errno (a thread-local in libc, reached through __errno_location) and
// strerror/perror for failures that do not depend on the machine, and
// errno's value when the program starts.
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* errno as the program finds it: 0 before constructors run. */
static int errno_at_start = -1;
__attribute__((constructor)) static void record_errno(void) { errno_at_start = errno; }

int main(void) {
  printf("errno when constructors start: %d\n", errno_at_start);
  errno = 0;
  FILE *f = fopen("/nonexistent/jitrun/file", "r");
  printf("fopen: %s errno=%d (%s) ENOENT? %d\n", f ? "opened" : "NULL", errno, strerror(errno), errno == ENOENT);
  errno = 0;
  int fd = open("/", O_WRONLY);
  printf("open dir for writing: fd=%d EISDIR? %d\n", fd, errno == EISDIR);
  errno = 0;
  long v = strtol("99999999999999999999999", NULL, 10);
  printf("strtol overflow: %ld ERANGE? %d\n", v, errno == ERANGE);
  errno = 0;
  ssize_t n = read(-1, NULL, 0);
  printf("read(-1): %zd EBADF? %d: %s\n", n, errno == EBADF, strerror(errno));
  for (int e = 1; e <= 5; e++) printf("strerror(%d)=%s\n", e, strerror(e));
  printf("unknown: %s\n", strerror(12345));
  errno = EACCES;
  perror("perror prefix");
  errno = 0;
  perror(NULL);
  char buf[64];
  int rc = strerror_r(ENOMEM, buf, sizeof buf);
  (void)rc;
  printf("errno after success stays 0: %d\n", errno);
  errno = 0;
  double s = sqrt(-1.0);
  printf("sqrt(-1) isnan=%d\n", s != s);
  return errno == 0 ? 0 : 3;
}
