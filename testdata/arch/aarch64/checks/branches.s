# PC-relative branches, literal loads and ADR to symbols of this object:
# R_AARCH64_CALL26, JUMP26, CONDBR19 (b.cond, cbz, cbnz), TSTBR14 (tbz,
# tbnz), LD_PREL_LO19 (ldr x/w/s/d/q, ldrsw, prfm literal) and
# ADR_PREL_LO21, forward and backward, with and without addends.
#
# jitrun-args: --base 0x10000000
# llvm-jitlink-args: -noexec -slab-allocate 2Mb -slab-address 0x10000000 -slab-page-size 4096
#
# AArch64 PC-relative fields are relative to the instruction itself (not to
# next_pc as on x86-64). decode_operand returns the field as LLVM's MCInst
# holds it: the signed word offset (B, BL, B.cond, CBZ, TBZ, LDR literal) or
# byte offset (ADR), sign-extended to 64 bits. So `decode_operand(l, N) << 2`
# equals the byte displacement exactly, negative ones included; the
# `[HI:LO]` forms compare the raw field bits instead.
#
# Operands: B/BL: 0 = imm26. B.cond: 0 = condition, 1 = imm19.
# CBZ/CBNZ: 0 = Rt, 1 = imm19. TBZ/TBNZ: 0 = Rt, 1 = bit number, 2 = imm14.
# LDR (literal): 0 = Rt, 1 = imm19. PRFM (literal): 0 = prefetch op, 1 = imm19.
# ADR: 0 = Rd, 1 = imm21 (bytes).
#
# Every label a check names is global and has a size: llvm-jitlink only
# knows global symbols and decodes only within a symbol's size.
# Numbers come last in a sum: llvm-jitlink cannot parse `a + 8 - b`.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# next_pc is the address after the 4-byte instruction.
# jitlink-check: next_pc(call_fwd) = call_fwd + 4

# R_AARCH64_CALL26 / R_AARCH64_JUMP26, forward.
# jitlink-check: decode_operand(call_fwd, 0) << 2 = fwd_func - call_fwd
# jitlink-check: decode_operand(call_fwd, 0)[25:0] = (fwd_func - call_fwd)[27:2]
# jitlink-check: decode_operand(jump_fwd, 0) << 2 = fwd_func - jump_fwd
# The opcode bits survive the fixup: BL is 0b100101, B is 0b000101.
# jitlink-check: (*{4}call_fwd)[31:26] = 0x25
# jitlink-check: (*{4}jump_fwd)[31:26] = 0x5
        .globl  call_fwd, jump_fwd, call_addend
        .p2align 2
call_fwd:
        bl      fwd_func
        .size   call_fwd, 4
jump_fwd:
        b       fwd_func
        .size   jump_fwd, 4
# With an addend: the target is fwd_func + 8.
# jitlink-check: decode_operand(call_addend, 0) << 2 = fwd_func - call_addend + 8
call_addend:
        bl      fwd_func + 8
        .size   call_addend, 4

        .skip   0x2464

        .globl  fwd_func
        .p2align 2
        .type   fwd_func,@function
fwd_func:
        nop
        nop
        ret
        .size   fwd_func, .-fwd_func

# R_AARCH64_CALL26 / R_AARCH64_JUMP26, backward (negative imm26).
# jitlink-check: decode_operand(call_back, 0) << 2 = fwd_func - call_back
# jitlink-check: decode_operand(call_back, 0)[25:0] = (fwd_func - call_back)[27:2]
# jitlink-check: decode_operand(jump_back, 0) << 2 = main - jump_back
        .globl  call_back, jump_back
        .p2align 2
call_back:
        bl      fwd_func
        .size   call_back, 4
jump_back:
        b       main
        .size   jump_back, 4

