# GOT-indirect addressing with R_AARCH64_ADR_GOT_PAGE (`adrp xN, :got:S`)
# and R_AARCH64_LD64_GOT_LO12_NC (`ldr xN, [xN, :got_lo12:S]`), to an
# external absolute symbol far from the image, to data and to a function
# of this object; the GOT slots hold the symbols' addresses, and every
# reference to one symbol uses its one slot.
#
# jitrun-args: --base 0x10000000 --define ext_data=0x7f0000003000 --define ext_var=0x7f0000004008
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs ext_data=0x7f0000003000 -abs ext_var=0x7f0000004008
#
# ADRP operand 1 is the signed page delta to the slot's page; the LDR's
# operand 2 is the slot's low 12 bits divided by 8 (LDRXui scales).
# The externals lie more than 4 GiB away, so no linker can turn these
# loads into direct ADRP+ADD or ADR; the pairs to this object's symbols
# are not adjacent (an instruction sits between), so a linker that relaxes
# an adjacent `adrp xN, :got:S; ldr xN, [xN, :got_lo12:S]` into
# `adrp; add` or `nop; adr` when the target is in range (ld.lld 14 does;
# so do LLVM JITLink's GOT optimizations upstream, see
# ELF_got_plt_optimizations.s) leaves them alone too.

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# An external, adjacent pair.
# jitlink-check: *{8}got_addr(got.o, ext_data) = ext_data
# jitlink-check: decode_operand(got_adrp_ext, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, ext_data) & 0xfffffffffffff000) - (got_adrp_ext & 0xfffffffffffff000)
# jitlink-check: decode_operand(got_adrp_ext, 1)[20:0] = \
# jitlink-check:     (got_addr(got.o, ext_data)[32:12] - got_adrp_ext[32:12])[20:0]
# jitlink-check: decode_operand(got_ldr_ext, 2) = got_addr(got.o, ext_data)[11:3]
# jitlink-check: decode_operand(got_ldr_ext, 2) << 3 = got_addr(got.o, ext_data)[11:0]
# The slot is 8-byte aligned, and the instructions keep their registers.
# jitlink-check: got_addr(got.o, ext_data)[2:0] = 0
# jitlink-check: (*{4}got_adrp_ext)[4:0] = 2
# jitlink-check: (*{4}got_ldr_ext)[9:0] = 0x43
        .globl  got_adrp_ext, got_ldr_ext
        .p2align 2
got_adrp_ext:
        adrp    x2, :got:ext_data
        .size   got_adrp_ext, 4
got_ldr_ext:
        ldr     x3, [x2, :got_lo12:ext_data]
        .size   got_ldr_ext, 4

# A second external: its own slot.
# jitlink-check: *{8}got_addr(got.o, ext_var) = ext_var
# jitlink-check: *{8}got_addr(got.o, ext_var) = 0x7f0000004008
# jitlink-check: decode_operand(got_adrp_var, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, ext_var) & 0xfffffffffffff000) - (got_adrp_var & 0xfffffffffffff000)
# jitlink-check: decode_operand(got_ldr_var, 2) = got_addr(got.o, ext_var)[11:3]
        .globl  got_adrp_var, got_ldr_var
got_adrp_var:
        adrp    x4, :got:ext_var
        .size   got_adrp_var, 4
got_ldr_var:
        ldr     x4, [x4, :got_lo12:ext_var]
        .size   got_ldr_var, 4

# Data of this object through the GOT (pair split by a nop).
# jitlink-check: *{8}got_addr(got.o, local_data) = local_data
# jitlink-check: decode_operand(got_adrp_data, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, local_data) & 0xfffffffffffff000) - (got_adrp_data & 0xfffffffffffff000)
# jitlink-check: decode_operand(got_ldr_data, 2) = got_addr(got.o, local_data)[11:3]
        .globl  got_adrp_data, got_ldr_data
got_adrp_data:
        adrp    x0, :got:local_data
        .size   got_adrp_data, 4
        nop
got_ldr_data:
        ldr     x0, [x0, :got_lo12:local_data]
        .size   got_ldr_data, 4

# A function of this object through the GOT (its address, not a stub).
# jitlink-check: *{8}got_addr(got.o, local_func) = local_func
# jitlink-check: decode_operand(got_adrp_func, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, local_func) & 0xfffffffffffff000) - (got_adrp_func & 0xfffffffffffff000)
# jitlink-check: decode_operand(got_ldr_func, 2) = got_addr(got.o, local_func)[11:3]
        .globl  got_adrp_func, got_ldr_func
got_adrp_func:
        adrp    x5, :got:local_func
        .size   got_adrp_func, 4
        nop
got_ldr_func:
        ldr     x6, [x5, :got_lo12:local_func]
        .size   got_ldr_func, 4

# Another reference to ext_data, later in the code: the same slot.
# jitlink-check: decode_operand(got_adrp_ext2, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, ext_data) & 0xfffffffffffff000) - (got_adrp_ext2 & 0xfffffffffffff000)
# jitlink-check: decode_operand(got_ldr_ext2, 2) = got_addr(got.o, ext_data)[11:3]
        .globl  got_adrp_ext2, got_ldr_ext2
        .skip   0x2000
got_adrp_ext2:
        adrp    x9, :got:ext_data
        .size   got_adrp_ext2, 4
got_ldr_ext2:
        ldr     x9, [x9, :got_lo12:ext_data]
        .size   got_ldr_ext2, 4
        ret

        .globl  local_func
        .p2align 2
        .type   local_func,@function
local_func:
        ret
        .size   local_func, .-local_func

        .data
        .p2align 3
        .globl  local_data
local_data:
        .quad   42
        .size   local_data, 8
