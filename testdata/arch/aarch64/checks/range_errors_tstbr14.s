# A link that must FAIL: R_AARCH64_TSTBR14 (tbnz) to an absolute address
# 64 KiB below the image's start; a test-and-branch reaches +-32 KiB and
# cannot go through a stub.
#
# jitrun-args: --base 0x10000000 --define near_miss=0xfff0000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs near_miss=0xfff0000
# expect-error: range_errors_tstbr14.o: section .text+0x4: relocation R_AARCH64_TSTBR14 against `near_miss` out of range
#
# ld.lld: "relocation R_AARCH64_TSTBR14 out of range: -65540 is not in
# [-32768, 32767]"; llvm-jitlink: "... is out of range of
# TestAndBranch14PCRel fixup ..."; GNU ld: "relocation truncated to fit:
# R_AARCH64_TSTBR14 against symbol `near_miss'". No checks.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

        .globl  test_far
test_far:
        tbnz    w1, #3, near_miss
        .size   test_far, 4
        ret