# R_AARCH64_CONDBR19: b.cond keeps its condition (operand 0, here ne = 1);
# imm19 is operand 1.
# jitlink-check: decode_operand(bcond_fwd, 0) = 1
# jitlink-check: decode_operand(bcond_fwd, 1) << 2 = cond_target - bcond_fwd
# jitlink-check: decode_operand(bcond_fwd, 1)[18:0] = (cond_target - bcond_fwd)[20:2]
# jitlink-check: (*{4}bcond_fwd)[3:0] = 1
# jitlink-check: decode_operand(cbz_fwd, 1) << 2 = cond_target - cbz_fwd
# jitlink-check: decode_operand(cbnz_fwd, 1) << 2 = cond_target - cbnz_fwd + 4
# cbz and cbnz keep their register (x7, w9) and size bit.
# jitlink-check: (*{4}cbz_fwd)[4:0] = 7
# jitlink-check: (*{4}cbz_fwd)[31:24] = 0xb4
# jitlink-check: (*{4}cbnz_fwd)[4:0] = 9
# jitlink-check: (*{4}cbnz_fwd)[31:24] = 0x35
        .globl  bcond_fwd, cbz_fwd, cbnz_fwd
        .p2align 2
bcond_fwd:
        b.ne    cond_target
        .size   bcond_fwd, 4
cbz_fwd:
        cbz     x7, cond_target
        .size   cbz_fwd, 4
cbnz_fwd:
        cbnz    w9, cond_target + 4
        .size   cbnz_fwd, 4

# R_AARCH64_TSTBR14: operand 1 is the bit number (33 needs b5 = 1, which
# the fixup keeps), operand 2 the imm14.
# jitlink-check: decode_operand(tbz_fwd, 1) = 33
# jitlink-check: decode_operand(tbz_fwd, 2) << 2 = tst_target - tbz_fwd
# jitlink-check: decode_operand(tbz_fwd, 2)[13:0] = (tst_target - tbz_fwd)[15:2]
# jitlink-check: (*{4}tbz_fwd)[31:31] = 1
# jitlink-check: decode_operand(tbnz_fwd, 1) = 5
# jitlink-check: decode_operand(tbnz_fwd, 2) << 2 = tst_target - tbnz_fwd
        .globl  tbz_fwd, tbnz_fwd
        .p2align 2
tbz_fwd:
        tbz     x3, #33, tst_target
        .size   tbz_fwd, 4
tbnz_fwd:
        tbnz    w3, #5, tst_target
        .size   tbnz_fwd, 4

        .skip   0x5a5c

        .globl  tst_target
        .p2align 2
tst_target:
        nop
        .size   tst_target, 4

# TSTBR14 backward.
# jitlink-check: decode_operand(tbz_back, 2) << 2 = tbz_fwd - tbz_back
# jitlink-check: decode_operand(tbz_back, 2)[13:0] = (tbz_fwd - tbz_back)[15:2]
        .globl  tbz_back
tbz_back:
        tbz     x0, #0, tbz_fwd
        .size   tbz_back, 4

        .skip   0x18a48

        .globl  cond_target
        .p2align 2
cond_target:
        nop
        nop
        .size   cond_target, 8

# CONDBR19 backward (negative imm19); lt is condition 0xb.
# jitlink-check: decode_operand(cbz_back, 1) << 2 = bcond_fwd - cbz_back
# jitlink-check: decode_operand(cbz_back, 1)[18:0] = (bcond_fwd - cbz_back)[20:2]
# jitlink-check: decode_operand(bcond_back, 0) = 0xb
# jitlink-check: decode_operand(bcond_back, 1) << 2 = main - bcond_back
        .globl  cbz_back, bcond_back
cbz_back:
        cbz     x0, bcond_fwd
        .size   cbz_back, 4
bcond_back:
        b.lt    main
        .size   bcond_back, 4

