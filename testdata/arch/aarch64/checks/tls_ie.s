# Initial-exec TLS: the offset of a variable from the thread pointer is
# loaded from a GOT slot: R_AARCH64_TLSIE_ADR_GOTTPREL_PAGE21 and
# TLSIE_LD64_GOTTPREL_LO12_NC (the usual pair) and TLSIE_LD_GOTTPREL_PREL19
# (a literal load of the slot). (TLSIE_MOVW_GOTTPREL_G1/G0_NC are left out:
# ld.lld 14 rejects them and GNU ld 2.40 writes a MOVN where the ABI's
# rule asks for MOVZ, so nothing here could confirm an expectation.)
#
# jitrun-args: --base 0x10000000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects every TLSIE relocation)
#
# got_addr(tls_ie.o, v) is the GOT slot that holds v's offset from the
# thread pointer (jitrun's map calls it a `tp-offset` entry; got_addr
# finds those entries for thread-local symbols). Its value
# is not a fixed number (see tls_le.s); tls_models.s ties it to the
# local-exec encodings. Here: the instructions reach the slots, each
# variable has one slot, and slots of variables of one section differ by
# the variables' distance.
# ADRP operand 1: page delta to the slot; LDRXui operand 2: slot[11:3];
# LDR literal operand 1: (slot - P) / 4.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        mrs     x8, tpidr_el0
        ret
        .size   main, .-main

# jitlink-check: decode_operand(ie_adrp_b, 1) << 12 = \
# jitlink-check:     (got_addr(tls_ie.o, tv_b) & 0xfffffffffffff000) - (ie_adrp_b & 0xfffffffffffff000)
# jitlink-check: decode_operand(ie_ldr_b, 2) = got_addr(tls_ie.o, tv_b)[11:3]
# jitlink-check: (*{4}ie_ldr_b)[9:0] = 1
        .globl  ie_adrp_b, ie_ldr_b
        .p2align 2
ie_adrp_b:
        adrp    x0, :gottprel:tv_b
        .size   ie_adrp_b, 4
ie_ldr_b:
        ldr     x1, [x0, #:gottprel_lo12:tv_b]
        .size   ie_ldr_b, 4

# jitlink-check: decode_operand(ie_adrp_a, 1) << 12 = \
# jitlink-check:     (got_addr(tls_ie.o, tv_a) & 0xfffffffffffff000) - (ie_adrp_a & 0xfffffffffffff000)
# jitlink-check: decode_operand(ie_ldr_a, 2) = got_addr(tls_ie.o, tv_a)[11:3]
# jitlink-check: (*{8}got_addr(tls_ie.o, tv_b)) - (*{8}got_addr(tls_ie.o, tv_a)) = tv_b - tv_a
        .globl  ie_adrp_a, ie_ldr_a
ie_adrp_a:
        adrp    x2, :gottprel:tv_a
        .size   ie_adrp_a, 4
ie_ldr_a:
        ldr     x2, [x2, #:gottprel_lo12:tv_a]
        .size   ie_ldr_a, 4

# The literal load of tv_b's slot.
# jitlink-check: decode_operand(ie_lit_b, 1) << 2 = got_addr(tls_ie.o, tv_b) - ie_lit_b
# jitlink-check: (*{4}ie_lit_b)[31:24] = 0x58
        .globl  ie_lit_b
ie_lit_b:
        ldr     x3, :gottprel:tv_b
        .size   ie_lit_b, 4

# A .tbss variable.
# jitlink-check: decode_operand(ie_adrp_z, 1) << 12 = \
# jitlink-check:     (got_addr(tls_ie.o, tv_z) & 0xfffffffffffff000) - (ie_adrp_z & 0xfffffffffffff000)
# jitlink-check: decode_operand(ie_ldr_z, 2) = got_addr(tls_ie.o, tv_z)[11:3]
        .globl  ie_adrp_z, ie_ldr_z
ie_adrp_z:
        adrp    x5, :gottprel:tv_z
        .size   ie_adrp_z, 4
ie_ldr_z:
        ldr     x5, [x5, #:gottprel_lo12:tv_z]
        .size   ie_ldr_z, 4
        ret

        .section .tdata,"awT",@progbits
        .p2align 4
        .globl  tv_a, tv_b
        .type   tv_a,@object
        .type   tv_b,@object
        .quad   0x1111
tv_a:
        .quad   0xaaaa
        .size   tv_a, 8
        .skip   0x28
tv_b:
        .quad   0xbbbb
        .size   tv_b, 8

        .section .tbss,"awT",@nobits
        .p2align 3
        .globl  tv_z
        .type   tv_z,@object
        .skip   0x40
tv_z:
        .skip   8
        .size   tv_z, 8
