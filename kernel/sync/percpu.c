// Per-CPU areas: one private copy of the .percpu template per CPU (see percpu.h).
#include "sync/percpu.h"
#include "lib/hash.h"
#include "mm/mm.h"
#include "x86/x86.h"

uintptr_t percpu_offset[NCPU_MAX];
uint64_t percpu_salt[NCPU_MAX];
int ncpu = 1;
int ncpu_online = 1;

DEFINE_PERCPU(struct cpu, cpu);

// The boot CPU's area lives in .bss (the linker reserves it) because the page
// allocator itself uses per-CPU variables.
extern char __percpu_boot_area[];

void percpu_load(uintptr_t offset) { wrmsr(MSR_GS_BASE, offset); }

// Fixed per CPU index, so that which objects share a slot does not depend on
// where the areas landed (runs repeat).
static uint64_t salt_for(int c) { return mix64(0x9e3779b97f4a7c15ULL * (c + 1)) | 1; }

void percpu_init_boot(void)
{
    size_t size = __percpu_end - __percpu_start;
    uintptr_t off = (uintptr_t)__percpu_boot_area - (uintptr_t)__percpu_start;

    memcpy(__percpu_boot_area, __percpu_start, size);
    percpu_offset[0] = off;
    percpu_salt[0] = salt_for(0);
    percpu_load(off);
    this_cpu_write(cpu.offset, off);
    this_cpu_write(cpu.id, 0);
    this_cpu_write(cpu.online, true);
}

// Copy the pristine template (nobody writes it: every access goes through GS).
// Each area starts on its own pages, so no two CPUs' variables share a line.
uintptr_t percpu_alloc_area(int c)
{
    size_t size = __percpu_end - __percpu_start;
    char *area = page_alloc_contig(PGROUNDUP(size) / PGSIZE);
    if (!area)
        return 0;
    memcpy(area, __percpu_start, size);
    uintptr_t off = (uintptr_t)area - (uintptr_t)__percpu_start;
    struct cpu *cp = (struct cpu *)((uintptr_t)&cpu + off);
    cp->offset = off;
    cp->id = c;
    percpu_offset[c] = off;
    percpu_salt[c] = salt_for(c);
    return off;
}

void push_off(void)
{
    bool was = read_rflags() & RFLAGS_IF;
    cli();
    if (this_cpu_read(cpu.irq_depth) == 0)
        this_cpu_write(cpu.irq_was_enabled, was);
    this_cpu_inc(cpu.irq_depth);
}

void pop_off(void)
{
    if (read_rflags() & RFLAGS_IF)
        panic("pop_off: interrupts enabled");
    int d = this_cpu_read(cpu.irq_depth);
    if (d < 1)
        panic("pop_off: unbalanced");
    this_cpu_write(cpu.irq_depth, d - 1);
    if (d == 1 && this_cpu_read(cpu.irq_was_enabled))
        sti();
}
