# The other GOT forms, which llvm-jitlink 19 rejects:
# R_AARCH64_LD64_GOTPAGE_LO15 (`ldr xN, [xM, :gotpage_lo15:S]`, after
# `adrp xM, _GLOBAL_OFFSET_TABLE_`, as gcc -fno-plt -mcmodel=small -fpic
# code does) and R_AARCH64_GOT_LD_PREL19 (`ldr xN, :got:S`, a literal load
# of the slot), to an external absolute symbol and to data and code of
# this object; plus the ADRP to _GLOBAL_OFFSET_TABLE_ itself.
#
# jitrun-args: --base 0x10000000 --define ext_data=0x7f0000003000
# llvm-jitlink-args: (none: llvm-jitlink 19 rejects R_AARCH64_LD64_GOTPAGE_LO15 and R_AARCH64_GOT_LD_PREL19)
#
# GOTPAGE_LO15 puts G(S) - Page(_GLOBAL_OFFSET_TABLE_), 8-byte scaled,
# in the LDR's imm12 (operand 2): bits [14:3] of that distance, which must
# be below 32 KiB. GOT_LD_PREL19 puts G(S) - P, word scaled, in the LDR
# literal's imm19 (operand 1). The checks name the GOT base as the symbol
# _GLOBAL_OFFSET_TABLE_, which the linker defines (LLVM's tests use
# section_addr(FILE, $__GOT) for its start).

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# The GOT base's page.
# jitlink-check: decode_operand(adrp_gotbase, 1) << 12 = \
# jitlink-check:     (_GLOBAL_OFFSET_TABLE_ & 0xfffffffffffff000) - (adrp_gotbase & 0xfffffffffffff000)
        .globl  adrp_gotbase
        .p2align 2
adrp_gotbase:
        adrp    x8, _GLOBAL_OFFSET_TABLE_
        .size   adrp_gotbase, 4

# LD64_GOTPAGE_LO15 to an external, data and a function of this object.
# jitlink-check: *{8}got_addr(got_ld.o, ext_data) = ext_data
# jitlink-check: decode_operand(lo15_ext, 2) = \
# jitlink-check:     (got_addr(got_ld.o, ext_data) - (_GLOBAL_OFFSET_TABLE_ & 0xfffffffffffff000))[14:3]
# jitlink-check: decode_operand(lo15_ext, 2) << 3 = \
# jitlink-check:     got_addr(got_ld.o, ext_data) - (_GLOBAL_OFFSET_TABLE_ & 0xfffffffffffff000)
# jitlink-check: *{8}got_addr(got_ld.o, local_data) = local_data
# jitlink-check: decode_operand(lo15_data, 2) << 3 = \
# jitlink-check:     got_addr(got_ld.o, local_data) - (_GLOBAL_OFFSET_TABLE_ & 0xfffffffffffff000)
# jitlink-check: *{8}got_addr(got_ld.o, local_func) = local_func
# jitlink-check: decode_operand(lo15_func, 2) << 3 = \
# jitlink-check:     got_addr(got_ld.o, local_func) - (_GLOBAL_OFFSET_TABLE_ & 0xfffffffffffff000)
# jitlink-check: (*{4}lo15_func)[9:0] = 0x10a
        .globl  lo15_ext, lo15_data, lo15_func
lo15_ext:
        ldr     x0, [x8, :gotpage_lo15:ext_data]
        .size   lo15_ext, 4
lo15_data:
        ldr     x1, [x8, :gotpage_lo15:local_data]
        .size   lo15_data, 4
lo15_func:
        ldr     x10, [x8, :gotpage_lo15:local_func]
        .size   lo15_func, 4

# GOT_LD_PREL19: a literal load of the slot, forward or backward
# depending on the layout; the same slots as above.
# jitlink-check: decode_operand(ldr_got_ext, 1) << 2 = got_addr(got_ld.o, ext_data) - ldr_got_ext
# jitlink-check: decode_operand(ldr_got_ext, 1)[18:0] = (got_addr(got_ld.o, ext_data) - ldr_got_ext)[20:2]
# jitlink-check: decode_operand(ldr_got_data, 1) << 2 = got_addr(got_ld.o, local_data) - ldr_got_data
# jitlink-check: (*{4}ldr_got_ext)[31:24] = 0x58
# jitlink-check: (*{4}ldr_got_ext)[4:0] = 3
        .globl  ldr_got_ext, ldr_got_data
ldr_got_ext:
        ldr     x3, :got:ext_data
        .size   ldr_got_ext, 4
ldr_got_data:
        ldr     x4, :got:local_data
        .size   ldr_got_data, 4
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
