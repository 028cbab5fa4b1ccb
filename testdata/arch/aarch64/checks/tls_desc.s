# TLS descriptors, gcc's default TLS dialect on AArch64 for -fPIC code:
# R_AARCH64_TLSDESC_ADR_PAGE21 (adrp), TLSDESC_LD64_LO12 (ldr of the
# resolver), TLSDESC_ADD_LO12 (add: x0 = the descriptor) and the
# TLSDESC_CALL marker on the blr, for a .tdata and a .tbss variable.
#
# jitrun-args: --base 0x10000000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs __tlsdesc_resolver=0x7f0000005000
#
# A descriptor is two GOT words {resolver, argument}. The code names it
# only through the instructions, so the checks rebuild its address as
# Page(adrp) + (adrp's operand 1 << 12) + (ldr's operand 2 << 3) and
# check that the add names the same address (its operand 2 is the
# unscaled low 12 bits). What the words hold is jitrun's business (for a
# block in static TLS the argument is the variable's offset from the
# thread pointer, as in glibc; llvm-jitlink stores a pointer there):
# tls_models.s checks it. The blr is left as it is (no relaxation), and
# each variable gets its own 16-byte descriptor.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# jitlink-check: decode_operand(desc_add_b, 2) = decode_operand(desc_ldr_b, 2) << 3
# jitlink-check: decode_operand(desc_add_b, 3) = 0
# jitlink-check: (*{4}desc_call_b) = 0xd63f0020
# jitlink-check: (*{4}desc_ldr_b)[9:0] = 1
# jitlink-check: (*{4}desc_add_b)[9:0] = 0
        .globl  desc_adrp_b, desc_ldr_b, desc_add_b, desc_call_b
        .p2align 2
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

# The .tbss variable's descriptor.
# jitlink-check: decode_operand(desc_add_z, 2) = decode_operand(desc_ldr_z, 2) << 3
# jitlink-check: (*{4}desc_call_z) = 0xd63f0040
        .globl  desc_adrp_z, desc_ldr_z, desc_add_z, desc_call_z
desc_adrp_z:
        adrp    x0, :tlsdesc:tv_z
        .size   desc_adrp_z, 4
desc_ldr_z:
        ldr     x2, [x0, #:tlsdesc_lo12:tv_z]
        .size   desc_ldr_z, 4
desc_add_z:
        add     x0, x0, #:tlsdesc_lo12:tv_z
        .size   desc_add_z, 4
        .tlsdesccall tv_z
desc_call_z:
        blr     x2
        .size   desc_call_z, 4
        ret

        .section .tdata,"awT",@progbits
        .p2align 4
        .globl  tv_b
        .type   tv_b,@object
        .skip   0x38
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
