# Page-relative addressing: R_AARCH64_ADR_PREL_PG_HI21 on ADRP (the _NC
# variant is in page_nc.s: llvm-jitlink 19 does not take it),
# R_AARCH64_ADD_ABS_LO12_NC on ADD, and the load/store offsets
# R_AARCH64_LDST8/16/32/64/128_ABS_LO12_NC (integer, sign-extending, FP/SIMD
# and PRFM forms), to data of this object (forward pages, page-crossing
# addends), to code behind (negative page delta), and to absolute
# symbols defined on the command line.
#
# jitrun-args: --base 0x10000000 --define ext_abs=0x12345678 --define ext_low=0x4321
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs ext_abs=0x12345678 -abs ext_low=0x4321
#
# ADRP: operand 1 is the signed page delta Page(S+A) - Page(P) in 4 KiB
# pages (sign-extended), so `decode_operand(l, 1) << 12` equals
# (S+A & ~0xfff) - (P & ~0xfff). LLVM's own tests write
# `(S - P)[32:12]`, which is not the page delta when the low 12 bits of
# S are below those of P; the checks here use the exact form.
# ADD (immediate): operand 2 is imm12, operand 3 the shift (0).
# LDR/STR (unsigned offset): operand 2 is imm12 *as encoded*, i.e. the
# byte offset divided by the access size (1, 2, 4, 8, 16): so
# LDRXui's operand 2 is (S+A)[11:3] and LDRQui's is (S+A)[11:4].
# PRFM (unsigned offset): operand 0 is the prefetch op, 2 the imm12 (/8).

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# ADRP to data in another section.
# jitlink-check: decode_operand(adrp_data, 1) << 12 = \
# jitlink-check:     (page_data & 0xfffffffffffff000) - (adrp_data & 0xfffffffffffff000)
# jitlink-check: decode_operand(adrp_data, 1)[20:0] = (page_data[32:12] - adrp_data[32:12])[20:0]
# The destination register (x5) and opcode survive.
# jitlink-check: (*{4}adrp_data)[4:0] = 5
# jitlink-check: (*{4}adrp_data)[31:24] & 0x9f = 0x90
# With an addend that crosses into the next pages (0x7f0 + 0x1ff8).
# jitlink-check: decode_operand(adrp_addend, 1) << 12 = \
# jitlink-check:     ((page_data + 0x1ff8) & 0xfffffffffffff000) - (adrp_addend & 0xfffffffffffff000)
        .globl  adrp_data, adrp_addend
        .p2align 2
adrp_data:
        adrp    x5, page_data
        .size   adrp_data, 4
adrp_addend:
        adrp    x1, page_data+0x1ff8
        .size   adrp_addend, 4

# ADD_ABS_LO12_NC: the low 12 bits of S+A, unscaled.
# jitlink-check: decode_operand(add_lo12, 2) = page_data[11:0]
# jitlink-check: decode_operand(add_lo12, 3) = 0
# jitlink-check: decode_operand(add_lo12_addend, 2) = (page_data + 0x1ff8)[11:0]
# Rd and Rn are kept: add x6, x5, ...
# jitlink-check: (*{4}add_lo12)[9:0] = 0xa6
        .globl  add_lo12, add_lo12_addend
add_lo12:
        add     x6, x5, :lo12:page_data
        .size   add_lo12, 4
add_lo12_addend:
        add     x1, x1, :lo12:page_data+0x1ff8
        .size   add_lo12_addend, 4

# LDST8_ABS_LO12_NC: byte accesses, offset unscaled.
# jitlink-check: decode_operand(ldrb_lo12, 2) = (page_data + 3)[11:0]
# jitlink-check: decode_operand(ldrsb_lo12, 2) = (page_data + 5)[11:0]
# jitlink-check: decode_operand(strb_lo12, 2) = (page_data + 7)[11:0]
# jitlink-check: decode_operand(ldr_b_lo12, 2) = (page_data + 1)[11:0]
        .globl  ldrb_lo12, ldrsb_lo12, strb_lo12, ldr_b_lo12
ldrb_lo12:
        ldrb    w0, [x5, :lo12:page_data+3]
        .size   ldrb_lo12, 4
ldrsb_lo12:
        ldrsb   x0, [x5, :lo12:page_data+5]
        .size   ldrsb_lo12, 4
strb_lo12:
        strb    w0, [x5, :lo12:page_data+7]
        .size   strb_lo12, 4
ldr_b_lo12:
        ldr     b0, [x5, :lo12:page_data+1]
        .size   ldr_b_lo12, 4

# LDST16_ABS_LO12_NC: the offset is (S+A)[11:1].
# jitlink-check: decode_operand(ldrh_lo12, 2) = (page_data + 2)[11:1]
# jitlink-check: decode_operand(ldrsh_lo12, 2) = (page_data + 6)[11:1]
# jitlink-check: decode_operand(strh_lo12, 2) = (page_data + 10)[11:1]
# jitlink-check: decode_operand(ldr_h_lo12, 2) = (page_data + 14)[11:1]
        .globl  ldrh_lo12, ldrsh_lo12, strh_lo12, ldr_h_lo12
ldrh_lo12:
        ldrh    w0, [x5, :lo12:page_data+2]
        .size   ldrh_lo12, 4
ldrsh_lo12:
        ldrsh   w0, [x5, :lo12:page_data+6]
        .size   ldrsh_lo12, 4
strh_lo12:
        strh    w0, [x5, :lo12:page_data+10]
        .size   strh_lo12, 4
ldr_h_lo12:
        ldr     h0, [x5, :lo12:page_data+14]
        .size   ldr_h_lo12, 4

