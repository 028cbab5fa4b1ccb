/* A native process starts with one thread: the program must not see
   jitrun's (the kernel refuses unshare(CLONE_NEWUSER) to a process with
   more, and gtest's death tests warn about them). */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

int main(void) {
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
  return 0;
}
