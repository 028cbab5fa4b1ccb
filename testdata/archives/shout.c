#include <ctype.h>
#include <stdio.h>
void shout(const char *what) {
    for (const char *p = what; *p; p++)
        putchar(toupper((unsigned char)*p));
    putchar('\n');
}
