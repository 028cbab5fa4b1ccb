# One thread-local variable reached through each access model, and what
# the linker-made words hold, tied together: the local-exec immediates
# (TPREL), the initial-exec GOT slot (TPREL), the TLS descriptor's
# argument word (TPREL for a block in static TLS, as glibc's static
# descriptors and jitrun's) and the general-dynamic pair's offset word
# (DTPREL: TPREL(v) - DTPREL(v) is the block's own TP offset, the same
# for every variable of the image).
#
# jitrun-args: --base 0x10000000 --define __tls_get_addr=0x7f0000006000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects TLSLE, TLSIE and TLSGD relocations)
#
# These expectations are jitrun's design (TLS in glibc's static TLS, see
# src/host/tls.rs), not something a static linker output shows: GNU ld and
# ld.lld rewrite IE, TLSDESC and GD sequences into LE ones in executables.
# TPREL values are not fixed numbers, so every check compares two
# encodings of one value. Addresses of linker-made words are rebuilt from
# the instructions: Page(adrp) + (adrp's operand 1 << 12) + the low 12
# bits (the ldr's operand 2 << 3, or the add's operand 2).

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# Local exec: TPREL(tv_b) = (le_hi_b's imm12 << 12) + le_lo_b's imm12.
        .globl  le_hi_b, le_lo_b, le_hi_a, le_lo_a
        .p2align 2
le_hi_b:
        add     x1, x8, #:tprel_hi12:tv_b, lsl #12
        .size   le_hi_b, 4
le_lo_b:
        add     x1, x1, #:tprel_lo12_nc:tv_b
        .size   le_lo_b, 4
le_hi_a:
        add     x1, x8, #:tprel_hi12:tv_a, lsl #12
        .size   le_hi_a, 4
le_lo_a:
        add     x1, x1, #:tprel_lo12_nc:tv_a
        .size   le_lo_a, 4

# Initial exec: the slot holds TPREL(tv_b).
# jitlink-check: *{8}((ie_adrp_b & 0xfffffffffffff000) + (decode_operand(ie_adrp_b, 1) << 12) + (decode_operand(ie_ldr_b, 2) << 3)) = \
# jitlink-check:     (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2)
        .globl  ie_adrp_b, ie_ldr_b
ie_adrp_b:
        adrp    x0, :gottprel:tv_b
        .size   ie_adrp_b, 4
