# Mach-O arm64 data relocations: ARM64_RELOC_UNSIGNED, 64-bit (extern:
# to a symbol, with addends, and to an absolute symbol from the command
# line; to anonymous data, through a section's temporary symbol) and
# 32-bit (an absolute below 4 GiB), and
# ARM64_RELOC_SUBTRACTOR + UNSIGNED pairs (`.quad A - B + C` and `.long`),
# with the field's own atom as subtrahend or as minuend, and an anonymous
# minuend.
#
# jitrun-args: --base 0x7000000000 --define ext_func=0x7f0000001000 --define ext_small=0x87654321
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x7000000000 -slab-page-size 16384 -abs _ext_func=0x7f0000001000 -abs _ext_small=0x87654321
#
# A SUBTRACTOR pair must involve the atom holding the field (or an
# alt_entry of it), as ld64 and LLVM require; an anonymous L label
# cannot be the subtrahend. (LLVM's tests locate anonymous targets with
# section_addr(FILE, __DATA,__data):
# jitrun's section_addr takes exactly two arguments and would split
# `__DATA,__data` at its comma.)

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        ret

        .globl  _local_func
        .p2align 2
_local_func:
Lanon_func:
        nop
Lanon_func_plus4:
        ret

        .section __DATA,__data
        .p2align 3
        .globl  _target
_target:
        .quad   0x1111111111111111
        .quad   0x2222222222222222

# UNSIGNED 64, extern.
# jitlink-check: *{8}_ptr_func = _local_func
# jitlink-check: *{8}_ptr_addend = _target + 0x10
# jitlink-check: *{8}_ptr_ext = _ext_func
# jitlink-check: *{8}_ptr_ext = 0x7f0000001000
# jitlink-check: *{8}_ptr_ext_addend = _ext_func - 0x20
        .globl  _ptr_func, _ptr_addend, _ptr_ext, _ptr_ext_addend
        .p2align 3
_ptr_func:
        .quad   _local_func
_ptr_addend:
        .quad   _target + 0x10
_ptr_ext:
        .quad   _ext_func
_ptr_ext_addend:
        .quad   _ext_func - 0x20

# UNSIGNED 64 to local `L` labels inside a named atom: the assembler
# makes these extern relocations against the atom's symbol plus an offset.
# jitlink-check: *{8}_ptr_local_label = _local_func
# jitlink-check: *{8}_ptr_local_mid = _local_func + 4
        .globl  _ptr_local_label, _ptr_local_mid
_ptr_local_label:
        .quad   Lanon_func
_ptr_local_mid:
        .quad   Lanon_func_plus4

# UNSIGNED 64 to anonymous data: L labels at the start of a section whose
# first symbol (_const_end) comes after them (__TEXT,__const below).
# llvm-mc 14 encodes these references against the section's temporary
# local symbol `ltmp2` plus an offset; other assemblers use non-extern
# (section-numbered) relocations; either way the target is a block no
# global symbol names. The checks place it relative to _const_end,
# assuming the section's pieces stay in order, as jitrun and llvm-jitlink
# keep them.
# jitlink-check: *{8}_ptr_anon_a = _const_end - 16
# jitlink-check: *{8}_ptr_anon_b = _const_end - 8
        .globl  _ptr_anon_a, _ptr_anon_b
_ptr_anon_a:
        .quad   Lconst_a
_ptr_anon_b:
        .quad   Lconst_b

# UNSIGNED 32 to an absolute below 4 GiB.
# jitlink-check: *{4}_word_ext = _ext_small
# jitlink-check: *{4}_word_guard = 0xa5a5a5a5
        .globl  _word_ext, _word_guard
        .p2align 2
_word_ext:
        .long   _ext_small
_word_guard:
        .long   0xa5a5a5a5

# SUBTRACTOR, the field's atom as subtrahend: A - self + C.
# jitlink-check: *{8}_sub_q_fwd = _local_func - _sub_q_fwd
# jitlink-check: *{8}_sub_q_addend = _target - _sub_q_addend + 0x18
# jitlink-check: *{4}_sub_l_fwd = (_local_func - _sub_l_fwd)[31:0]
# jitlink-check: *{4}_sub_l_addend = (_target - _sub_l_addend + 0x18)[31:0]
        .globl  _sub_q_fwd, _sub_q_addend, _sub_l_fwd, _sub_l_addend
        .p2align 3
_sub_q_fwd:
        .quad   _local_func - _sub_q_fwd
_sub_q_addend:
        .quad   _target - _sub_q_addend + 0x18
_sub_l_fwd:
        .long   _local_func - _sub_l_fwd
_sub_l_addend:
        .long   _target - _sub_l_addend + 0x18

# SUBTRACTOR, the field's atom as minuend: self - B + C.
# jitlink-check: *{8}_sub_q_self = _sub_q_self - _local_func
# jitlink-check: *{4}_sub_l_self = (_sub_l_self - _target - 2)[31:0]
        .globl  _sub_q_self, _sub_l_self
        .p2align 3
_sub_q_self:
        .quad   _sub_q_self - _local_func
_sub_l_self:
        .long   _sub_l_self - _target - 2

# SUBTRACTOR with an anonymous minuend: `.quad L - self + C`, L in that
# section (the UNSIGNED half names `ltmp2`).
# jitlink-check: *{8}_sub_anon = _const_end - _sub_anon - 8
# jitlink-check: *{4}_sub_anon_l = (_const_end - _sub_anon_l - 12)[31:0]
        .globl  _sub_anon, _sub_anon_l
        .p2align 3
_sub_anon:
        .quad   Lconst_b - _sub_anon
_sub_anon_l:
        .long   Lconst_a - _sub_anon_l + 4

        .section __TEXT,__const
        .p2align 3
Lconst_a:
        .quad   0x0123456789abcdef
Lconst_b:
        .quad   0xfedcba9876543210
        .globl  _const_end
_const_end:
        .quad   0

.subsections_via_symbols
