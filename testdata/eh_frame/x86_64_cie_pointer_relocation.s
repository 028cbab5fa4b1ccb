# An .eh_frame whose FDE's CIE pointer is a relocation (R_X86_64_PC32
# against the section's own start, + 2 * the field's offset: the value is
# field - CIE, which no layout changes). jitrun must apply it before
# reading the FDE.
        .text
        .globl  main
        .type   main, @function
main:
        xorl    %eax, %eax
        ret
        .size   main, .-main

        .section .eh_frame,"a",@progbits
        .p2align 3
cie:
        .long   20              # length
        .long   0               # CIE id
        .byte   1               # version
        .asciz  "zR"
        .uleb128 1              # code alignment
        .sleb128 -8             # data alignment
        .uleb128 16             # return address: rip
        .uleb128 1              # augmentation data length
        .byte   0x1b            # FDE pointers: pc-relative sdata4
        .byte   0x0c, 7, 8      # DW_CFA_def_cfa rsp, 8
        .byte   0x90, 1         # DW_CFA_offset rip, cfa-8
        .byte   0, 0            # padding
fde:
        .long   20              # length
cie_pointer:
        .reloc  cie_pointer, R_X86_64_PC32, cie + 2 * (cie_pointer - cie)
        .long   0
        .long   main - .        # pc_begin
        .long   3               # pc_range
        .uleb128 0              # augmentation data length
        .byte   0, 0, 0, 0, 0, 0, 0
