/* A frame-pointer walk from main stops below main, as natively: what
 * ASan's fast unwinder (run on every malloc) and profilers do. The walk
 * follows saved %rbp values while they point higher into the stack; the
 * start-up code under main must leave none that does (`_start` zeroes
 * %rbp), or the walk reads garbage frames. */
#include <stdint.h>
#include <stdio.h>

int main(void) {
    uintptr_t *frame = __builtin_frame_address(0);
    uintptr_t stack_top = (uintptr_t)frame + (1u << 20);
    int frames_below_main = 0;
    for (uintptr_t *next = (uintptr_t *)frame[0];
         (uintptr_t)next > (uintptr_t)frame && (uintptr_t)next < stack_top && ((uintptr_t)next & 7) == 0;
         frame = next, next = (uintptr_t *)frame[0])
        frames_below_main++;
    printf("frames below main: %d\n", frames_below_main);
    return 0;
}
