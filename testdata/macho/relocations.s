# Every X86_64 Mach-O relocation kind jitrun handles, checked by
# tests/macho.rs after linking at a fixed base with --noexec semantics.
# Build: llvm-mc-14 -triple=x86_64-apple-macosx10.15 -filetype=obj relocations.s -o relocations.o
# The test defines far_data=0xdeadbeef and far_func=0xcafef00d.
# Private labels (L...) get no symbol: the test finds Lprivate_func at
# local_target - 16 and Lprivate_data at data_word - 24, which holds because
# the atoms of a section keep their relative offsets.

        .section __TEXT,__text,regular,pure_instructions
        .p2align 4, 0x90
Lprivate_func:
        retq

        .globl local_target
        .p2align 4, 0x90
local_target:
        xorl %eax, %eax
        retq

# X86_64_RELOC_BRANCH, extern, to a function of this object.
        .globl t_branch_local
t_branch_local:
        callq local_target
        retq

# X86_64_RELOC_BRANCH, extern, to a far function: goes through a stub.
        .globl t_branch_far
t_branch_far:
        callq far_func
        retq

# X86_64_RELOC_GOT_LOAD to a far symbol: keeps the GOT load.
        .globl t_gotload_far
t_gotload_far:
        movq far_data@GOTPCREL(%rip), %rax
        retq

# X86_64_RELOC_GOT_LOAD to a near symbol: relaxed to lea.
        .globl t_gotload_near
t_gotload_near:
        movq data_word@GOTPCREL(%rip), %rcx
        retq

# X86_64_RELOC_GOT (not a movq load): an immediate follows the field.
        .globl t_got_cmp
t_got_cmp:
        cmpq $0, far_data@GOTPCREL(%rip)
        retq

# X86_64_RELOC_SIGNED / _1 / _2 / _4, extern and section-relative.
        .globl t_signed
t_signed:
        movq data_word(%rip), %rax
        .globl t_signed1
t_signed1:
        movb $0x11, data_word(%rip)
        .globl t_signed2
t_signed2:
        movw $0x2222, data_word(%rip)
        .globl t_signed4
t_signed4:
        movl $0x44444444, data_word(%rip)
        .globl t_signed_anon
t_signed_anon:
        leaq Lprivate_data+8(%rip), %rax
        .globl t_signed1_anon
t_signed1_anon:
        movb $0x11, Lprivate_data(%rip)
        .globl t_signed2_anon
t_signed2_anon:
        movw $0x2222, Lprivate_data(%rip)
        .globl t_signed4_anon
t_signed4_anon:
        movl $0x44444444, Lprivate_data(%rip)
        retq

# X86_64_RELOC_TLV: the descriptor's address (relaxed to lea).
        .globl t_tlv
t_tlv:
        movq tls_var@TLVP(%rip), %rdi
        callq *(%rdi)
        retq

        .section __DATA,__data
        .p2align 3
Lprivate_data:
        .quad 0x1111111111111111
# SUBTRACTOR pairs with a private (section-relative) minuend.
Lanon_minuend64:
        .quad Lanon_minuend64 - data_word - 3
Lanon_minuend32:
        .long Lanon_minuend32 - data_word - 3
        .long 0

        .globl data_word
        .p2align 3
data_word:
        .quad 0x0102030405060708
        .globl data_word_alt
        .alt_entry data_word_alt
data_word_alt:
        .quad 0

# X86_64_RELOC_UNSIGNED, 64 and 32 bits, extern and section-relative.
        .globl u64_extern
        .p2align 3
u64_extern:
        .quad local_target + 5
        .globl u32_extern
u32_extern:
        .long far_func
        .long 0
        .globl u64_anon
u64_anon:
        .quad Lprivate_func
        .globl u32_anon
u32_anon:
        .long Lprivate_data + 4
        .long 0

# SUBTRACTOR pairs in both directions, 64 and 32 bits.
        .globl sub_minuend_here64
sub_minuend_here64:
        .quad sub_minuend_here64 - data_word + 7
        .globl sub_subtrahend_here64
sub_subtrahend_here64:
        .quad data_word - sub_subtrahend_here64 - 7
        .globl sub_minuend_here32
sub_minuend_here32:
        .long sub_minuend_here32 - data_word + 7
        .globl sub_subtrahend_here32
sub_subtrahend_here32:
        .long data_word - sub_subtrahend_here32 - 7
        .globl sub_anon_minuend64
sub_anon_minuend64:
        .quad Lprivate_data - sub_anon_minuend64 + 1
        .globl sub_alt_entry64
sub_alt_entry64:
        .quad data_word_alt - u64_extern
        .globl sub_far_apart64
sub_far_apart64:
        .quad local_target - data_word

# X86_64_RELOC_GOT in data: the GOT entry's distance from here.
        .globl got_in_data
got_in_data:
        .long far_data@GOTPCREL + 4

# A weak definition, a private extern, an absolute symbol, a weak reference.
        .globl weak_word
        .weak_definition weak_word
        .p2align 3
weak_word:
        .quad 0x77
        .globl hidden_word
        .private_extern hidden_word
hidden_word:
        .quad hidden_word
        .globl absolute_sym
        absolute_sym = 0x12345
        .globl abs_ref
abs_ref:
        .quad absolute_sym
        .weak_reference missing_weak
        .globl weak_ref
weak_ref:
        .quad missing_weak

# Darwin libc names, bound to their glibc equivalents.
        .globl darwin_names
darwin_names:
        .quad ___stdoutp
        .quad ___stderrp
        .quad ___error
        .quad _environ
        .quad ___bzero

# Common and zero-fill symbols, and section alignment.
        .comm common_sym, 16, 5
        .globl zerofill_sym
.zerofill __DATA,__zfill,zerofill_sym,24,4
        .section __DATA,__aligned
        .p2align 6
        .globl aligned_byte
aligned_byte:
        .byte 1

# A thread-local variable: descriptor in __thread_vars, value in __thread_data.
        .section __DATA,__thread_data,thread_local_regular
        .p2align 2
tls_var$tlv$init:
        .long 42
        .section __DATA,__thread_vars,thread_local_variables
        .globl tls_var
tls_var:
        .quad __tlv_bootstrap
        .quad 0
        .quad tls_var$tlv$init

.subsections_via_symbols
