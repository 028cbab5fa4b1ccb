# Checks that must fail: each names a wrong value.
        .text
        .globl  main
main:
        xorl    %eax, %eax
        retq
# jitlink-check: decode_operand(test_call, 0) = target - next_pc(test_call) + 1
test_call:
        callq   target
target:
        retq
        .data
value:
        .long   42
# jitlink-check: *{4}value = 43
# jitlink-check: *{4}value = 42