# R_AARCH64_LD_PREL_LO19 into another section (.rodata), for each literal
# load form; the offset is in words, operand 1.
# jitlink-check: decode_operand(ldr_x_lit, 1) << 2 = lit_quad - ldr_x_lit
# jitlink-check: decode_operand(ldr_x_lit, 1)[18:0] = (lit_quad - ldr_x_lit)[20:2]
# jitlink-check: decode_operand(ldr_w_lit, 1) << 2 = lit_quad - ldr_w_lit + 4
# jitlink-check: decode_operand(ldrsw_lit, 1) << 2 = lit_quad - ldrsw_lit + 8
# jitlink-check: decode_operand(ldr_q_lit, 1) << 2 = lit_octa - ldr_q_lit
# jitlink-check: decode_operand(ldr_d_lit, 1) << 2 = lit_octa - ldr_d_lit + 8
# jitlink-check: decode_operand(ldr_s_lit, 1) << 2 = lit_quad - ldr_s_lit + 12
# jitlink-check: decode_operand(prfm_lit, 0) = 0
# jitlink-check: decode_operand(prfm_lit, 1) << 2 = lit_quad - prfm_lit
# Rt is kept (x21), and the opcode.
# jitlink-check: (*{4}ldr_x_lit)[4:0] = 21
# jitlink-check: (*{4}ldr_x_lit)[31:24] = 0x58
        .globl  ldr_x_lit, ldr_w_lit, ldrsw_lit, ldr_q_lit, ldr_d_lit, ldr_s_lit, prfm_lit
        .p2align 2
ldr_x_lit:
        ldr     x21, lit_quad
        .size   ldr_x_lit, 4
ldr_w_lit:
        ldr     w2, lit_quad + 4
        .size   ldr_w_lit, 4
ldrsw_lit:
        ldrsw   x2, lit_quad + 8
        .size   ldrsw_lit, 4
ldr_q_lit:
        ldr     q2, lit_octa
        .size   ldr_q_lit, 4
ldr_d_lit:
        ldr     d2, lit_octa + 8
        .size   ldr_d_lit, 4
ldr_s_lit:
        ldr     s2, lit_quad + 12
        .size   ldr_s_lit, 4
prfm_lit:
        prfm    pldl1keep, lit_quad
        .size   prfm_lit, 4

# LD_PREL_LO19 to a global label of this section, backward.
# jitlink-check: decode_operand(ldr_back, 1) << 2 = fwd_func - ldr_back
        .globl  ldr_back
ldr_back:
        ldr     x0, fwd_func
        .size   ldr_back, 4

# R_AARCH64_ADR_PREL_LO21: operand 1 is the byte offset (immhi:immlo); an
# odd offset exercises immlo (bits 30:29).
# jitlink-check: decode_operand(adr_data, 1) = lit_quad - adr_data + 3
# jitlink-check: decode_operand(adr_data, 1)[20:0] = (lit_quad - adr_data + 3)[20:0]
# jitlink-check: (*{4}adr_data)[30:29] = (lit_quad - adr_data + 3)[1:0]
# jitlink-check: (*{4}adr_data)[23:5] = (lit_quad - adr_data + 3)[20:2]
# jitlink-check: decode_operand(adr_back, 1) = fwd_func - adr_back + 1
# jitlink-check: (*{4}adr_back)[31:24] & 0x9f = 0x10
        .globl  adr_data, adr_back
adr_data:
        adr     x0, lit_quad + 3
        .size   adr_data, 4
adr_back:
        adr     x1, fwd_func + 1
        .size   adr_back, 4

# An instruction inside a symbol: decode_operand(label + offset, N)
# (the form newer LLVM accepts; its next_pc takes a symbol only).
# jitlink-check: decode_operand(call_pair, 0) << 2 = main - call_pair
# jitlink-check: decode_operand(call_pair + 4, 0) << 2 = fwd_func - call_pair - 4
        .globl  call_pair
call_pair:
        bl      main
        bl      fwd_func
        .size   call_pair, 8
        ret

        .section .rodata,"a",@progbits
        .p2align 4
        .globl  lit_octa, lit_quad
lit_octa:
        .quad   0x0123456789abcdef, 0xfedcba9876543210
        .size   lit_octa, 16
lit_quad:
        .quad   0x1111111122222222, 0x3333333344444444
        .size   lit_quad, 16
