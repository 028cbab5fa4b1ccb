# Calls to external functions through stubs: R_AARCH64_CALL26 (bl) and
# R_AARCH64_JUMP26 (b, a tail call) to functions defined on the command
# line far beyond the +-128 MiB a branch reaches, so every layout must
# route them through a stub inside the image; the GOT slot a stub jumps
# through holds the function's address. Calls to functions of this object
# stay direct (see branches.s).
#
# jitrun-args: --base 0x10000000 --define ext_func=0x7f0000001000 --define ext_other=0x7f0000002000
# llvm-jitlink-args: -noexec -slab-allocate 1Mb -slab-address 0x10000000 -slab-page-size 4096 -abs ext_func=0x7f0000001000 -abs ext_other=0x7f0000002000
#
# stub_addr(FILE, SYM) and got_addr(FILE, SYM) name the object file as
# the test assembles it (stubs.s -> stubs.o).

        .text
        .globl  main
        .p2align 2
        .type   main,@function
main:
        ret
        .size   main, .-main

# Both branch kinds to ext_func reach the same stub.
# jitlink-check: decode_operand(call_ext, 0) << 2 = stub_addr(stubs.o, ext_func) - call_ext
# jitlink-check: decode_operand(call_ext, 0)[25:0] = (stub_addr(stubs.o, ext_func) - call_ext)[27:2]
# jitlink-check: decode_operand(jump_ext, 0) << 2 = stub_addr(stubs.o, ext_func) - jump_ext
# jitlink-check: decode_operand(call_ext_again, 0) << 2 = stub_addr(stubs.o, ext_func) - call_ext_again
# jitlink-check: (*{4}call_ext)[31:26] = 0x25
# jitlink-check: (*{4}jump_ext)[31:26] = 0x5
        .globl  call_ext, jump_ext, call_ext_again
        .p2align 2
call_ext:
        bl      ext_func
        .size   call_ext, 4
jump_ext:
        b       ext_func
        .size   jump_ext, 4
call_ext_again:
        bl      ext_func
        .size   call_ext_again, 4

# Another function, another stub.
# jitlink-check: decode_operand(call_other, 0) << 2 = stub_addr(stubs.o, ext_other) - call_other
        .globl  call_other
call_other:
        bl      ext_other
        .size   call_other, 4

# The slots the stubs jump through.
# jitlink-check: *{8}got_addr(stubs.o, ext_func) = ext_func
# jitlink-check: *{8}got_addr(stubs.o, ext_other) = ext_other
# jitlink-check: *{8}got_addr(stubs.o, ext_other) = 0x7f0000002000
        ret
