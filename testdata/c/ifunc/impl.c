typedef int (*op_fn)(int);

static int pick_plain(int x) { return x + 1; }
static int pick_doubled(int x) { return 2 * x; }

#ifdef __code_model_large__
/* ld cannot link R_X86_64_PLTOFF64 against an IFUNC: plain functions. */
int pick(int x) { return pick_doubled(x); }
int scale(int x) { return 10 * x; }
#else
/* Runs before main and before constructors: chooses once. */
#if defined(__aarch64__)
/* glibc passes aarch64 resolvers the CPU's features (AT_HWCAP), with bit
   62 set when a second argument describes more of them. */
#include <asm/hwcap.h>
#include <stdint.h>
static op_fn resolve_pick(uint64_t hwcap) { return hwcap & HWCAP_ASIMD ? pick_doubled : pick_plain; }
#else
static op_fn resolve_pick(void) {
  __builtin_cpu_init();
  return __builtin_cpu_supports("sse2") ? pick_doubled : pick_plain;
}
#endif
int pick(int x) __attribute__((ifunc("resolve_pick")));

#if defined(__clang__) || defined(__aarch64__)
/* clang 14 names a target_clones IFUNC `scale.ifunc`, which other
   translation units cannot reach, and GCC 12 has no target_clones on
   aarch64: a resolver by hand instead. */
static int scale_plain(int x) { return 10 * x; }
static op_fn resolve_scale(void) { return scale_plain; }
int scale(int x) __attribute__((ifunc("resolve_scale")));
#else
/* GCC emits the clones, a resolver and an IFUNC symbol `scale`; the
   resolver reads libgcc.a's __cpu_model, which cc links and so does jitrun. */
__attribute__((target_clones("avx2", "default"))) int scale(int x) { return 10 * x; }
#endif
#endif

op_fn table_in_other[] = {pick, scale};
op_fn address_in_other(void) { return pick; }
int calls_in_other(int x) { return pick(x) + scale(x); }
