# Mach-O arm64 thread-local variables: ARM64_RELOC_TLVP_LOAD_PAGE21 and
# TLVP_LOAD_PAGEOFF12 (adrp/ldr SYM@TLVPPAGE/@TLVPPAGEOFF), which load
# the address of the variable's descriptor in __DATA,__thread_vars from a
# GOT-like slot; the code then calls the descriptor's first word with x0
# = the descriptor, as clang emits for `__thread int v`.
#
# jitrun-args: --base 0x7000000000 --define _tlv_bootstrap=0x7f0000007000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x7000000000 -slab-page-size 16384 -abs __tlv_bootstrap=0x7f0000007000
#
# got_addr(tlv.o, _tv) is that slot: it holds the descriptor's address
# (_tv is the descriptor). What the descriptor's words become (ld64
# turns the third into an offset in the thread-local template; a JIT
# installs its own getter in the first) is each linker's design and is not
# checked here. A linker may also relax adrp+ldr into adrp+add of the
# descriptor, as ld64 does; this pair is split by a nop so that it stays
# a slot load.

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        ret

# jitlink-check: *{8}got_addr(tlv.o, _tv) = _tv
# jitlink-check: decode_operand(_tlv_adrp, 1) << 12 = \
# jitlink-check:     (got_addr(tlv.o, _tv) & 0xfffffffffffff000) - (_tlv_adrp & 0xfffffffffffff000)
# jitlink-check: decode_operand(_tlv_ldr, 2) = got_addr(tlv.o, _tv)[11:3]
# The call through the descriptor is left alone.
# jitlink-check: *{4}_tlv_call = 0xd63f0100
        .globl  _get_tv, _tlv_adrp, _tlv_ldr, _tlv_call
        .p2align 2
_get_tv:
        stp     x29, x30, [sp, #-16]!
_tlv_adrp:
        adrp    x0, _tv@TLVPPAGE
        nop
_tlv_ldr:
        ldr     x0, [x0, _tv@TLVPPAGEOFF]
        ldr     x8, [x0]
_tlv_call:
        blr     x8
        ldr     w0, [x0]
        ldp     x29, x30, [sp], #16
        ret

# A second variable, in __thread_bss, reached the same way.
# jitlink-check: *{8}got_addr(tlv.o, _tz) = _tz
# jitlink-check: decode_operand(_tlz_adrp, 1) << 12 = \
# jitlink-check:     (got_addr(tlv.o, _tz) & 0xfffffffffffff000) - (_tlz_adrp & 0xfffffffffffff000)
# jitlink-check: decode_operand(_tlz_ldr, 2) = got_addr(tlv.o, _tz)[11:3]
        .globl  _tlz_adrp, _tlz_ldr
_tlz_adrp:
        adrp    x0, _tz@TLVPPAGE
        nop
_tlz_ldr:
        ldr     x0, [x0, _tz@TLVPPAGEOFF]
        ret

        .section __DATA,__thread_data,thread_local_regular
        .p2align 2
_tv$tlv$init:
        .long   5

.tbss _tz$tlv$init, 8, 3

        .section __DATA,__thread_vars,thread_local_variables
        .globl  _tv, _tz
_tv:
        .quad   __tlv_bootstrap
        .quad   0
        .quad   _tv$tlv$init
_tz:
        .quad   __tlv_bootstrap
        .quad   0
        .quad   _tz$tlv$init

.subsections_via_symbols
