/* A native process starts with one thread: the program must not see
   jitrun's (the kernel refuses unshare(CLONE_NEWUSER) to a process with
   more, and gtest's death tests warn about them), and glibc must say so
   too: __libc_single_threaded decides fork's work, malloc's locking and
   libstdc++'s atomic reference counts. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/single_threaded.h>

static void *nothing(void *arg) { return arg; }

int main(void) {
  printf("single-threaded at start: %d\n", __libc_single_threaded);
  int threads = 0;
  DIR *tasks = opendir("/proc/self/task");
  for (struct dirent *e; tasks && (e = readdir(tasks));)
    threads += e->d_name[0] != '.';
  if (tasks) closedir(tasks);
  printf("threads: %d\n", threads);
  /* Allowed or not (a container may refuse it natively too), the answer
     must be the native one; with two threads it would be EINVAL. */
  int r = unshare(CLONE_NEWUSER);
  printf("unshare(CLONE_NEWUSER): %s\n", r == 0 ? "ok" : strerror(errno));
  pthread_t t;
  if (pthread_create(&t, NULL, nothing, NULL) == 0) pthread_join(t, NULL);
  printf("single-threaded after a thread: %d\n", __libc_single_threaded);
  return 0;
}
