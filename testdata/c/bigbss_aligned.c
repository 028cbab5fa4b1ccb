// A 64 MiB .bss array, page-aligned data and rodata, an aligned bss
// object, and large initialized data: alignment and zero-fill must hold.
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define BIG (64u << 20)
static unsigned char big[BIG];
unsigned char page_bss[8192] __attribute__((aligned(4096)));
int page_data[1024] __attribute__((aligned(4096))) = {1, 2, 3};
static const char page_rodata[100] __attribute__((aligned(4096))) = "read-only and page aligned";
static double cache_line[8] __attribute__((aligned(64))) = {1.5, 2.5};
static long initialized[20000] = {[0] = 7, [19999] = 9};
char small_after_big = 'k';

static int aligned(const void *p, uintptr_t a) { return ((uintptr_t)p & (a - 1)) == 0; }

int main(void) {
  unsigned long sum = 0;
  for (unsigned i = 0; i < BIG; i += 4096) sum += big[i];
  printf("big starts zeroed: %lu\n", sum);
  for (unsigned i = 0; i < BIG; i += 1000) big[i] = (unsigned char)(i / 1000);
  sum = 0;
  for (unsigned i = 0; i < BIG; i += 1000) sum += big[i];
  printf("big after writes: %lu, last byte %u\n", sum, big[BIG - 1]);
  memset(big + BIG - 4096, 0xab, 4096);
  printf("tail byte %#x\n", big[BIG - 1]);

  printf("page_bss aligned %d, zero %d\n", aligned(page_bss, 4096), page_bss[0] == 0 && page_bss[8191] == 0);
  printf("page_data aligned %d, values %d %d %d %d\n", aligned(page_data, 4096), page_data[0], page_data[1],
         page_data[2], page_data[1023]);
  printf("page_rodata aligned %d: %s\n", aligned(page_rodata, 4096), page_rodata);
  printf("cache_line aligned %d: %.1f %.1f %.1f\n", aligned(cache_line, 64), cache_line[0], cache_line[1],
         cache_line[2]);
  printf("initialized %ld %ld %ld, small %c\n", initialized[0], initialized[10000], initialized[19999],
         small_after_big);
  page_data[1023] = 5;
  page_bss[4095] = 1;
  printf("writes ok: %d %d\n", page_data[1023], page_bss[4095]);
  return 0;
}
