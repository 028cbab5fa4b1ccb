# Mach-O arm64: ARM64_RELOC_BRANCH26 between functions of this object,
# ARM64_RELOC_PAGE21 (adrp SYM@PAGE) and ARM64_RELOC_PAGEOFF12
# (add/ldr/str SYM@PAGEOFF) for every access size, integer and FP/SIMD,
# and ARM64_RELOC_ADDEND (the addend of a PAGE21/PAGEOFF12 pair that does
# not fit the instruction), to data of this object and code behind.
#
# jitrun-args: --base 0x7000000000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x7000000000 -slab-page-size 16384
#
# The base is above the 4 GiB __PAGEZERO a macOS process reserves and
# below 512 GiB (a 39-bit address space). Symbols keep their C underscore
# in checks (`_named_data`); jitrun's Mach-O front-end drops it and its
# checker finds `_x` as `x`.
# Operands as on ELF (see ../elf/page.s): ADRP operand 1 = signed page
# delta in 4 KiB pages; ADD operand 2 = imm12; LDR/STR (unsigned offset)
# operand 2 = imm12 scaled by the access size (1, 2, 4, 8, 16). Mach-O
# pages for ADRP are 4 KiB too, whatever the VM page size.

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        ret

# BRANCH26, forward and backward.
# jitlink-check: decode_operand(_call_fwd, 0) << 2 = _callee - _call_fwd
# jitlink-check: decode_operand(_jump_back, 0) << 2 = _main - _jump_back
# jitlink-check: decode_operand(_jump_back, 0)[25:0] = (_main - _jump_back)[27:2]
# jitlink-check: (*{4}_call_fwd)[31:26] = 0x25
        .globl  _call_fwd, _jump_back
        .p2align 2
_call_fwd:
        bl      _callee
_jump_back:
        b       _main

# PAGE21 and PAGEOFF12 on add.
# jitlink-check: decode_operand(_adrp_data, 1) << 12 = \
# jitlink-check:     (_named_data & 0xfffffffffffff000) - (_adrp_data & 0xfffffffffffff000)
# jitlink-check: decode_operand(_adrp_data, 1)[20:0] = (_named_data[32:12] - _adrp_data[32:12])[20:0]
# jitlink-check: decode_operand(_add_data, 2) = _named_data[11:0]
# jitlink-check: decode_operand(_add_data, 3) = 0
        .globl  _adrp_data, _add_data
_adrp_data:
        adrp    x0, _named_data@PAGE
_add_data:
        add     x1, x0, _named_data@PAGEOFF

# PAGEOFF12 on loads and stores: the field is scaled by the access size.
# jitlink-check: decode_operand(_ldrb_data, 2) = (_named_data + 1)[11:0]
# jitlink-check: decode_operand(_ldrsb_data, 2) = (_named_data + 3)[11:0]
# jitlink-check: decode_operand(_ldrh_data, 2) = (_named_data + 2)[11:1]
# jitlink-check: decode_operand(_ldrsh_data, 2) = (_named_data + 6)[11:1]
# jitlink-check: decode_operand(_ldr_w_data, 2) = (_named_data + 4)[11:2]
# jitlink-check: decode_operand(_ldrsw_data, 2) = (_named_data + 12)[11:2]
# jitlink-check: decode_operand(_ldr_x_data, 2) = (_named_data + 8)[11:3]
# jitlink-check: decode_operand(_str_x_data, 2) = (_named_data + 16)[11:3]
# jitlink-check: decode_operand(_ldr_b_data, 2) = (_named_data + 5)[11:0]
# jitlink-check: decode_operand(_ldr_h_data, 2) = (_named_data + 10)[11:1]
# jitlink-check: decode_operand(_ldr_s_data, 2) = (_named_data + 20)[11:2]
# jitlink-check: decode_operand(_ldr_d_data, 2) = (_named_data + 24)[11:3]
# jitlink-check: decode_operand(_ldr_q_data, 2) = (_named_data + 16)[11:4]
# jitlink-check: decode_operand(_str_q_data, 2) = (_named_data + 32)[11:4]
        .globl  _ldrb_data, _ldrsb_data, _ldrh_data, _ldrsh_data, _ldr_w_data, _ldrsw_data
        .globl  _ldr_x_data, _str_x_data, _ldr_b_data, _ldr_h_data, _ldr_s_data, _ldr_d_data
        .globl  _ldr_q_data, _str_q_data
_ldrb_data:
        ldrb    w2, [x0, _named_data@PAGEOFF+1]
_ldrsb_data:
        ldrsb   w2, [x0, _named_data@PAGEOFF+3]
_ldrh_data:
        ldrh    w2, [x0, _named_data@PAGEOFF+2]
_ldrsh_data:
        ldrsh   x2, [x0, _named_data@PAGEOFF+6]
_ldr_w_data:
        ldr     w2, [x0, _named_data@PAGEOFF+4]
_ldrsw_data:
        ldrsw   x2, [x0, _named_data@PAGEOFF+12]
_ldr_x_data:
        ldr     x2, [x0, _named_data@PAGEOFF+8]
_str_x_data:
        str     x2, [x0, _named_data@PAGEOFF+16]
_ldr_b_data:
        ldr     b2, [x0, _named_data@PAGEOFF+5]
_ldr_h_data:
        ldr     h2, [x0, _named_data@PAGEOFF+10]
_ldr_s_data:
        ldr     s2, [x0, _named_data@PAGEOFF+20]
_ldr_d_data:
        ldr     d2, [x0, _named_data@PAGEOFF+24]
_ldr_q_data:
        ldr     q2, [x0, _named_data@PAGEOFF+16]
_str_q_data:
        str     q2, [x0, _named_data@PAGEOFF+32]

# ARM64_RELOC_ADDEND: addends beyond the instruction's field (0x12348 is
# 18 pages and 0x348 bytes on).
# jitlink-check: decode_operand(_adrp_addend, 1) << 12 = \
# jitlink-check:     ((_named_data + 0x12348) & 0xfffffffffffff000) - (_adrp_addend & 0xfffffffffffff000)
# jitlink-check: decode_operand(_add_addend, 2) = (_named_data + 0x12348)[11:0]
# jitlink-check: decode_operand(_ldr_addend, 2) = (_named_data + 0x12348)[11:3]
        .globl  _adrp_addend, _add_addend, _ldr_addend
_adrp_addend:
        adrp    x3, _named_data@PAGE+0x12348
_add_addend:
        add     x4, x3, _named_data@PAGEOFF+0x12348
_ldr_addend:
        ldr     x5, [x3, _named_data@PAGEOFF+0x12348]

        .globl  _callee
        .p2align 2
_callee:
        nop
        ret

        .space  0x3450

# A page delta backward, to code.
# jitlink-check: decode_operand(_adrp_back, 1) << 12 = \
# jitlink-check:     (_main & 0xfffffffffffff000) - (_adrp_back & 0xfffffffffffff000)
# jitlink-check: decode_operand(_adrp_back, 1)[20:0] = (_main[32:12] - _adrp_back[32:12])[20:0]
# jitlink-check: decode_operand(_add_back, 2) = _main[11:0]
        .globl  _adrp_back, _add_back
        .p2align 2
_adrp_back:
        adrp    x6, _main@PAGE
_add_back:
        add     x7, x6, _main@PAGEOFF
        ret

        .section __DATA,__data
        .space  0x7f0
        .globl  _named_data
        .p2align 4
_named_data:
        .quad   0x1111111111111111, 0x2222222222222222
        .quad   0x3333333333333333, 0x4444444444444444
        .space  0x12348
        .quad   0x5555555555555555

.subsections_via_symbols
