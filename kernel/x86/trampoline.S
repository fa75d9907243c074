// Application-processor start-up code.
//
// An AP woken by a STARTUP IPI begins in 16-bit real mode at the start of the
// trampoline page T (below 1 MiB; bi->trampoline), CS = T/16, IP = 0. The bytes
// from trampoline_start to trampoline_end are copied there by smp.c, which also
// patches the fields marked "set by smp.c". The code switches to 32-bit protected
// mode, then to long mode, and jumps to ap_entry64 in the kernel image.
//
// Long mode needs a page table whose top level is below 4 GiB (CR3 is loaded
// with a 32-bit mov) and which maps the running code at its physical address.
// The kernel's own PML4 may be anywhere, so the trampoline page itself serves as
// that temporary PML4; only two of its entries are ever walked:
//   [0]   maps T to itself through one more page that smp.c allocates (anywhere);
//   [511] is copied from the kernel's PML4, so the kernel image is mapped too.
// Entry 0 occupies the first 8 bytes, exactly where the AP starts executing, so
// smp.c chooses its bits so that they also decode as "jae +rel8": after INIT the
// carry flag is clear, the jump is always taken, and it lands in the nop sled
// that runs up to the real code at TR_CODE (smp.c explains the choice of bits).

#define TR_CODE 0x90          // past the furthest landing point of entry 0's jump
#define CR0_PE 0x1
#define CR0_PG 0x80000000
#define CR4_PAE 0x20
#define MSR_EFER 0xc0000080
#define SEL_CODE32 0x08
#define SEL_DATA 0x10
#define SEL_CODE64 0x18

#define OFF(sym) ((sym) - trampoline_start)

    .section .rodata.trampoline, "a"
    .globl trampoline_start, trampoline_end
    .globl tr_gdt, tr_gdtr, tr_far32, tr_far64, tr_efer, tr_pm32, tr_lm64
    .code16
trampoline_start:
    .quad 0                   // temporary PML4 entry 0, also "jae" (set by smp.c)
    .org TR_CODE, 0x90        // nop sled
    cli
    mov %cs, %ax
    mov %ax, %ds
    xor %ebx, %ebx
    mov %ax, %bx
    shl $4, %ebx              // %ebx = T, kept through the mode switches
    lgdtl OFF(tr_gdtr)
    mov %cr0, %eax
    or $CR0_PE, %eax
    mov %eax, %cr0
    ljmpl *OFF(tr_far32)

    .code32
tr_pm32:
    mov $SEL_DATA, %ax
    mov %ax, %ds
    mov %ax, %es
    mov %ax, %ss
    mov %cr4, %eax
    or $CR4_PAE, %eax
    mov %eax, %cr4
    mov %ebx, %cr3            // T is the PML4
    mov $MSR_EFER, %ecx       // long mode, and NX as the kernel's tables use it
    mov OFF(tr_efer)(%ebx), %eax
    xor %edx, %edx
    wrmsr
    mov %cr0, %eax
    or $CR0_PG, %eax          // paging on: now in compatibility mode
    mov %eax, %cr0
    ljmpl *OFF(tr_far64)(%ebx)

    .code64
tr_lm64:
    movabs $ap_entry64, %rax  // the kernel image, mapped through entry 511
    jmp *%rax

    .balign 8
tr_gdt:
    .quad 0
    .quad 0x00cf9a000000ffff  // SEL_CODE32: 32-bit code, base 0, 4 GiB
    .quad 0x00cf92000000ffff  // SEL_DATA: data, base 0, 4 GiB
    .quad 0x00af9a000000ffff  // SEL_CODE64: 64-bit code
tr_gdtr:
    .word 4 * 8 - 1
    .long 0                   // T + OFF(tr_gdt) (set by smp.c)
tr_far32:
    .long 0                   // T + OFF(tr_pm32) (set by smp.c)
    .word SEL_CODE32
tr_far64:
    .long 0                   // T + OFF(tr_lm64) (set by smp.c)
    .word SEL_CODE64
tr_efer:
    .long 0                   // boot CPU's EFER: LME, NXE, SCE (set by smp.c)
trampoline_end:

// In the kernel image, still on the temporary page table: switch to the kernel's
// page table (which maps the stacks), take a start-up ticket that selects this
// AP's boot stack, and continue in C.
    .text
    .globl ap_entry64
    .type ap_entry64, @function
ap_entry64:
    mov ap_boot_cr3(%rip), %rax
    mov %rax, %cr3
    mov $1, %eax
    lock xaddl %eax, ap_ticket(%rip)
    cmp ap_nstacks(%rip), %eax
    jae 2f                    // more APs than stacks: cannot happen, but never run wild
    lea ap_stack_top(%rip), %rdx
    mov (%rdx,%rax,8), %rsp
    xor %ebp, %ebp            // end of the frame-pointer chain
    call ap_main
2:  cli
    hlt
    jmp 2b
    .size ap_entry64, . - ap_entry64
