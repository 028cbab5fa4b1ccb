/* Only a weak reference names this member, so only --whole-archive loads it. */
#include <stdio.h>
__attribute__((constructor)) static void register_plugin(void) { puts("plugin.o constructor"); }
void optional_plugin(void) {}
