# MOVW relocations with overflow checks or a signed choice of opcode, which
# llvm-jitlink 19 rejects: R_AARCH64_MOVW_UABS_G0, G1, G2 (checked
# unsigned), R_AARCH64_MOVW_SABS_G0, G1, G2 (signed: the linker writes
# MOVN and the inverted value when the value is negative, MOVZ otherwise),
# and the PC-relative R_AARCH64_MOVW_PREL_G0, G1, G2, G3 (signed, like
# SABS) and G0_NC, G1_NC, G2_NC (movk, no check).
#
# jitrun-args: --base 0x10000000 --define ext_g0=0xbeef --define ext_g1=0xcafe1234 --define ext_g2=0x76543210fedc --define ext_pos=0xfedc --define ext_neg0=0xffffffffffffedcb --define ext_neg1=0xffffffffedcba987 --define ext_neg2=0xffffedcba9876543 --define ext_wide=0x123456789abcdef0 --define ext_low=0x4321
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects the checked UABS, SABS and PREL MOVW relocations)
#
# MOVZ/MOVN (MOVZXi/MOVNXi): operand 1 = imm16, 2 = shift. MOVK: operand 2
# = imm16 (operand 1 is the tied Rd). The opcode is bits 30:29 of the
# word: 0 = MOVN, 2 = MOVZ, 3 = MOVK. For MOVN the field holds the
# halfword of NOT X; since a halfword of X plus the same halfword of NOT X
# is 0xffff, the checks write `decode_operand(l, 1) + X[HI:LO] = 0xffff`.
# Ranges (ELF for the Arm 64-bit Architecture): UABS_Gn: 0 <= X < 2^(16(n+1));
# SABS_Gn and PREL_Gn: -2^(16(n+1)) <= X < 2^(16(n+1)); PREL_G3 and the
# _NC forms: unchecked.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# UABS_G0/G1/G2: values that fit.
# jitlink-check: decode_operand(uabs_g0, 1) = ext_g0
# jitlink-check: decode_operand(uabs_g1, 1) = ext_g1[31:16]
# jitlink-check: decode_operand(uabs_g1, 1) = 0xcafe
# jitlink-check: decode_operand(uabs_g1, 2) = 16
# jitlink-check: decode_operand(uabs_g2, 1) = ext_g2[47:32]
# jitlink-check: decode_operand(uabs_g2, 1) = 0x7654
# jitlink-check: decode_operand(uabs_g2, 2) = 32
# jitlink-check: (*{4}uabs_g2)[30:29] = 2
        .globl  uabs_g0, uabs_g1, uabs_g2
        .p2align 2
uabs_g0:
        movz    x0, #:abs_g0:ext_g0
        .size   uabs_g0, 4
uabs_g1:
        movz    x1, #:abs_g1:ext_g1
        .size   uabs_g1, 4
uabs_g2:
        movz    x2, #:abs_g2:ext_g2
        .size   uabs_g2, 4

# SABS_G0: positive stays MOVZ, negative becomes MOVN of NOT X.
# jitlink-check: (*{4}sabs_g0_pos)[30:29] = 2
# jitlink-check: decode_operand(sabs_g0_pos, 1) = ext_pos
# jitlink-check: (*{4}sabs_g0_neg)[30:29] = 0
# jitlink-check: decode_operand(sabs_g0_neg, 1) + ext_neg0[15:0] = 0xffff
# jitlink-check: decode_operand(sabs_g0_neg, 1) = 0x1234
# The rest of the word (sf, hw, Rd = x13) is untouched.
# jitlink-check: (*{4}sabs_g0_neg)[31:31] = 1
# jitlink-check: (*{4}sabs_g0_neg)[22:21] = 0
# jitlink-check: (*{4}sabs_g0_neg)[4:0] = 13
        .globl  sabs_g0_pos, sabs_g0_neg
sabs_g0_pos:
        movz    x12, #:abs_g0_s:ext_pos
        .size   sabs_g0_pos, 4
sabs_g0_neg:
        movz    x13, #:abs_g0_s:ext_neg0
        .size   sabs_g0_neg, 4

# SABS_G1 and SABS_G2, negative (MOVN) and positive (MOVZ), each with the
# movk that completes the value.
# jitlink-check: (*{4}sabs_g1_neg)[30:29] = 0
# jitlink-check: decode_operand(sabs_g1_neg, 1) + ext_neg1[31:16] = 0xffff
# jitlink-check: decode_operand(sabs_g1_neg, 1) = 0x1234
# jitlink-check: decode_operand(sabs_g1_neg, 2) = 16
# jitlink-check: decode_operand(sabs_g1_nc, 2) = ext_neg1[15:0]
# jitlink-check: (*{4}sabs_g1_pos)[30:29] = 2
# jitlink-check: decode_operand(sabs_g1_pos, 1) = ext_g1[31:16]
# jitlink-check: (*{4}sabs_g2_neg)[30:29] = 0
# jitlink-check: decode_operand(sabs_g2_neg, 1) + ext_neg2[47:32] = 0xffff
# jitlink-check: decode_operand(sabs_g2_neg, 1) = 0x1234
# jitlink-check: decode_operand(sabs_g2_neg, 2) = 32
# jitlink-check: (*{4}sabs_g2_pos)[30:29] = 2
# jitlink-check: decode_operand(sabs_g2_pos, 1) = ext_g2[47:32]
        .globl  sabs_g1_neg, sabs_g1_nc, sabs_g1_pos, sabs_g2_neg, sabs_g2_pos
