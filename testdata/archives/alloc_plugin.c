/* A plugin that hands back memory it allocated: with a program that
   replaces malloc, natively the plugin's malloc is the program's too. */
#include <stdlib.h>
#include <string.h>

char *plugin_copy(const char *text) {
  char *copy = malloc(strlen(text) + 1);
  if (copy) strcpy(copy, text);
  return copy;
}
