/* Built as a shared library: calls back into the program that loads it. */
extern int host_counter;
extern int host_twice(int);
__attribute__((weak)) extern int host_hidden(int);

int plugin_entry(void) {
  host_counter += 1;
  return host_twice(21) + (host_hidden ? 1000 : 0);
}
