// Panic: print what happened and a symbolized backtrace, stop every CPU, and end
// the QEMU run with a failure status (or halt for a debugger with panic=halt).
#include "lib/panic.h"
#include "mm/mmu.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

volatile bool panicking;

#define QEMU_EXIT_PORT 0xf4
#define PANIC_EXIT_STATUS 100 // distinct from a test failure (1) in runqemu's status

void qemu_exit(int status)
{
    outb(QEMU_EXIT_PORT, status);
    // Not under QEMU (or no isa-debug-exit device): nothing more we can do.
    for (;;) {
        cli();
        hlt();
    }
}

void panic_stop_this_cpu(void)
{
    for (;;) {
        cli();
        hlt();
    }
}

// Frames are linked through %rbp (the kernel keeps frame pointers). Stop at the
// first frame outside the kernel's address range or after a sane depth. Puts
// the return addresses of up to max frames, after the first `skip`, into pcs.
int backtrace_collect(uintptr_t rbp, int skip, uintptr_t *pcs, int max)
{
    int n = 0;
    for (int depth = 0; depth < 32 + skip && n < max && rbp >= DIRECTMAP_BASE && (rbp & 7) == 0;
         depth++) {
        uintptr_t *frame = (uintptr_t *)rbp;
        uintptr_t ret = frame[1];
        if (ret < KERNEL_VBASE)
            break;
        if (depth >= skip)
            pcs[n++] = ret;
        rbp = frame[0];
    }
    return n;
}

void backtrace_from(uintptr_t rbp)
{
    uintptr_t pcs[32];
    int n = backtrace_collect(rbp, 0, pcs, 32);
    kprintf("  backtrace:\n");
    for (int i = 0; i < n; i++) {
        kprintf("    [%d] ", i);
        print_symbol(pcs[i] - 1); // the call instruction, not the one after it
        kprintf("\n");
    }
}

void backtrace(void) { backtrace_from((uintptr_t)__builtin_frame_address(0)); }

// Only the first CPU to panic prints; the rest stop where they are.
static void panic_begin(void)
{
    cli();
    if (__atomic_exchange_n(&panicking, true, __ATOMIC_SEQ_CST))
        panic_stop_this_cpu();
    this_cpu_write(cpu.in_panic, true);
    if (ncpu_online > 1)
        lapic_send_nmi_all_but_self();
}

static __noreturn void panic_end(void)
{
    if (cmdline_has("panic=halt")) {
        kprintf("panic: halted (panic=halt)\n");
        panic_stop_this_cpu();
    }
    qemu_exit(PANIC_EXIT_STATUS);
}

void panic(const char *fmt, ...)
{
    char buf[256];
    va_list ap;
    va_start(ap, fmt);
    kvsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    trap_recover_panic(buf); // a test expecting this panic takes it back
    panic_begin();
    kprintf("\npanic on cpu %d: %s\n", cpu_id(), buf);
    backtrace_from((uintptr_t)__builtin_frame_address(0));
    panic_end();
}

void panic_trap(struct trapframe *tf, const char *what)
{
    panic_begin();
    kprintf("\npanic on cpu %d: %s (vector %lu) at ", cpu_id(), what, tf->vector);
    print_symbol(tf->rip);
    kprintf("\n");
    print_trapframe(tf);
    backtrace_from(tf->rbp);
    panic_end();
}
