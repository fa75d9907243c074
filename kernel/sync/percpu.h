// Per-CPU variables, reached through the GS segment base in one instruction.
//
// A per-CPU variable is defined once with DEFINE_PERCPU; the linker gathers all of
// them into the .percpu section, which serves only as a template. Each CPU gets a
// private copy of that section (its per-CPU area) and sets its GS base to
// (area - __percpu_start). An access to variable v is then `%gs:v`, i.e. the CPU's
// own copy of v at GS base + &v: one instruction, no shared cache line, and no
// lookup of the CPU number first. Areas are allocated separately per CPU, so two
// CPUs' variables never share a cache line.
#pragma once
#include "kernel.h"

#define DEFINE_PERCPU(type, name) __attribute__((section(".percpu"))) __typeof__(type) name
#define DECLARE_PERCPU(type, name) extern __typeof__(type) name

extern char __percpu_start[], __percpu_end[];
extern uintptr_t percpu_offset[NCPU_MAX]; // GS base of each CPU, set once at bring-up
extern uint64_t percpu_salt[NCPU_MAX];    // odd, one per CPU, set with its area

// Per-CPU caches of objects (refcache deltas, file times) put an object in one
// slot of each CPU's 2^bits; h is the object's address mixed (mix64), computed
// once for all CPUs. Each CPU multiplies h by a salt of its own and keeps the
// top bits, so two objects that share a slot on one CPU most likely do not on
// another: with one index for all, two CPUs that both used object X would both
// evict it to make room for object O, which shares its slot, and write X's
// shared line together. A reader that visits every active CPU's slot pays a
// multiply per CPU, not a mix.
static inline size_t percpu_slot(uint64_t h, int c, unsigned bits)
{
    return (h * percpu_salt[c]) >> (64 - bits);
}

// A single mov with a GS override. The memory operand names the template copy;
// the GS base turns it into this CPU's copy. Single instructions cannot be torn by
// an interrupt on this CPU, so reads and writes of word-sized variables need no guard.
#define __percpu_op(insn, var, val_constraint, val)                                      \
    asm volatile(insn : val_constraint(val) : "m"(var))

#define this_cpu_read(var)                                                               \
    ({                                                                                   \
        __typeof__(var) __v;                                                             \
        _Static_assert(sizeof(var) == 1 || sizeof(var) == 2 || sizeof(var) == 4 ||       \
                           sizeof(var) == 8,                                             \
                       "this_cpu_read on a non-scalar");                                 \
        asm volatile("mov %%gs:%1, %0" : "=r"(__v) : "m"(var));                          \
        __v;                                                                             \
    })

#define this_cpu_write(var, val)                                                         \
    do {                                                                                 \
        __typeof__(var) __v = (val);                                                     \
        asm volatile("mov %1, %%gs:%0" : "=m"(var) : "r"(__v) : "memory");               \
    } while (0)

// Read-modify-write in one instruction: safe against interrupts on this CPU.
#define this_cpu_add(var, val)                                                           \
    do {                                                                                 \
        __typeof__(var) __v = (val);                                                     \
        asm volatile("add %1, %%gs:%0" : "+m"(var) : "r"(__v) : "memory");              \
    } while (0)
#define this_cpu_inc(var) this_cpu_add(var, 1)
#define this_cpu_dec(var) this_cpu_add(var, -1)

// Pointer to this CPU's / CPU c's copy of a per-CPU variable. Using the pointer
// after a possible migration is the caller's business (preemption off, or pinned).
#define this_cpu_ptr(pvar) ((__typeof__(pvar))((uintptr_t)(pvar) + this_cpu_read(cpu.offset)))
#define per_cpu_ptr(pvar, c) ((__typeof__(pvar))((uintptr_t)(pvar) + percpu_offset[c]))

// The fixed per-CPU bookkeeping every CPU has.
struct cpu {
    uintptr_t offset;     // this CPU's GS base (area - __percpu_start)
    uint32_t id;          // dense index, 0 = boot CPU
    uint32_t apicid;      // local APIC ID
    int irq_depth;        // nesting of irq_save()/push_off
    int irq_was_enabled;  // interrupt flag before the outermost push_off
    int preempt_depth;    // nesting of preempt_disable()
    bool resched_pending; // a tick or IPI wanted to preempt while preempt_depth > 0
    int locks_held;       // spinlocks held right now (debug check)
    struct spinlock *spinning_on; // the lock it waits for, if any (hang reports)
    bool online;
    bool in_panic;
};
DECLARE_PERCPU(struct cpu, cpu);

extern int ncpu;                // CPUs found in the MADT (and started)
extern int ncpu_online;         // CPUs that reached cpu_online()

static inline int cpu_id(void) { return this_cpu_read(cpu.id); }

void percpu_init_boot(void);                 // boot CPU, before anything else
uintptr_t percpu_alloc_area(int c);          // allocate CPU c's area, return its GS base
void percpu_load(uintptr_t offset);          // set GS base on the calling CPU

// Interrupt guard: push_off/pop_off nest; interrupts come back on only when the
// outermost pop_off restores what the outermost push_off found.
void push_off(void);
void pop_off(void);

// Preemption guard. A tick or reschedule IPI that arrives while preemption is
// off only sets resched_pending; the outermost preempt_enable acts on it.
void sched_preempt_pending(void); // sched.c
static inline void preempt_disable(void) { this_cpu_inc(cpu.preempt_depth); barrier(); }
static inline void preempt_enable(void)
{
    barrier();
    this_cpu_dec(cpu.preempt_depth);
    barrier();
    if (this_cpu_read(cpu.preempt_depth) == 0 && this_cpu_read(cpu.resched_pending))
        sched_preempt_pending();
}
