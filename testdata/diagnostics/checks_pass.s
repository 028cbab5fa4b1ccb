# Checks that must pass, in llvm-jitlink syntax (assembled with llvm-mc-14).
        .text
        .globl  main
        .type   main,@function
main:
        xorl    %eax, %eax
        retq
        .size   main, .-main

# Branch to an external through a stub.
# jitlink-check: decode_operand(test_call_ext, 0) = stub_addr(checks_pass.o, ext_func) - next_pc(test_call_ext)
        .globl  test_call_ext
test_call_ext:
        callq   ext_func@PLT
# jitlink-check: decode_operand(test_call_local, 0) = named_func - next_pc(test_call_local)
# A load's address runs to the end of the expression; `\` continues a check.
# jitlink-check: *{1}test_call_local = 0xe8
# jitlink-check: *{4}test_call_local + 1 = \
# jitlink-check:     named_func - next_pc(test_call_local)
        .globl  test_call_local
test_call_local:
        callq   named_func
# jitlink-check: decode_operand(test_gotpcrel, 4) = got_addr(checks_pass.o, ext_data) - next_pc(test_gotpcrel)
# jitlink-check: *{8}got_addr(checks_pass.o, ext_data) = ext_data
test_gotpcrel:
        movq    ext_data@GOTPCREL(%rip), %rax
# jitlink-check: decode_operand(test_lea, 4) = named_data - next_pc(test_lea)
test_lea:
        leaq    named_data(%rip), %rax
# jitlink-check: decode_operand(test_gotoff64, 1) = named_func - _GLOBAL_OFFSET_TABLE_
test_gotoff64:
        movabsq $named_func@GOTOFF, %rax
        .globl  named_func
        .type   named_func,@function
named_func:
        retq
        .size named_func, 1
        .data
        .globl named_data
named_data:
        .quad   0x1122334455667788
# jitlink-check: *{8}named_data = 0x1122334455667788
# jitlink-check: *{4}named_data = 0x55667788
# jitlink-check: (*{8}named_data)[63:32] = 0x11223344
# jitlink-check: *{8}ptr = named_data + 8
# jitlink-check: section_addr(checks_pass.o, .data) = named_data
ptr:
        .quad named_data + 8