# LDST32_ABS_LO12_NC: (S+A)[11:2].
# jitlink-check: decode_operand(ldr_w_lo12, 2) = (page_data + 4)[11:2]
# jitlink-check: decode_operand(ldrsw_lo12, 2) = (page_data + 8)[11:2]
# jitlink-check: decode_operand(str_w_lo12, 2) = (page_data + 12)[11:2]
# jitlink-check: decode_operand(ldr_s_lo12, 2) = (page_data + 20)[11:2]
        .globl  ldr_w_lo12, ldrsw_lo12, str_w_lo12, ldr_s_lo12
ldr_w_lo12:
        ldr     w0, [x5, :lo12:page_data+4]
        .size   ldr_w_lo12, 4
ldrsw_lo12:
        ldrsw   x0, [x5, :lo12:page_data+8]
        .size   ldrsw_lo12, 4
str_w_lo12:
        str     w0, [x5, :lo12:page_data+12]
        .size   str_w_lo12, 4
ldr_s_lo12:
        ldr     s0, [x5, :lo12:page_data+20]
        .size   ldr_s_lo12, 4

# LDST64_ABS_LO12_NC: (S+A)[11:3].
# jitlink-check: decode_operand(ldr_x_lo12, 2) = page_data[11:3]
# jitlink-check: decode_operand(str_x_lo12, 2) = (page_data + 24)[11:3]
# jitlink-check: decode_operand(ldr_d_lo12, 2) = (page_data + 8)[11:3]
# jitlink-check: decode_operand(prfm_lo12, 0) = 0
# jitlink-check: decode_operand(prfm_lo12, 2) = (page_data + 16)[11:3]
# The page-crossing addend: the entry 0x1ff8 bytes on.
# jitlink-check: decode_operand(ldr_x_addend, 2) = (page_data + 0x1ff8)[11:3]
        .globl  ldr_x_lo12, str_x_lo12, ldr_d_lo12, prfm_lo12, ldr_x_addend
ldr_x_lo12:
        ldr     x0, [x5, :lo12:page_data]
        .size   ldr_x_lo12, 4
str_x_lo12:
        str     x0, [x5, :lo12:page_data+24]
        .size   str_x_lo12, 4
ldr_d_lo12:
        ldr     d0, [x5, :lo12:page_data+8]
        .size   ldr_d_lo12, 4
prfm_lo12:
        prfm    pldl1keep, [x5, :lo12:page_data+16]
        .size   prfm_lo12, 4
ldr_x_addend:
        ldr     x0, [x1, :lo12:page_data+0x1ff8]
        .size   ldr_x_addend, 4

# LDST128_ABS_LO12_NC: (S+A)[11:4].
# jitlink-check: decode_operand(ldr_q_lo12, 2) = (page_data + 16)[11:4]
# jitlink-check: decode_operand(str_q_lo12, 2) = (page_data + 32)[11:4]
        .globl  ldr_q_lo12, str_q_lo12
ldr_q_lo12:
        ldr     q0, [x5, :lo12:page_data+16]
        .size   ldr_q_lo12, 4
str_q_lo12:
        str     q1, [x5, :lo12:page_data+32]
        .size   str_q_lo12, 4

# ADRP + ADD + LDR to absolute symbols from the command line: above the
# image (positive delta) and far below it (negative delta).
# jitlink-check: decode_operand(adrp_ext, 1) << 12 = \
# jitlink-check:     (ext_abs & 0xfffffffffffff000) - (adrp_ext & 0xfffffffffffff000)
# jitlink-check: decode_operand(add_ext, 2) = ext_abs[11:0]
# jitlink-check: decode_operand(ldr_ext, 2) = ext_abs[11:3]
# jitlink-check: decode_operand(adrp_low, 1) << 12 = \
# jitlink-check:     (ext_low & 0xfffffffffffff000) - (adrp_low & 0xfffffffffffff000)
# jitlink-check: decode_operand(adrp_low, 1)[20:0] = (ext_low[32:12] - adrp_low[32:12])[20:0]
# jitlink-check: decode_operand(add_low, 2) = ext_low[11:0]
        .globl  adrp_ext, add_ext, ldr_ext, adrp_low, add_low
adrp_ext:
        adrp    x2, ext_abs
        .size   adrp_ext, 4
add_ext:
        add     x3, x2, :lo12:ext_abs
        .size   add_ext, 4
ldr_ext:
        ldr     x4, [x2, :lo12:ext_abs]
        .size   ldr_ext, 4
adrp_low:
        adrp    x2, ext_low
        .size   adrp_low, 4
add_low:
        add     x2, x2, :lo12:ext_low
        .size   add_low, 4

        .skip   0x3458

# ADRP backward, to main two or more pages behind: a negative delta. The
# ADD writes another register, so a linker that rewrites an adjacent
# `adrp xN, S; add xN, xN, :lo12:S` into `nop; adr xN, S` (ld.lld does)
# leaves this pair alone.
# jitlink-check: decode_operand(adrp_back, 1) << 12 = \
# jitlink-check:     (main & 0xfffffffffffff000) - (adrp_back & 0xfffffffffffff000)
# jitlink-check: decode_operand(adrp_back, 1)[20:0] = (main[32:12] - adrp_back[32:12])[20:0]
# jitlink-check: decode_operand(add_back, 2) = main[11:0]
        .globl  adrp_back, add_back
adrp_back:
        adrp    x7, main
        .size   adrp_back, 4
add_back:
        add     x8, x7, :lo12:main
        .size   add_back, 4
        ret

        .data
        .skip   0x7f0
        .p2align 4
        .globl  page_data
page_data:
        .quad   0x1111111111111111, 0x2222222222222222
        .quad   0x3333333333333333, 0x4444444444444444
        .skip   0x1ff8 - 32
        .quad   0x5555555555555555
        .size   page_data, .-page_data
