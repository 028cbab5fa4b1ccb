# Absolute addresses built 16 bits at a time without overflow checks:
# R_AARCH64_MOVW_UABS_G0_NC, G1_NC, G2_NC and G3 on movz/movk, the
# four-instruction sequence of -mcmodel=large, to an absolute symbol whose
# four halfwords all differ and to data of this object, with an addend.
#
# jitrun-args: --base 0x10000000 --define ext_wide=0x123456789abcdef0
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs ext_wide=0x123456789abcdef0
#
# MOVZ (MOVZXi): operand 0 = Rd, 1 = imm16, 2 = shift (0, 16, 32, 48).
# MOVK (MOVKXi): operand 0 = Rd, 1 = Rd again (tied: read and written),
# 2 = imm16, 3 = shift. The fixup writes imm16 only; the shift (hw field)
# is the assembler's.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# jitlink-check: decode_operand(wide_g3, 1) = ext_wide[63:48]
# jitlink-check: decode_operand(wide_g3, 1) = 0x1234
# jitlink-check: decode_operand(wide_g3, 2) = 48
# jitlink-check: decode_operand(wide_g2, 2) = ext_wide[47:32]
# jitlink-check: decode_operand(wide_g2, 3) = 32
# jitlink-check: decode_operand(wide_g1, 2) = ext_wide[31:16]
# jitlink-check: decode_operand(wide_g1, 3) = 16
# jitlink-check: decode_operand(wide_g0, 2) = ext_wide[15:0]
# jitlink-check: decode_operand(wide_g0, 2) = 0xdef0
# jitlink-check: decode_operand(wide_g0, 3) = 0
# The opcodes (movz 0xd2, movk 0xf2) and Rd (x11) survive.
# jitlink-check: (*{4}wide_g3)[31:23] = 0x1a5
# jitlink-check: (*{4}wide_g0)[31:23] = 0x1e5
# jitlink-check: (*{4}wide_g0)[4:0] = 11
        .globl  wide_g3, wide_g2, wide_g1, wide_g0
        .p2align 2
wide_g3:
        movz    x11, #:abs_g3:ext_wide
        .size   wide_g3, 4
wide_g2:
        movk    x11, #:abs_g2_nc:ext_wide
        .size   wide_g2, 4
wide_g1:
        movk    x11, #:abs_g1_nc:ext_wide
        .size   wide_g1, 4
wide_g0:
        movk    x11, #:abs_g0_nc:ext_wide
        .size   wide_g0, 4

# The _NC forms on movz too (and G3 on movk), to data of this object with
# an addend.
# jitlink-check: decode_operand(data_g0, 1) = (movw_data + 0x18)[15:0]
# jitlink-check: decode_operand(data_g1, 1) = (movw_data + 0x18)[31:16]
# jitlink-check: decode_operand(data_g2, 1) = (movw_data + 0x18)[47:32]
# jitlink-check: decode_operand(data_g3, 2) = (movw_data + 0x18)[63:48]
# jitlink-check: decode_operand(data_g1, 2) = 16
        .globl  data_g0, data_g1, data_g2, data_g3
data_g0:
        movz    x0, #:abs_g0_nc:movw_data+0x18
        .size   data_g0, 4
data_g1:
        movz    x1, #:abs_g1_nc:movw_data+0x18
        .size   data_g1, 4
data_g2:
        movz    x2, #:abs_g2_nc:movw_data+0x18
        .size   data_g2, 4
data_g3:
        movk    x3, #:abs_g3:movw_data+0x18
        .size   data_g3, 4
        ret

        .data
        .p2align 3
        .globl  movw_data
movw_data:
        .quad   1, 2, 3, 4
        .size   movw_data, 32
