# Local-exec TLS: R_AARCH64_TLSLE_ADD_TPREL_HI12 and _LO12_NC (the default
# -mtls-size=24 pair), R_AARCH64_TLSLE_MOVW_TPREL_G2, G1_NC, G0_NC
# (-mtls-size=48) and G1 (-mtls-size=32), and the load/store forms
# R_AARCH64_TLSLE_LDST8/16/32/64_TPREL_LO12_NC, for variables in .tdata
# and .tbss.
#
# jitrun-args: --base 0x10000000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects every TLSLE relocation)
#
# A thread pointer offset TPREL(v) is not a number a test can fix: jitrun
# places the image's TLS block where the C library's static TLS has room.
# So the checks compare the encodings of the same offset with each other,
# and offsets of variables of one section with the variables' distance.
# ADD (immediate): operand 2 = imm12, operand 3 = shift (12 for HI12).
# MOVZ: operand 1 = imm16; MOVK: operand 2 = imm16. LDR/STR (unsigned
# offset): operand 2 = imm12, scaled by the access size. TPREL is
# positive on AArch64 (TLS variant 1: the block lies above the thread
# pointer), so the MOVW_TPREL forms stay MOVZ.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        mrs     x8, tpidr_el0
        ret
        .size   main, .-main

# tv_b's offset, three ways: HI12:LO12_NC, G2:G1_NC:G0_NC and G1:G0_NC.
# jitlink-check: decode_operand(le_hi_b, 3) = 12
# jitlink-check: (decode_operand(mw_g2_b, 1) << 32) + (decode_operand(mw_g1nc_b, 2) << 16) + decode_operand(mw_g0nc_b, 2) = \
# jitlink-check:     (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2)
# jitlink-check: (decode_operand(mw_g1_b, 1) << 16) + decode_operand(mw_g0nc2_b, 2) = \
# jitlink-check:     (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2)
# jitlink-check: decode_operand(mw_g2_b, 2) = 32
# jitlink-check: (*{4}mw_g2_b)[30:29] = 2
# jitlink-check: (*{4}mw_g1_b)[30:29] = 2
        .globl  le_hi_b, le_lo_b, mw_g2_b, mw_g1nc_b, mw_g0nc_b, mw_g1_b, mw_g0nc2_b
        .p2align 2
le_hi_b:
        add     x1, x8, #:tprel_hi12:tv_b, lsl #12
        .size   le_hi_b, 4
le_lo_b:
        add     x1, x1, #:tprel_lo12_nc:tv_b
        .size   le_lo_b, 4
mw_g2_b:
        movz    x2, #:tprel_g2:tv_b
        .size   mw_g2_b, 4
mw_g1nc_b:
        movk    x2, #:tprel_g1_nc:tv_b
        .size   mw_g1nc_b, 4
mw_g0nc_b:
        movk    x2, #:tprel_g0_nc:tv_b
        .size   mw_g0nc_b, 4
mw_g1_b:
        movz    x3, #:tprel_g1:tv_b
        .size   mw_g1_b, 4
mw_g0nc2_b:
        movk    x3, #:tprel_g0_nc:tv_b
        .size   mw_g0nc2_b, 4

# tv_a and tv_d lie 0x30 bytes before and 0x1010 bytes after tv_b in
# .tdata: their offsets differ by as much (tv_d's in the HI12 part too).
# jitlink-check: (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2) - \
# jitlink-check:     ((decode_operand(le_hi_a, 2) << 12) + decode_operand(le_lo_a, 2)) = tv_b - tv_a
# jitlink-check: (decode_operand(le_hi_d, 2) << 12) + decode_operand(le_lo_d, 2) - \
# jitlink-check:     ((decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2)) = tv_d - tv_b
# jitlink-check: tv_d - tv_b = 0x1010
        .globl  le_hi_a, le_lo_a, le_hi_d, le_lo_d
le_hi_a:
        add     x4, x8, #:tprel_hi12:tv_a, lsl #12
        .size   le_hi_a, 4
le_lo_a:
        add     x4, x4, #:tprel_lo12_nc:tv_a
        .size   le_lo_a, 4
le_hi_d:
        add     x5, x8, #:tprel_hi12:tv_d, lsl #12
        .size   le_hi_d, 4
le_lo_d:
        add     x5, x5, #:tprel_lo12_nc:tv_d
        .size   le_lo_d, 4

# Loads and stores at [tp-based register + :tprel_lo12_nc:], after an
# `add xN, tp, :tprel_hi12:` (TLSLE_LDSTn_TPREL_LO12_NC): the low 12 bits
# of the offset, divided by the access size.
# jitlink-check: decode_operand(ld64_b, 2) << 3 = decode_operand(le_lo_b, 2)
# jitlink-check: decode_operand(st32_b, 2) << 2 = decode_operand(le_lo_b, 2) + 4
# jitlink-check: decode_operand(ld16_b, 2) << 1 = decode_operand(le_lo_b, 2) + 6
# jitlink-check: decode_operand(ld8_b, 2) = decode_operand(le_lo_b, 2) + 7
        .globl  ld64_b, st32_b, ld16_b, ld8_b
ld64_b:
        ldr     x6, [x1, #:tprel_lo12_nc:tv_b]
        .size   ld64_b, 4
st32_b:
        str     w6, [x1, #:tprel_lo12_nc:tv_b+4]
        .size   st32_b, 4
ld16_b:
        ldrh    w6, [x1, #:tprel_lo12_nc:tv_b+6]
        .size   ld16_b, 4
ld8_b:
        ldrb    w6, [x1, #:tprel_lo12_nc:tv_b+7]
        .size   ld8_b, 4

# A .tbss variable: its three encodings agree.
# jitlink-check: (decode_operand(mw_g2_z, 1) << 32) + (decode_operand(mw_g1nc_z, 2) << 16) + decode_operand(mw_g0nc_z, 2) = \
# jitlink-check:     (decode_operand(le_hi_z, 2) << 12) + decode_operand(le_lo_z, 2)
        .globl  le_hi_z, le_lo_z, mw_g2_z, mw_g1nc_z, mw_g0nc_z
le_hi_z:
        add     x7, x8, #:tprel_hi12:tv_z, lsl #12
        .size   le_hi_z, 4
le_lo_z:
        add     x7, x7, #:tprel_lo12_nc:tv_z
        .size   le_lo_z, 4
mw_g2_z:
        movz    x9, #:tprel_g2:tv_z
        .size   mw_g2_z, 4
mw_g1nc_z:
        movk    x9, #:tprel_g1_nc:tv_z
        .size   mw_g1nc_z, 4
mw_g0nc_z:
        movk    x9, #:tprel_g0_nc:tv_z
        .size   mw_g0nc_z, 4
        ret

        .section .tdata,"awT",@progbits
        .p2align 4
        .globl  tv_a, tv_b, tv_d
        .type   tv_a,@object
        .type   tv_b,@object
        .type   tv_d,@object
        .quad   0x1111
tv_a:
        .quad   0xaaaa
        .size   tv_a, 8
        .skip   0x28
tv_b:
        .quad   0xbbbb
        .size   tv_b, 8
        .skip   0x1008
tv_d:
        .quad   0xdddd
        .size   tv_d, 8

        .section .tbss,"awT",@nobits
        .p2align 3
        .globl  tv_z
        .type   tv_z,@object
        .skip   0x40
tv_z:
        .skip   8
        .size   tv_z, 8
