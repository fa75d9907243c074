// Boot CPU start-up: bring the machine up in dependency order, then run the tests
// the command line asks for, or idle.
#include "bootinfo.h"
#include "console.h"
#include "epoch.h"
#include "ktest.h"
#include "mm.h"
#include "panic.h"
#include "percpu.h"
#include "refcache.h"
#include "smp.h"
#include "trap.h"
#include "x86.h"

uint64_t boot_tsc; // TSC at kernel entry, for boot-time figures

// Periodic per-CPU work, from each CPU's timer interrupt: quiescent points for
// epoch reclamation and the per-epoch refcache flush.
static void kernel_tick(struct trapframe *tf)
{
    (void)tf;
    epoch_tick();
    refcache_tick();
}

static void run_tests(void)
{
    char sel[256];
    size_t len;
    const char *v = cmdline_get("test", &len);
    len = MIN(len, sizeof sel - 1);
    memcpy(sel, v, len);
    sel[len] = 0;
    int failed = ktest_run(sel);
    qemu_exit(failed ? 1 : 0);
}

void kmain(uint64_t bootinfo_pa)
{
    boot_tsc = rdtsc();
    const struct bootinfo *bi = P2V(bootinfo_pa);

    percpu_init_boot();
    uart_init();
    if (bi->magic != BOOTINFO_MAGIC)
        panic("bad boot info magic %lx", bi->magic);
    cmdline_init(bi);
    kprintf("\nkernel: booting, command line \"%s\"\n", kernel_cmdline);

    gdt_init_cpu();
    trap_init();
    trap_init_cpu();
    symbols_init(bi);

    page_init(bi);
    kvm_init(bi);
    kprintf("mem: %lu MiB free of %lu MiB\n", page_count_free() * PGSIZE >> 20,
            page_count_total() * PGSIZE >> 20);

    // SMP: interrupt controllers, timer, then the other CPUs.
    acpi_init(bi);
    lapic_init();
    ioapic_init();
    timer_tick_hook = kernel_tick;
    lapic_timer_init();
    smp_boot(bi);
    console_input_init();
    sti();

    if (cmdline_has("test"))
        run_tests();

    kprintf("kernel: up; no user space yet (Ctrl-A X leaves QEMU)\n");
    for (;;)
        hlt();
}
