# An x86-64 __eh_frame whose FDE gives its CIE pointer and pc_begin as
# X86_64_RELOC_SUBTRACTOR pairs: the labels after the fields are atoms of
# their own, so the assembler cannot resolve the differences. The bytes in
# place are only the addends; jitrun must apply the pairs before reading
# the FDE (tests/macho.rs; arm64/checks/eh_frame_subtractor.s is the
# arm64 twin).
#
# jitrun-args: --base 0x7000000000
# jitlink-check: *{4}(fde + 4) = 28
# jitlink-check: (fde + 8) + *{8}(fde + 8) = _main
# jitlink-check: *{8}(fde + 16) = 3

        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
_main:
        xorl    %eax, %eax
        ret

        .section __TEXT,__eh_frame,coalesced,no_toc+strip_static_syms+live_support
        .p2align 3
        .globl  cie
cie:
        .long   20              # length
        .long   0               # CIE id
        .byte   1               # version
        .asciz  "zR"
        .byte   1               # code alignment
        .byte   0x78            # data alignment -8
        .byte   16              # return address: rip
        .byte   1               # augmentation data length
        .byte   0x10            # FDE pointers: pc-relative, 8 bytes
        .byte   0x0c, 7, 8      # DW_CFA_def_cfa rsp, 8
        .byte   0x90, 1         # DW_CFA_offset rip, cfa-8
        .byte   0, 0            # DW_CFA_nop

        .globl  fde
fde:
        .long   24              # length
        .long   fde_cie_end - 4 - cie   # CIE pointer: a SUBTRACTOR pair
fde_cie_end:
        .quad   _main - .       # pc_begin: a SUBTRACTOR pair
        .quad   3               # pc_range
        .byte   0               # augmentation data length
        .byte   0, 0, 0         # DW_CFA_nop

        .subsections_via_symbols
