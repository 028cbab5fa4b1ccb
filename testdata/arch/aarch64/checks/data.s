# Data relocations that llvm-jitlink 19 also links: R_AARCH64_ABS64 and
# R_AARCH64_ABS32 (unsigned values), R_AARCH64_PREL64 and R_AARCH64_PREL32,
# to this object's code and data and to absolute symbols from the command
# line, with positive and negative addends and results. The 16-bit, the
# negative 32-bit and the PLT32 cases are in data_narrow.s.
#
# jitrun-args: --base 0x10000000 --define ext_func=0x7f0000001000 --define ext_abs32=0x87654321 --define ext_near=0x12345678 --define ext_low=0x4321
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs ext_func=0x7f0000001000 -abs ext_abs32=0x87654321 -abs ext_near=0x12345678 -abs ext_low=0x4321
#
# A data field reads back with *{N}: ABS64 holds S+A, ABS32 its low 32
# bits (checked to fit), PRELn holds S+A-P truncated to n bits.

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
        nop
        ret
        .size   local_func, .-local_func

        .data
        .p2align 4
        .globl  local_data
local_data:
        .quad   0x0102030405060708, 0x1112131415161718
        .quad   0x2122232425262728, 0x3132333435363738
        .size   local_data, 32

# R_AARCH64_ABS64 to code and data of this object, with addends.
# jitlink-check: *{8}abs64_func = local_func
# jitlink-check: *{8}abs64_addend = local_data + 0x18
# jitlink-check: *{8}abs64_neg_addend = local_data - 8
# jitlink-check: (*{8}abs64_func)[63:32] = 0
        .globl  abs64_func, abs64_addend, abs64_neg_addend
        .p2align 3
abs64_func:
        .xword  local_func
        .size   abs64_func, 8
abs64_addend:
        .xword  local_data + 0x18
        .size   abs64_addend, 8
abs64_neg_addend:
        .xword  local_data - 8
        .size   abs64_neg_addend, 8

# R_AARCH64_ABS64 to an absolute symbol far from the image: the value
# itself, not a stub.
# jitlink-check: *{8}abs64_ext = ext_func
# jitlink-check: *{8}abs64_ext_addend = ext_func + 0x100
# jitlink-check: *{8}abs64_ext_addend = 0x7f0000001100
        .globl  abs64_ext, abs64_ext_addend
abs64_ext:
        .xword  ext_func
        .size   abs64_ext, 8
abs64_ext_addend:
        .xword  ext_func + 0x100
        .size   abs64_ext_addend, 8

# R_AARCH64_ABS32: values below 4 GiB.
# jitlink-check: *{4}abs32_ext = ext_abs32
# jitlink-check: *{4}abs32_ext = 0x87654321
# jitlink-check: *{4}abs32_local = local_data + 4
# The neighbouring word is untouched.
# jitlink-check: *{4}abs32_guard = 0xa5a5a5a5
        .globl  abs32_ext, abs32_local, abs32_guard
        .p2align 2
abs32_ext:
        .word   ext_abs32
        .size   abs32_ext, 4
abs32_local:
        .word   local_data + 4
        .size   abs32_local, 4
abs32_guard:
        .word   0xa5a5a5a5
        .size   abs32_guard, 4

# R_AARCH64_PREL64: to a far absolute symbol and to code of this object
# (with jitrun's and LLVM's layouts, code precedes data: negative values).
# jitlink-check: *{8}prel64_ext = ext_func - prel64_ext
# jitlink-check: *{8}prel64_func = local_func - prel64_func
# jitlink-check: *{8}prel64_addend = local_func - prel64_addend + 0x10
        .globl  prel64_ext, prel64_func, prel64_addend
        .p2align 3
prel64_ext:
        .xword  ext_func - .
        .size   prel64_ext, 8
prel64_func:
        .xword  local_func - .
        .size   prel64_func, 8
prel64_addend:
        .xword  local_func + 0x10 - .
        .size   prel64_addend, 8

# R_AARCH64_PREL32: forward to an absolute symbol above the image,
# backward to one far below it (a negative 32-bit value), to code of this
# object, with an addend.
# jitlink-check: *{4}prel32_near = (ext_near - prel32_near)[31:0]
# jitlink-check: *{4}prel32_low = (ext_low - prel32_low)[31:0]
# jitlink-check: (*{4}prel32_low)[31:31] = 1
# jitlink-check: *{4}prel32_func = (local_func - prel32_func)[31:0]
# jitlink-check: *{4}prel32_addend = (local_func - prel32_addend + 4)[31:0]
        .globl  prel32_near, prel32_low, prel32_func, prel32_addend
        .p2align 2
prel32_near:
        .word   ext_near - .
        .size   prel32_near, 4
prel32_low:
        .word   ext_low - .
        .size   prel32_low, 4
prel32_func:
        .word   local_func - .
        .size   prel32_func, 4
prel32_addend:
        .word   local_func + 4 - .
        .size   prel32_addend, 4
