# General-dynamic TLS (gcc -mtls-dialect=trad): R_AARCH64_TLSGD_ADR_PAGE21
# and R_AARCH64_TLSGD_ADD_LO12_NC make x0 the address of a {module id,
# offset} pair (a tls_index) in the GOT, then `bl __tls_get_addr`
# (R_AARCH64_CALL26, through a stub: the function is far away).
# llvm-mc 14 cannot parse `:tlsgd:` / `:tlsgd_lo12:` (gcc's spelling,
# which GNU as takes), so the relocations are written with .reloc before
# instructions whose fields are zero, giving the same object code.
#
# jitrun-args: --base 0x10000000 --define __tls_get_addr=0x7f0000006000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects R_AARCH64_TLSGD_*)
#
# The pair's address is Page(adrp) + (adrp's operand 1 << 12) + the add's
# operand 2. Its words: the module id (the same for both variables: one
# image, one TLS module) and the variable's offset in the module's block
# (offsets of variables of one section differ by their distance). The
# values themselves are jitrun's (glibc's module id, the block layout).

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# jitlink-check: decode_operand(gd_call_b, 0) << 2 = stub_addr(tls_gd.o, __tls_get_addr) - gd_call_b
# jitlink-check: decode_operand(gd_call_a, 0) << 2 = stub_addr(tls_gd.o, __tls_get_addr) - gd_call_a
# jitlink-check: decode_operand(gd_add_b, 3) = 0
# jitlink-check: (*{4}gd_add_b)[9:0] = 0
# jitlink-check: *{8}((gd_adrp_b & 0xfffffffffffff000) + (decode_operand(gd_adrp_b, 1) << 12) + decode_operand(gd_add_b, 2)) = \
# jitlink-check:     *{8}((gd_adrp_a & 0xfffffffffffff000) + (decode_operand(gd_adrp_a, 1) << 12) + decode_operand(gd_add_a, 2))
# jitlink-check: (*{8}((gd_adrp_b & 0xfffffffffffff000) + (decode_operand(gd_adrp_b, 1) << 12) + decode_operand(gd_add_b, 2) + 8)) - \
# jitlink-check:     (*{8}((gd_adrp_a & 0xfffffffffffff000) + (decode_operand(gd_adrp_a, 1) << 12) + decode_operand(gd_add_a, 2) + 8)) = tv_b - tv_a
        .globl  gd_adrp_b, gd_add_b, gd_call_b, gd_adrp_a, gd_add_a, gd_call_a
        .p2align 2
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
gd_call_a:
        bl      __tls_get_addr
        .size   gd_call_a, 4
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
