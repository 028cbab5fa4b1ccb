# A link that must FAIL: R_AARCH64_CONDBR19 (cbz) to an absolute address
# 256 MiB above the image; a conditional branch reaches +-1 MiB, and a
# linker may not route it through a stub (only b/bl relocations may use
# veneers), so the only correct outcome is an error naming the relocation.
#
# jitrun-args: --base 0x10000000 --define far_target=0x20000000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs far_target=0x20000000
# expect-error: range_errors.o: section .text+0x4: relocation R_AARCH64_CONDBR19 against `far_target` out of range
#
# jitrun's error is one line naming the object, section, offset,
# relocation and symbol, then the value and the range ("... out of range:
# V is 0xffffffc not in [-0x100000, 0x100000)"). "out of range" is also
# in llvm-jitlink's ("... is out of range of CondBranch19PCRel fixup
# at ...") and ld.lld's ("relocation R_AARCH64_CONDBR19 out of range:
# 268435452 is not in [-1048576, 1048575]"); GNU ld says "relocation
# truncated to fit: R_AARCH64_CONDBR19 against symbol `far_target'".
# There are no checks: nothing is linked.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

        .globl  cond_far
cond_far:
        cbz     x0, far_target
        .size   cond_far, 4
        ret
