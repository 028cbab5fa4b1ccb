#include <stddef.h>
#include <stdio.h>

int __real_compute(int x);
void *__real_malloc(size_t size);
int __real_main(int argc, char **argv);

static int mallocs;

int __wrap_compute(int x) { return __real_compute(x) + 1000; }

void *__wrap_malloc(size_t size) {
    mallocs++;
    return __real_malloc(size);
}

int wrapped_mallocs(void) { return mallocs; }

int __wrap_main(int argc, char **argv) {
    printf("before main\n");
    int status = __real_main(argc, argv);
    printf("main returned %d\n", status);
    return status + 1;
}
