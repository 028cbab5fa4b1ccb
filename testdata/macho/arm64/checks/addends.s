# ARM64_RELOC_ADDEND before BRANCH26, PAGE21 and PAGEOFF12 (the addend of
# an instruction lives in the relocation, not in the instruction), a
# BRANCH26 to a local function of another section, a 64-bit
# POINTER_TO_GOT (`.quad sym@GOT`: the slot's address), and a 32-bit
# UNSIGNED with an in-place addend (the image is above 4 GiB: only an
# absolute symbol below fits).
#
# jitrun-args: --base 0x7000000000 --define ext_data=0x7f0000003000 --define ext_small=0x4321

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main, _b_add, _adrp_add, _ldr_add
        .p2align 2
_main:
        ret
# jitlink-check: decode_operand(_b_add, 0) = (_callee + 8 - _b_add)[27:2]
_b_add:
        bl      _callee + 8
# jitlink-check: decode_operand(_adrp_add, 1) = ((_table + 0x1010) & 0xfffffffffffff000) - (_adrp_add & 0xfffffffffffff000) >> 12
_adrp_add:
        adrp    x0, _table@PAGE + 0x1010
# jitlink-check: decode_operand(_ldr_add, 2) = (_table + 0x1010)[11:3]
_ldr_add:
        ldr     x1, [x0, _table@PAGEOFF + 0x1010]

        .section __TEXT,__text_other,regular,pure_instructions
        .globl  _callee
        .p2align 2
_callee:
        nop
        nop
        ret

        .section __DATA,__data
        .globl  _table, _p64got, _p32
        .p2align 3
_table:
        .space  0x1020
# jitlink-check: *{8}_p64got = got_addr(addends.o, _ext_data)
# jitlink-check: *{8}got_addr(addends.o, _ext_data) = 0x7f0000003000
_p64got:
        .quad   _ext_data@GOT
# jitlink-check: *{4}_p32 = 0x4325
_p32:
        .long   _ext_small + 4

        .subsections_via_symbols
