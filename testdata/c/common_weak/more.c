/* A third object with its own tentative definition and the strong
 * definition that beats lib.c's weak one. */
int shared_counter;
int weak_with_default = 22;
