# Narrow and signed data relocations that llvm-jitlink 19 rejects:
# R_AARCH64_ABS16 (unsigned and negative values), R_AARCH64_ABS32 with a
# negative value, R_AARCH64_PREL16, and R_AARCH64_PLT32 to a function of
# this object (direct; PLT32 through a stub is in plt32_stub.s).
#
# jitrun-args: --base 0x10000000 --define ext_abs16=0xbeef --define ext_neg16=0xffffffffffff8001 --define ext_neg32=0xffffffff80000010
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects R_AARCH64_ABS16, PREL16 and PLT32, and negative ABS32 values)
#
# The ELF ABI's ranges: ABS16 and PREL16 take -2^15 <= X < 2^16, ABS32
# -2^31 <= X < 2^32; the field holds the low bits of X.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

        .globl  local_func
        .p2align 2
        .type   local_func,@function
local_func:
        ret
        .size   local_func, .-local_func

        .data
        .p2align 3
# R_AARCH64_ABS16, unsigned and negative.
# jitlink-check: *{2}abs16_pos = ext_abs16
# jitlink-check: *{2}abs16_pos = 0xbeef
# jitlink-check: *{2}abs16_neg = ext_neg16[15:0]
# jitlink-check: *{2}abs16_neg = 0x8001
# jitlink-check: *{2}abs16_addend = (ext_abs16 + 0x10)[15:0]
# The halfword after each field is untouched.
# jitlink-check: *{2}abs16_guard = 0x5a5a
        .globl  abs16_pos, abs16_neg, abs16_addend, abs16_guard
abs16_pos:
        .hword  ext_abs16
        .size   abs16_pos, 2
abs16_neg:
        .hword  ext_neg16
        .size   abs16_neg, 2
abs16_addend:
        .hword  ext_abs16 + 0x10
        .size   abs16_addend, 2
abs16_guard:
        .hword  0x5a5a
        .size   abs16_guard, 2

# R_AARCH64_ABS32 with a negative value (-0x7ffffff0).
# jitlink-check: *{4}abs32_neg = ext_neg32[31:0]
# jitlink-check: *{4}abs32_neg = 0x80000010
        .globl  abs32_neg
        .p2align 2
abs32_neg:
        .word   ext_neg32
        .size   abs32_neg, 4

# R_AARCH64_PREL16 to a writable section of this object laid out next to
# .data (both tiny, so well within +-32 KiB), forward and with an addend.
# jitlink-check: *{2}prel16_fwd = (near_target - prel16_fwd)[15:0]
# jitlink-check: *{2}prel16_addend = (near_target - prel16_addend + 6)[15:0]
        .globl  prel16_fwd, prel16_addend
        .p2align 1
prel16_fwd:
        .hword  near_target - .
        .size   prel16_fwd, 2
prel16_addend:
        .hword  near_target + 6 - .
        .size   prel16_addend, 2

# R_AARCH64_PLT32 (`.word f@PLT - .`) to a function of this object: the
# function itself, S+A-P.
# jitlink-check: *{4}plt32_local = (local_func - plt32_local)[31:0]
        .globl  plt32_local
        .p2align 2
plt32_local:
        .word   local_func@PLT - .
        .size   plt32_local, 4

        .section .data.near,"aw",@progbits
        .p2align 3
        .globl  near_target
near_target:
        .quad   0
        .size   near_target, 8
