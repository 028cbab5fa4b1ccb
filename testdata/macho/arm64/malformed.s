// The object tests/macho.rs corrupts one relocation or symbol of at a
// time (arm64_malformed_relocations_are_clear_errors): an ADDEND pair, a
// BRANCH26, a SUBTRACTOR pair and external symbols.
        .section __TEXT,__text,regular,pure_instructions
        .globl  _main
        .p2align 2
_main:
        adrp    x0, _table@PAGE + 16
        add     x0, x0, _table@PAGEOFF + 16
        bl      _ext
        ret

        .section __DATA,__data
        .globl  _table, _d
        .p2align 3
_table:
        .space  32
_d:
        .quad   _table - _main

        .subsections_via_symbols
