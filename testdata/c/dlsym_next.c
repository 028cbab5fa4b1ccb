/* A wrapper reaches the function it wraps with dlsym(RTLD_NEXT, ...), as
 * interposition libraries and tracing code do; from the executable's code
 * that is the libraries' definition. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t counted;

static char *traced_strdup(const char *text) {
    char *(*real)(const char *) = (char *(*)(const char *))dlsym(RTLD_NEXT, "strdup");
    if (!real) {
        printf("no next strdup: %s\n", dlerror());
        exit(1);
    }
    counted += strlen(text);
    return real(text);
}

int main(void) {
    char *copy = traced_strdup("wrapped");
    void *next_malloc = dlsym(RTLD_NEXT, "malloc");
    void *versioned = dlvsym(RTLD_NEXT, "memcpy", "GLIBC_2.14");
    printf("%s, %zu bytes counted; next malloc found: %d; versioned memcpy found: %d\n", copy, counted,
           next_malloc != NULL, versioned != NULL);
    free(copy);
    return 0;
}
