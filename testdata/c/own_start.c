// jitrun-test: libs=-nostartfiles
// jitrun-test: args=one two
// A program with its own _start (cc -nostartfiles): it is entered as the
// kernel enters a process, the stack pointer at argc (16-byte aligned), then argv,
// envp and the auxiliary vector; nobody runs its constructors.
#include <elf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void _start(void);
void c_start(uint64_t *sp);

#if defined(__x86_64__)
__asm__(".globl _start\n"
        ".type _start, @function\n"
        "_start:\n"
        "    mov %rsp, %rdi\n"
        "    xor %ebp, %ebp\n"
        "    and $-16, %rsp\n"
        "    call c_start\n"
        "    hlt\n");
#elif defined(__aarch64__)
__asm__(".globl _start\n"
        ".type _start, %function\n"
        "_start:\n"
        "    mov x0, sp\n"
        "    mov x29, #0\n"
        "    mov x30, #0\n"
        "    and x1, x0, #-16\n"
        "    mov sp, x1\n"
        "    bl c_start\n"
        "    brk #0\n");
#endif

static int constructed;
__attribute__((constructor)) static void construct(void) { constructed = 1; }

void c_start(uint64_t *sp) {
    uint64_t argc = sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    int have_path = 0;
    char **e = envp;
    for (; *e; e++)
        have_path |= strncmp(*e, "PATH=", 5) == 0;
    Elf64_auxv_t *aux = (Elf64_auxv_t *)(e + 1);
    uint64_t page = 0, entry = 0, phdr = 0, phnum = 0;
    for (; aux->a_type != AT_NULL; aux++) {
        if (aux->a_type == AT_PAGESZ) page = aux->a_un.a_val;
        if (aux->a_type == AT_ENTRY) entry = aux->a_un.a_val;
        if (aux->a_type == AT_PHDR) phdr = aux->a_un.a_val;
        if (aux->a_type == AT_PHNUM) phnum = aux->a_un.a_val;
    }
    // The program's own headers, found as ld.so finds them: the load bias
    // from PT_PHDR when there is one, else addresses are absolute.
    const Elf64_Phdr *ph = (const Elf64_Phdr *)(uintptr_t)phdr;
    uint64_t bias = 0;
    for (uint64_t i = 0; i < phnum; i++)
        if (ph[i].p_type == PT_PHDR) bias = phdr - ph[i].p_vaddr;
    int start_in_code = 0;
    for (uint64_t i = 0; i < phnum; i++) {
        uint64_t from = bias + ph[i].p_vaddr, start = (uint64_t)(uintptr_t)_start;
        if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X) && from <= start && start < from + ph[i].p_memsz)
            start_in_code = 1;
    }
    printf("aligned %d, argc %d:", (int)((uintptr_t)sp % 16 == 0), (int)argc);
    for (uint64_t i = 1; i < argc; i++)
        printf(" %s", argv[i]);
    printf("\nnull after argv %d, PATH in envp %d, page %d, AT_ENTRY is _start %d\n", argv[argc] == NULL, have_path,
           (int)page, entry == (uint64_t)(uintptr_t)_start);
    printf("_start in an executable PT_LOAD of AT_PHDR: %d\n", start_in_code);
    printf("constructors ran: %d\n", constructed);
    exit(40 + (int)argc);
}
