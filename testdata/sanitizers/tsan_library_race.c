/* A race through a library built without -fsanitize=thread: its memcpy
 * goes through the runtime's interceptor, which reports the race (66). */
#include <pthread.h>
#include <stdio.h>

void copy_bytes(char *to, const char *from, int n); /* in libcopy.so */

static char buffer[64], source[64];

static void *fill(void *arg) {
    for (int i = 0; i < 64; i++)
        buffer[i] = (char)i;
    return arg;
}

int main(void) {
    pthread_t writer;
    pthread_create(&writer, NULL, fill, NULL);
    copy_bytes(buffer, source, 64);
    pthread_join(writer, NULL);
    printf("done\n");
    return 0;
}
