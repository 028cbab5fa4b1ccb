# Mach-O arm64 GOT and stubs: ARM64_RELOC_GOT_LOAD_PAGE21 and
# GOT_LOAD_PAGEOFF12 (adrp/ldr SYM@GOTPAGE/@GOTPAGEOFF) to an external far
# from the image and to data of this object, ARM64_RELOC_POINTER_TO_GOT
# (`.long SYM@GOT - .`, a 32-bit delta to the slot, as in personality
# pointers of __eh_frame), and ARM64_RELOC_BRANCH26 to external
# functions through stubs.
#
# jitrun-args: --base 0x7000000000 --define ext_data=0x7f0000003000 --define ext_func=0x7f0000001000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x7000000000 -slab-page-size 16384 -abs _ext_data=0x7f0000003000 -abs _ext_func=0x7f0000001000
#
# jitrun names the externals without their C underscore (--define
# ext_data=...), llvm-jitlink with it (-abs _ext_data=...); the checks
# write `_ext_data`, which both checkers resolve.
# The externals lie about 1 TiB away: beyond ADRP's +-4 GiB, so no linker
# can relax the GOT loads, and beyond a branch's +-128 MiB, so calls need
# stubs. The pair to this object's data is split by a nop, so it stays a
# GOT load under linkers that relax adjacent pairs (llvm-jitlink does:
# MachO_got_stub_optimizations.s).

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        ret

# jitlink-check: *{8}got_addr(got.o, _ext_data) = _ext_data
# jitlink-check: *{8}got_addr(got.o, _ext_data) = 0x7f0000003000
# jitlink-check: decode_operand(_gotpage_ext, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, _ext_data) & 0xfffffffffffff000) - (_gotpage_ext & 0xfffffffffffff000)
# jitlink-check: decode_operand(_gotpage_ext, 1)[20:0] = \
# jitlink-check:     (got_addr(got.o, _ext_data)[32:12] - _gotpage_ext[32:12])[20:0]
# jitlink-check: decode_operand(_gotpageoff_ext, 2) = got_addr(got.o, _ext_data)[11:3]
# jitlink-check: (*{4}_gotpageoff_ext)[31:22] = 0x3e5
        .globl  _gotpage_ext, _gotpageoff_ext
        .p2align 2
_gotpage_ext:
        adrp    x0, _ext_data@GOTPAGE
_gotpageoff_ext:
        ldr     x1, [x0, _ext_data@GOTPAGEOFF]

# jitlink-check: *{8}got_addr(got.o, _local_data) = _local_data
# jitlink-check: decode_operand(_gotpage_local, 1) << 12 = \
# jitlink-check:     (got_addr(got.o, _local_data) & 0xfffffffffffff000) - (_gotpage_local & 0xfffffffffffff000)
# jitlink-check: decode_operand(_gotpageoff_local, 2) = got_addr(got.o, _local_data)[11:3]
        .globl  _gotpage_local, _gotpageoff_local
_gotpage_local:
        adrp    x2, _local_data@GOTPAGE
        nop
_gotpageoff_local:
        ldr     x2, [x2, _local_data@GOTPAGEOFF]

# Calls through stubs; both to ext_func share one.
# jitlink-check: decode_operand(_call_ext, 0) << 2 = stub_addr(got.o, _ext_func) - _call_ext
# jitlink-check: decode_operand(_call_ext, 0)[25:0] = (stub_addr(got.o, _ext_func) - _call_ext)[27:2]
# jitlink-check: decode_operand(_jump_ext, 0) << 2 = stub_addr(got.o, _ext_func) - _jump_ext
# jitlink-check: *{8}got_addr(got.o, _ext_func) = _ext_func
        .globl  _call_ext, _jump_ext
_call_ext:
        bl      _ext_func
_jump_ext:
        b       _ext_func

        .section __DATA,__data
        .p2align 3
        .globl  _local_data
_local_data:
        .quad   42

# POINTER_TO_GOT: the 32-bit distance from the field to the slot.
# jitlink-check: *{4}_ptr_to_got = (got_addr(got.o, _ext_data) - _ptr_to_got)[31:0]
# jitlink-check: *{4}_ptr_to_got_local = (got_addr(got.o, _local_data) - _ptr_to_got_local)[31:0]
        .globl  _ptr_to_got, _ptr_to_got_local
        .p2align 2
_ptr_to_got:
        .long   _ext_data@GOT - .
_ptr_to_got_local:
        .long   _local_data@GOT - .

.subsections_via_symbols
