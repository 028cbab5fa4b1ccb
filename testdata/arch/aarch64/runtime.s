// The runtime pieces' code, stub and host jump, assembled for the
// listing runtime.lst beside it, which the unit tests compare with:
//   llvm-mc-14 -triple=aarch64-linux-gnu -filetype=obj -o runtime.o runtime.s
//   llvm-objdump-14 -dr runtime.o | grep -v '^$\|file format\|Disassembly of section' > runtime.lst
.section .text.atexit,"ax",@progbits
.globl atexit
atexit:
  mov x1, xzr
  adrp x2, __dso_handle
  add x2, x2, :lo12:__dso_handle
  b __cxa_atexit
.section .text.at_quick_exit,"ax",@progbits
.globl at_quick_exit
at_quick_exit:
  adrp x1, __dso_handle
  add x1, x1, :lo12:__dso_handle
  b __cxa_at_quick_exit
.section .text.pthread_atfork,"ax",@progbits
.globl pthread_atfork
pthread_atfork:
  adrp x3, __dso_handle
  add x3, x3, :lo12:__dso_handle
  b __register_atfork
.section .text.__jitrun_call_entry,"ax",@progbits
.globl __jitrun_call_entry
__jitrun_call_entry:
  stp x29, x30, [sp, #-32]!
  stp xzr, x30, [sp, #16]
  add x29, sp, #16
  bl __jitrun_call_main
  ldp x29, x30, [sp], #32
  ret
.section .text.__jitrun_call_main,"ax",@progbits
.globl __jitrun_call_main
__jitrun_call_main:
  stp x29, x30, [sp, #-32]!
  mov x29, sp
  str x19, [sp, #16]
  mov x19, x4
  mov x5, x0
  mov w0, w1
  mov x1, x2
  mov x2, x3
  blr x5
  cbz x19, 1f
  blr x19
1:
  ldr x19, [sp, #16]
  ldp x29, x30, [sp], #32
  ret
.section .text.__jitrun_tlsdesc_static,"ax",@progbits
.globl __jitrun_tlsdesc_static
__jitrun_tlsdesc_static:
  ldr x0, [x0, #8]
  ret
.section .text.__jitrun_tlv_get_addr,"ax",@progbits
.globl __jitrun_tlv_get_addr
__jitrun_tlv_get_addr:
  mrs x16, tpidr_el0
  ldr x0, [x0, #16]
  add x0, x16, x0
  ret
.section .text.__jitrun_NSGetEnviron,"ax",@progbits
.globl __jitrun_NSGetEnviron
__jitrun_NSGetEnviron:
  adrp x0, :got:environ
  ldr x0, [x0, :got_lo12:environ]
  ret
.section .text.__jitrun_sincos_stret,"ax",@progbits
.globl __jitrun_sincos_stret
__jitrun_sincos_stret:
  stp x29, x30, [sp, #-32]!
  mov x29, sp
  add x0, sp, #16
  add x1, sp, #24
  bl sincos
  ldp d0, d1, [sp, #16]
  ldp x29, x30, [sp], #32
  ret
.section .text.__jitrun_sincosf_stret,"ax",@progbits
.globl __jitrun_sincosf_stret
__jitrun_sincosf_stret:
  stp x29, x30, [sp, #-32]!
  mov x29, sp
  add x0, sp, #16
  add x1, sp, #20
  bl sincosf
  ldp s0, s1, [sp, #16]
  ldp x29, x30, [sp], #32
  ret
.section .text.__jitrun_assert_rtn,"ax",@progbits
.globl __jitrun_assert_rtn
__jitrun_assert_rtn:
  mov x4, x0
  mov x0, x3
  mov x3, x4
  b __assert_fail
.section .text.__stack_chk_fail_local,"ax",@progbits
.globl __stack_chk_fail_local
__stack_chk_fail_local:
  b __stack_chk_fail
.section .text._init,"ax",@progbits
.globl _init
_init:
  ret
.section .text.init_prologue,"ax",@progbits
.globl init_prologue
init_prologue:
  stp x29, x30, [sp, #-16]!
  mov x29, sp
.section .text.init_epilogue,"ax",@progbits
.globl init_epilogue
init_epilogue:
  ldp x29, x30, [sp], #16
  ret
.section .text.stub,"ax",@progbits
.globl stub
stub:
  adrp x16, 0
  ldr x16, [x16, #0]
  br x16
  udf #0
.section .text.jump_to_absolute,"ax",@progbits
.globl jump_to_absolute
jump_to_absolute:
  ldr x16, #8
  br x16
// Darwin arm64 variadic bridges (templates; each piece uses one with its
// own target): a va_list for 1 to 5 named arguments, stack slots loaded
// into registers, execl/execle's argv.
.section .text.__jitrun_darwin_va_list_1,"ax",@progbits
.globl __jitrun_darwin_va_list_1
__jitrun_darwin_va_list_1:
  sub sp, sp, #48
  stp x29, x30, [sp, #32]
  add x29, sp, #32
  add x9, sp, #48
  str x9, [sp]
  stp xzr, xzr, [sp, #8]
  str xzr, [sp, #24]
  mov x1, sp
  bl vf
  ldp x29, x30, [sp, #32]
  add sp, sp, #48
  ret
.section .text.__jitrun_darwin_va_list_2,"ax",@progbits
.globl __jitrun_darwin_va_list_2
__jitrun_darwin_va_list_2:
  sub sp, sp, #48
  stp x29, x30, [sp, #32]
  add x29, sp, #32
  add x9, sp, #48
  str x9, [sp]
  stp xzr, xzr, [sp, #8]
  str xzr, [sp, #24]
  mov x2, sp
  bl vf
  ldp x29, x30, [sp, #32]
  add sp, sp, #48
  ret
.section .text.__jitrun_darwin_va_list_3,"ax",@progbits
.globl __jitrun_darwin_va_list_3
__jitrun_darwin_va_list_3:
  sub sp, sp, #48
  stp x29, x30, [sp, #32]
  add x29, sp, #32
  add x9, sp, #48
  str x9, [sp]
  stp xzr, xzr, [sp, #8]
  str xzr, [sp, #24]
  mov x3, sp
  bl vf
  ldp x29, x30, [sp, #32]
  add sp, sp, #48
  ret
.section .text.__jitrun_darwin_va_list_4,"ax",@progbits
.globl __jitrun_darwin_va_list_4
__jitrun_darwin_va_list_4:
  sub sp, sp, #48
  stp x29, x30, [sp, #32]
  add x29, sp, #32
  add x9, sp, #48
  str x9, [sp]
  stp xzr, xzr, [sp, #8]
  str xzr, [sp, #24]
  mov x4, sp
  bl vf
  ldp x29, x30, [sp, #32]
  add sp, sp, #48
  ret
.section .text.__jitrun_darwin_va_list_5,"ax",@progbits
.globl __jitrun_darwin_va_list_5
__jitrun_darwin_va_list_5:
  sub sp, sp, #48
  stp x29, x30, [sp, #32]
  add x29, sp, #32
  add x9, sp, #48
  str x9, [sp]
  stp xzr, xzr, [sp, #8]
  str xzr, [sp, #24]
  mov x5, sp
  bl vf
  ldp x29, x30, [sp, #32]
  add sp, sp, #48
  ret
.section .text.__jitrun_darwin_load_x2,"ax",@progbits
.globl __jitrun_darwin_load_x2
__jitrun_darwin_load_x2:
  ldr x2, [sp]
  b f
.section .text.__jitrun_darwin_load_x3,"ax",@progbits
.globl __jitrun_darwin_load_x3
__jitrun_darwin_load_x3:
  ldr x3, [sp]
  b f
.section .text.__jitrun_darwin_load_x1_to_x6,"ax",@progbits
.globl __jitrun_darwin_load_x1_to_x6
__jitrun_darwin_load_x1_to_x6:
  ldp x1, x2, [sp]
  ldp x3, x4, [sp, #16]
  ldp x5, x6, [sp, #32]
  b f
.section .text.__jitrun_darwin_execl,"ax",@progbits
.globl __jitrun_darwin_execl
__jitrun_darwin_execl:
  sub sp, sp, #32
  stp x29, x30, [sp]
  mov x29, sp
  str x1, [sp, #24]
  add x1, sp, #24
  bl execv
  ldp x29, x30, [sp]
  add sp, sp, #32
  ret
.section .text.__jitrun_darwin_execle,"ax",@progbits
.globl __jitrun_darwin_execle
__jitrun_darwin_execle:
  sub sp, sp, #32
  stp x29, x30, [sp]
  mov x29, sp
  str x1, [sp, #24]
  add x9, sp, #24
1:
  ldr x10, [x9], #8
  cbnz x10, 1b
  ldr x2, [x9]
  add x1, sp, #24
  bl execve
  ldp x29, x30, [sp]
  add sp, sp, #32
  ret
