// zlib, libm, libdl and libpthread through -l, like a user's program.
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <zlib.h>

static void *worker(void *arg) {
    double *d = arg;
    *d = sqrt(*d) + cbrt(*d);
    return NULL;
}

int main(int argc, char **argv) {
    const char *text = argc > 1 ? argv[1] : "hello hello hello hello hello";
    uLong crc = crc32(0L, (const Bytef *)text, (uInt)strlen(text));
    unsigned char packed[256], unpacked[256];
    uLongf packed_len = sizeof packed, unpacked_len = sizeof unpacked;
    int ok = compress(packed, &packed_len, (const Bytef *)text, strlen(text)) == Z_OK &&
             uncompress(unpacked, &unpacked_len, packed, packed_len) == Z_OK && unpacked_len == strlen(text) &&
             memcmp(unpacked, text, unpacked_len) == 0;
    printf("crc %08lx round trip %s\n", crc, ok ? "ok" : "FAILED");

    double v = argc * 16.0;
    pthread_t thread;
    pthread_create(&thread, NULL, worker, &v);
    pthread_join(thread, NULL);
    printf("math %.6f %.6f\n", v, cos((double)argc));

    void *self = dlopen(NULL, RTLD_NOW);
    printf("dlsym %s\n", self && dlsym(self, "printf") ? "found printf" : "FAILED");
    /* libm.so names libmvec AS_NEEDED: nothing here uses it, so natively it
       is not loaded, and under jitrun neither. */
    printf("libmvec %s\n", dlopen("libmvec.so.1", RTLD_NOW | RTLD_NOLOAD) ? "loaded" : "not loaded");
    return 0;
}
