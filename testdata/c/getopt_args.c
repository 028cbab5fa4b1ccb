// jitrun-test: args=-v -n 42 -ofile.txt -vv -q -- -notanoption rest
// getopt: optind, optarg, optopt and opterr are libc data objects, which
// -fno-pic code reaches through copy relocations. opterr is turned off
// because libc's messages would name argv[0].
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <getopt.h>

int main(int argc, char **argv) {
  int verbose = 0, number = 0;
  const char *output = "-";
  int opt;
  opterr = 0;
  while ((opt = getopt(argc, argv, "vn:o:")) != -1) {
    switch (opt) {
    case 'v': verbose++; break;
    case 'n': number = atoi(optarg); break;
    case 'o': output = optarg; break;
    case '?': printf("unknown option -%c (optind %d)\n", optopt, optind); break;
    default: printf("unexpected %d\n", opt); break;
    }
  }
  printf("verbose=%d number=%d output=%s optind=%d\n", verbose, number, output, optind);
  for (int i = optind; i < argc; i++) printf("operand: %s\n", argv[i]);

  /* Parse a second, private vector with getopt_long after resetting optind. */
  char *again[] = {"prog", "--name=widget", "--count", "3", "-v", "tail", NULL};
  static const struct option longopts[] = {
      {"name", required_argument, NULL, 'N'},
      {"count", required_argument, NULL, 'c'},
      {"verbose", no_argument, NULL, 'v'},
      {NULL, 0, NULL, 0},
  };
  optind = 1;
  int idx;
  while ((opt = getopt_long(6, again, "v", longopts, &idx)) != -1) {
    if (opt == 'v') printf("long: -v\n");
    else printf("long: --%s=%s\n", longopts[idx].name, optarg);
  }
  printf("long optind=%d operand=%s\n", optind, again[optind]);
  return verbose;
}
