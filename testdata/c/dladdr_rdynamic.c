// jitrun-test: libs=-rdynamic
/* dladdr_names.c with the program's global symbols exported (cc
   -rdynamic, jitrun --export-dynamic): now they have names. */
#include "dladdr_names.c"
