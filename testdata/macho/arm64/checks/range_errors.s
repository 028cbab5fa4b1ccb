# A link that must FAIL: ARM64_RELOC_PAGE21 (adrp _far@PAGE, a direct page
# reference, not a GOT load) to an absolute address about 1 TiB above
# the image; ADRP reaches +-4 GiB, and a linker may not substitute a GOT
# slot for a direct reference, so the only correct outcome is an error.
# (Mach-O arm64 has no conditional-branch relocation: the assembler
# resolves b.cond/cbz/tbz within a section and rejects them across.)
#
# jitrun-args: --base 0x7000000000 --define far_data=0x7f0000000000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x7000000000 -slab-page-size 16384 -abs _far_data=0x7f0000000000
# expect-error: out of range
#
# llvm-jitlink: "... relocation target "_far_data" at address
# 0x7f0000000000 is out of range of Page21 fixup at ...". jitrun's message
# for out-of-range fixups contains "out of range" too, and should name
# the symbol (far_data). No checks: nothing is linked.

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        ret

        .globl  _page_far
_page_far:
        adrp    x0, _far_data@PAGE
        add     x0, x0, _far_data@PAGEOFF
        ret

.subsections_via_symbols
