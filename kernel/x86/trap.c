// Exception and interrupt dispatch: the IDT, the trap() entry from trapasm.S,
// handler registration, and exception recovery for the test harness.
#include "x86/trap.h"
#include "lib/panic.h"
#include "mm/usercopy.h"
#include "proc/hangcheck.h"
#include "proc/tickless.h"
#include "proc/proc.h"
#include "sync/percpu.h"
#include "syscall/syscall.h"
#include "x86/gdt.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct idt_gate {
    uint16_t off_lo;
    uint16_t sel;
    uint8_t ist;
    uint8_t type;   // present, DPL, 64-bit interrupt gate
    uint16_t off_mid;
    uint32_t off_hi;
    uint32_t reserved;
} __attribute__((packed));

// One IDT shared by all CPUs: it is written once at boot and only read after.
static struct idt_gate idt[256] __attribute__((aligned(4096)));
static irq_handler_t handlers[256];

extern char trap_vectors_start[]; // 256 stubs, 16 bytes apart (trapasm.S)

static DEFINE_PERCPU(struct kjmp *, recovery);
static DEFINE_PERCPU(uint64_t, recovered_vector);

static void set_gate(int v, int ist)
{
    uint64_t off = (uint64_t)trap_vectors_start + 16 * v;
    idt[v] = (struct idt_gate){
        .off_lo = off & 0xffff,
        .sel = GDT_KCODE,
        .ist = ist,
        .type = 0x8e, // present, DPL 0, interrupt gate (interrupts off on entry)
        .off_mid = (off >> 16) & 0xffff,
        .off_hi = off >> 32,
    };
}

void trap_init(void)
{
    for (int v = 0; v < 256; v++)
        set_gate(v, 0);
    set_gate(T_NMI, IST_NMI);
    set_gate(T_DF, IST_DF);
    set_gate(T_MC, IST_MC);
}

void trap_init_cpu(void)
{
    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) idtr = {sizeof idt - 1, (uint64_t)idt};
    asm volatile("lidt %0" : : "m"(idtr));
}

void irq_register(int vector, irq_handler_t h)
{
    assert(vector >= 32 && vector < 256);
    handlers[vector] = h;
}

static const char *exception_name(uint64_t v)
{
    static const char *names[] = {
        "divide error", "debug", "NMI", "breakpoint", "overflow", "bound range",
        "invalid opcode", "device not available", "double fault", "coprocessor overrun",
        "invalid TSS", "segment not present", "stack fault", "general protection",
        "page fault", "reserved", "x87 FP error", "alignment check", "machine check",
        "SIMD FP error", "virtualization", "control protection",
    };
    return v < ARRAY_SIZE(names) ? names[v] : "exception";
}

void print_trapframe(const struct trapframe *tf)
{
    kprintf("  rip %016lx  cs %04lx  rflags %016lx  err %lx\n", tf->rip, tf->cs, tf->rflags, tf->err);
    kprintf("  rsp %016lx  ss %04lx  cr2 %016lx  cr3 %016lx\n", tf->rsp, tf->ss, read_cr2(), read_cr3());
    kprintf("  rax %016lx  rbx %016lx  rcx %016lx\n", tf->rax, tf->rbx, tf->rcx);
    kprintf("  rdx %016lx  rsi %016lx  rdi %016lx\n", tf->rdx, tf->rsi, tf->rdi);
    kprintf("  rbp %016lx  r8  %016lx  r9  %016lx\n", tf->rbp, tf->r8, tf->r9);
    kprintf("  r10 %016lx  r11 %016lx  r12 %016lx\n", tf->r10, tf->r11, tf->r12);
    kprintf("  r13 %016lx  r14 %016lx  r15 %016lx\n", tf->r13, tf->r14, tf->r15);
}

static DEFINE_PERCPU(bool, catch_panics);

void trap_set_recovery(struct kjmp *j)
{
    this_cpu_write(recovery, j);
    if (!j)
        this_cpu_write(catch_panics, false);
}

void trap_catch_panics(bool on) { this_cpu_write(catch_panics, on); }

void trap_recover_panic(const char *msg)
{
    struct kjmp *j = this_cpu_read(recovery);
    if (!j || !this_cpu_read(catch_panics))
        return;
    kprintf("caught panic on cpu %d: %s\n", cpu_id(), msg);
    backtrace();
    this_cpu_write(recovery, NULL);
    this_cpu_write(catch_panics, false);
    this_cpu_write(recovered_vector, T_PANIC_CAUGHT);
    klongjmp(j, 1);
}
uint64_t trap_last_vector(void) { return this_cpu_read(recovered_vector); }

static void exception(struct trapframe *tf)
{
    if (tf->vector == T_NMI && panicking)
        panic_stop_this_cpu();  // another CPU panicked and is stopping everyone
    if (tf->vector == T_NMI && hangcheck_nmi(tf))
        return; // the hang detector's: reported (a test's hook returns here)

    // User mode: demand paging, or the process dies; never a panic.
    if ((tf->cs & 3) && tf->vector != T_NMI && tf->vector != T_MC) {
        user_exception(tf);
        return;
    }
    // A copy helper touching user memory: demand paging or -EFAULT.
    if ((tf->vector == T_PF || tf->vector == T_GP) && usercopy_fault(tf))
        return;

    struct kjmp *j = this_cpu_read(recovery);
    if (j && tf->vector != T_NMI && tf->vector != T_DF && tf->vector != T_MC) {
        // A test armed a recovery point: report the exception and go back to it.
        kprintf("caught %s (vector %lu) on cpu %d at ", exception_name(tf->vector), tf->vector, cpu_id());
        print_symbol(tf->rip);
        kprintf("\n");
        print_trapframe(tf);
        backtrace_from(tf->rbp);
        this_cpu_write(recovery, NULL);
        this_cpu_write(recovered_vector, tf->vector);
        klongjmp(j, 1);
    }
    panic_trap(tf, exception_name(tf->vector));
}

// Called from alltraps with interrupts off.
void trap(struct trapframe *tf)
{
    if (tf->vector < 32) {
        exception(tf);
        if (tf->cs & 3)
            user_return(tf);
        return;
    }
    tickless_wake_if_stopped();
    irq_handler_t h = handlers[tf->vector];
    if (h)
        h(tf);
    else if (tf->vector != T_SPURIOUS) {
        kprintf("cpu %d: unexpected interrupt %lu\n", cpu_id(), tf->vector);
        lapic_eoi();
    }
    if (tf->cs & 3)
        user_return(tf);
}
