# R_AARCH64_PLT32 (`.word f@PLT - .`, as in relative vtables) to an
# external function: S is the function's stub when the function lies
# beyond 32-bit reach of the image (ext_func is far above it), so the
# field holds stub - P. (PLT32 to a function of this object is in
# data_narrow.s.)
#
# jitrun-args: --base 0x10000000 --define ext_func=0x7f0000001000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects R_AARCH64_PLT32)

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

        .data
        .p2align 2
# jitlink-check: *{4}plt32_ext = (stub_addr(plt32_stub.o, ext_func) - plt32_ext)[31:0]
# jitlink-check: *{4}plt32_ext_addend = (stub_addr(plt32_stub.o, ext_func) - plt32_ext_addend + 8)[31:0]
# jitlink-check: *{8}got_addr(plt32_stub.o, ext_func) = ext_func
        .globl  plt32_ext, plt32_ext_addend
plt32_ext:
        .word   ext_func@PLT - .
        .size   plt32_ext, 4
plt32_ext_addend:
        .word   ext_func@PLT - . + 8
        .size   plt32_ext_addend, 4