ie_ldr_b:
        ldr     x0, [x0, #:gottprel_lo12:tv_b]
        .size   ie_ldr_b, 4

# TLS descriptor: word 1 (the resolver's argument) is TPREL(tv_b), and
# the add names the same descriptor as the ldr.
# jitlink-check: *{8}((desc_adrp_b & 0xfffffffffffff000) + (decode_operand(desc_adrp_b, 1) << 12) + (decode_operand(desc_ldr_b, 2) << 3) + 8) = \
# jitlink-check:     (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2)
# jitlink-check: decode_operand(desc_add_b, 2) = decode_operand(desc_ldr_b, 2) << 3
        .globl  desc_adrp_b, desc_ldr_b, desc_add_b, desc_call_b
desc_adrp_b:
        adrp    x0, :tlsdesc:tv_b
        .size   desc_adrp_b, 4
desc_ldr_b:
        ldr     x1, [x0, #:tlsdesc_lo12:tv_b]
        .size   desc_ldr_b, 4
desc_add_b:
        add     x0, x0, #:tlsdesc_lo12:tv_b
        .size   desc_add_b, 4
        .tlsdesccall tv_b
desc_call_b:
        blr     x1
        .size   desc_call_b, 4

# General dynamic (spelled with .reloc: llvm-mc 14 lacks `:tlsgd:`): the
# pair's offset word is DTPREL; TPREL - DTPREL is the same for tv_a and
# tv_b; DTPREL(tv_b) - DTPREL(tv_a) is their distance.
# jitlink-check: (decode_operand(le_hi_b, 2) << 12) + decode_operand(le_lo_b, 2) - \
# jitlink-check:     (*{8}((gd_adrp_b & 0xfffffffffffff000) + (decode_operand(gd_adrp_b, 1) << 12) + decode_operand(gd_add_b, 2) + 8)) = \
# jitlink-check:   (decode_operand(le_hi_a, 2) << 12) + decode_operand(le_lo_a, 2) - \
# jitlink-check:     (*{8}((gd_adrp_a & 0xfffffffffffff000) + (decode_operand(gd_adrp_a, 1) << 12) + decode_operand(gd_add_a, 2) + 8))
# jitlink-check: (*{8}((gd_adrp_b & 0xfffffffffffff000) + (decode_operand(gd_adrp_b, 1) << 12) + decode_operand(gd_add_b, 2) + 8)) - \
# jitlink-check:     (*{8}((gd_adrp_a & 0xfffffffffffff000) + (decode_operand(gd_adrp_a, 1) << 12) + decode_operand(gd_add_a, 2) + 8)) = tv_b - tv_a
# jitlink-check: decode_operand(gd_call_b, 0) << 2 = stub_addr(tls_models.o, __tls_get_addr) - gd_call_b

# got_addr finds every linker-made word of a thread-local variable: with a
# third argument naming its kind (tp-offset, tls-descriptor, tls-index; a
# jitrun extension), and without one the initial-exec slot first. In a
# check, a thread-local symbol's value is its offset in the image's TLS
# block (llvm-jitlink gives it the address of its initial data instead):
# the DTPREL value, which the general-dynamic pair's second word holds.
# jitlink-check: got_addr(tls_models.o, tv_b) = got_addr(tls_models.o, tv_b, tp-offset)
# jitlink-check: got_addr(tls_models.o, tv_b, tp-offset) = \
# jitlink-check:     (ie_adrp_b & 0xfffffffffffff000) + (decode_operand(ie_adrp_b, 1) << 12) + (decode_operand(ie_ldr_b, 2) << 3)
# jitlink-check: got_addr(tls_models.o, tv_b, tls-descriptor) = \
# jitlink-check:     (desc_adrp_b & 0xfffffffffffff000) + (decode_operand(desc_adrp_b, 1) << 12) + decode_operand(desc_add_b, 2)
# jitlink-check: got_addr(tls_models.o, tv_b, tls-index) = \
# jitlink-check:     (gd_adrp_b & 0xfffffffffffff000) + (decode_operand(gd_adrp_b, 1) << 12) + decode_operand(gd_add_b, 2)
# jitlink-check: *{8}(got_addr(tls_models.o, tv_b, tls-index) + 8) = tv_b
# jitlink-check: *{8}(got_addr(tls_models.o, tv_a, tls-index) + 8) = tv_a
# jitlink-check: tv_a = 8
        .globl  gd_adrp_b, gd_add_b, gd_call_b, gd_adrp_a, gd_add_a
        .reloc  ., R_AARCH64_TLSGD_ADR_PAGE21, tv_b
gd_adrp_b:
        adrp    x0, #0
        .size   gd_adrp_b, 4
        .reloc  ., R_AARCH64_TLSGD_ADD_LO12_NC, tv_b
gd_add_b:
        add     x0, x0, #0
        .size   gd_add_b, 4
gd_call_b:
        bl      __tls_get_addr
        .size   gd_call_b, 4
        nop
        .reloc  ., R_AARCH64_TLSGD_ADR_PAGE21, tv_a
gd_adrp_a:
        adrp    x0, #0
        .size   gd_adrp_a, 4
        .reloc  ., R_AARCH64_TLSGD_ADD_LO12_NC, tv_a
gd_add_a:
        add     x0, x0, #0
        .size   gd_add_a, 4
        bl      __tls_get_addr
        nop
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
