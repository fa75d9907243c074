// Per-CPU GDT and TSS. Each CPU has its own TSS (its kernel stack pointer for
// entries from user mode and its IST stacks), so each needs its own GDT too: the
// TSS descriptor is per CPU and the CPU marks it busy when loading it.
#include "x86/gdt.h"
#include "sync/percpu.h"
#include "x86/trap.h"

struct tss {
    uint32_t reserved0;
    uint64_t rsp[3];
    uint64_t reserved1;
    uint64_t ist[7];
    uint64_t reserved2;
    uint16_t reserved3;
    uint16_t iomap_base;
} __attribute__((packed));

#define IST_STACK_SIZE 8192

struct cpu_gdt {
    uint64_t gdt[GDT_ENTRIES];
    struct tss tss;
    // Stacks for exceptions that must not trust the current stack (NMI can arrive
    // anywhere, a double fault usually means the stack overflowed).
    char ist_stack[3][IST_STACK_SIZE] __attribute__((aligned(16)));
};
static DEFINE_PERCPU(struct cpu_gdt, cpu_gdt) __attribute__((aligned(64)));

#define SEG_P (1UL << 47)
#define SEG_S (1UL << 44)          // code/data (not system)
#define SEG_CODE (1UL << 43)
#define SEG_RW (1UL << 41)         // readable code / writable data
#define SEG_L (1UL << 53)          // 64-bit code
#define SEG_DPL(d) ((uint64_t)(d) << 45)
#define SEG_DB (1UL << 54)
#define SEG_G (1UL << 55)

static void set_tss_desc(uint64_t *d, struct tss *t)
{
    uint64_t base = (uint64_t)t, limit = sizeof *t - 1;
    d[0] = (limit & 0xffff) | (base & 0xffffff) << 16 | 0x9UL << 40 /* 64-bit TSS */ |
           SEG_P | ((limit >> 16) & 0xf) << 48 | ((base >> 24) & 0xff) << 56;
    d[1] = base >> 32;
}

void gdt_init_cpu(void)
{
    struct cpu_gdt *g = this_cpu_ptr(&cpu_gdt);

    memset(g->gdt, 0, sizeof g->gdt);
    g->gdt[GDT_KCODE / 8] = SEG_P | SEG_S | SEG_CODE | SEG_RW | SEG_L;
    g->gdt[GDT_KDATA / 8] = SEG_P | SEG_S | SEG_RW;
    // 32-bit user code: never used, but sysret's selector arithmetic expects it here.
    g->gdt[GDT_UCODE32 / 8] = SEG_P | SEG_S | SEG_CODE | SEG_RW | SEG_DPL(3) | SEG_DB | SEG_G | 0xffff | 0xfUL << 48;
    g->gdt[GDT_UDATA / 8] = SEG_P | SEG_S | SEG_RW | SEG_DPL(3);
    g->gdt[GDT_UCODE / 8] = SEG_P | SEG_S | SEG_CODE | SEG_RW | SEG_DPL(3) | SEG_L;

    memset(&g->tss, 0, sizeof g->tss);
    g->tss.iomap_base = sizeof g->tss; // no I/O permission bitmap
    g->tss.ist[IST_NMI - 1] = (uint64_t)g->ist_stack[0] + IST_STACK_SIZE;
    g->tss.ist[IST_DF - 1] = (uint64_t)g->ist_stack[1] + IST_STACK_SIZE;
    g->tss.ist[IST_MC - 1] = (uint64_t)g->ist_stack[2] + IST_STACK_SIZE;
    set_tss_desc(&g->gdt[GDT_TSS / 8], &g->tss);

    struct {
        uint16_t limit;
        uint64_t base;
    } __attribute__((packed)) gdtr = {sizeof g->gdt - 1, (uint64_t)g->gdt};
    asm volatile("lgdt %0" : : "m"(gdtr));
    // Reload CS with a far return, then the data segments and the task register.
    asm volatile("pushq %0\n"
                 "leaq 1f(%%rip), %%rax\n"
                 "pushq %%rax\n"
                 "lretq\n"
                 "1:\n"
                 "movw %w1, %%ds\n"
                 "movw %w1, %%es\n"
                 "movw %w1, %%ss\n"
                 "ltr %w2\n"
                 : : "i"(GDT_KCODE), "r"(GDT_KDATA), "r"(GDT_TSS) : "rax", "memory");
    // fs and gs selectors stay null; their bases come from MSRs (GS: per-CPU area).
}

void tss_set_rsp0(uint64_t rsp0) { this_cpu_write(cpu_gdt.tss.rsp[0], rsp0); }
