# R_AARCH64_ADR_PREL_PG_HI21_NC (`adrp xN, :pg_hi21_nc:SYM`): the page
# delta without an overflow check, here with addends that cross pages, to
# data of this object and to an absolute symbol far below the image; the
# ADD_ABS_LO12_NC that completes each pair.
#
# jitrun-args: --base 0x10000000 --define ext_low=0x4321
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects R_AARCH64_ADR_PREL_PG_HI21_NC)
#
# ADRP operand 1: the signed page delta in pages; ADD operand 2: imm12.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# jitlink-check: decode_operand(adrp_nc, 1) << 12 = \
# jitlink-check:     ((nc_data + 0x1ff8) & 0xfffffffffffff000) - (adrp_nc & 0xfffffffffffff000)
# jitlink-check: decode_operand(add_nc, 2) = (nc_data + 0x1ff8)[11:0]
# jitlink-check: decode_operand(adrp_nc_low, 1) << 12 = \
# jitlink-check:     ((ext_low + 0x2000) & 0xfffffffffffff000) - (adrp_nc_low & 0xfffffffffffff000)
# jitlink-check: decode_operand(adrp_nc_low, 1)[20:0] = ((ext_low + 0x2000)[32:12] - adrp_nc_low[32:12])[20:0]
# jitlink-check: (*{4}adrp_nc)[31:24] & 0x9f = 0x90
        .globl  adrp_nc, add_nc, adrp_nc_low
        .p2align 2
adrp_nc:
        adrp    x1, :pg_hi21_nc:nc_data+0x1ff8
        .size   adrp_nc, 4
add_nc:
        add     x1, x1, :lo12:nc_data+0x1ff8
        .size   add_nc, 4
adrp_nc_low:
        adrp    x2, :pg_hi21_nc:ext_low+0x2000
        .size   adrp_nc_low, 4
        ret

        .data
        .skip   0x7f0
        .p2align 3
        .globl  nc_data
nc_data:
        .skip   0x2000
        .size   nc_data, .-nc_data