sabs_g1_neg:
        movz    x14, #:abs_g1_s:ext_neg1
        .size   sabs_g1_neg, 4
sabs_g1_nc:
        movk    x14, #:abs_g0_nc:ext_neg1
        .size   sabs_g1_nc, 4
sabs_g1_pos:
        movz    x15, #:abs_g1_s:ext_g1
        .size   sabs_g1_pos, 4
sabs_g2_neg:
        movz    x16, #:abs_g2_s:ext_neg2
        .size   sabs_g2_neg, 4
sabs_g2_pos:
        movz    x17, #:abs_g2_s:ext_g2
        .size   sabs_g2_pos, 4

# MOVW_PREL_G0: X = S+A-P, forward (MOVZ) and backward (MOVN).
# jitlink-check: (*{4}prel_g0_fwd)[30:29] = 2
# jitlink-check: decode_operand(prel_g0_fwd, 1) = prel_target - prel_g0_fwd
# jitlink-check: (*{4}prel_g0_back)[30:29] = 0
# jitlink-check: decode_operand(prel_g0_back, 1) + (main - prel_g0_back)[15:0] = 0xffff
# MOVW_PREL_G0_NC on movk: the low halfword, whatever the sign.
# jitlink-check: decode_operand(prel_g0_nc, 2) = (main - prel_g0_nc)[15:0]
        .globl  prel_g0_fwd, prel_g0_back, prel_g0_nc
prel_g0_fwd:
        movz    x0, #:prel_g0:prel_target
        .size   prel_g0_fwd, 4
prel_g0_back:
        movz    x1, #:prel_g0:main
        .size   prel_g0_back, 4
prel_g0_nc:
        movk    x1, #:prel_g0_nc:main
        .size   prel_g0_nc, 4

# MOVW_PREL_G1: to an absolute symbol far below the image (negative X
# above -2^32: MOVN) and to this object's code (positive: MOVZ).
# jitlink-check: (*{4}prel_g1_low)[30:29] = 0
# jitlink-check: decode_operand(prel_g1_low, 1) + (ext_low - prel_g1_low)[31:16] = 0xffff
# jitlink-check: decode_operand(prel_g1_low, 2) = 16
# jitlink-check: decode_operand(prel_g1_nc, 2) = (ext_low - prel_g1_nc)[31:16]
# jitlink-check: (*{4}prel_g1_fwd)[30:29] = 2
# jitlink-check: decode_operand(prel_g1_fwd, 1) = (prel_far_target - prel_g1_fwd)[31:16]
        .globl  prel_g1_low, prel_g1_nc, prel_g1_fwd
prel_g1_low:
        movz    x2, #:prel_g1:ext_low
        .size   prel_g1_low, 4
prel_g1_nc:
        movk    x2, #:prel_g1_nc:ext_low
        .size   prel_g1_nc, 4
prel_g1_fwd:
        movz    x3, #:prel_g1:prel_far_target
        .size   prel_g1_fwd, 4

# MOVW_PREL_G2 (checked, < 2^48 away) and G2_NC, G3 to ext_wide and
# ext_g2; each instruction's own P.
# jitlink-check: (*{4}prel_g2)[30:29] = 2
# jitlink-check: decode_operand(prel_g2, 1) = (ext_g2 - prel_g2)[47:32]
# jitlink-check: decode_operand(prel_g2, 2) = 32
# jitlink-check: (*{4}prel_g3)[30:29] = 2
# jitlink-check: decode_operand(prel_g3, 1) = (ext_wide - prel_g3)[63:48]
# jitlink-check: decode_operand(prel_g3, 2) = 48
# jitlink-check: decode_operand(prel_g2_nc, 2) = (ext_wide - prel_g2_nc)[47:32]
        .globl  prel_g2, prel_g3, prel_g2_nc
prel_g2:
        movz    x4, #:prel_g2:ext_g2
        .size   prel_g2, 4
prel_g3:
        movz    x5, #:prel_g3:ext_wide
        .size   prel_g3, 4
prel_g2_nc:
        movk    x5, #:prel_g2_nc:ext_wide
        .size   prel_g2_nc, 4

# MOVW_PREL_G3 of a negative X (ext_low lies below the image): MOVN of
# NOT X's top halfword, which is 0.
# jitlink-check: (*{4}prel_g3_neg)[30:29] = 0
# jitlink-check: decode_operand(prel_g3_neg, 1) + (ext_low - prel_g3_neg)[63:48] = 0xffff
# jitlink-check: decode_operand(prel_g3_neg, 1) = 0
        .globl  prel_g3_neg
prel_g3_neg:
        movz    x6, #:prel_g3:ext_low
        .size   prel_g3_neg, 4

        .skip   0x1234 - 4
        .globl  prel_target
prel_target:
        nop
        .size   prel_target, 4
        .skip   0x20000
        .globl  prel_far_target
prel_far_target:
        ret
        .size   prel_far_target, 4
