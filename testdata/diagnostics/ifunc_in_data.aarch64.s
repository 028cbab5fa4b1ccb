# An IFUNC symbol defined in .data: its "resolver" is no code, and
# calling it would crash jitrun; the link must refuse it.
    .data
    .globl foo
    .type foo, %gnu_indirect_function
foo:
    .quad 0
    .text
    .globl main
main:
    stp x29, x30, [sp, #-16]!
    bl foo
    mov w0, #0
    ldp x29, x30, [sp], #16
    ret
