// Tests for CPU discovery and start-up: every CPU in the MADT came up, runs code,
// knows who it is, and has its own per-CPU variables on their own cache lines.
#include "ktest/ktest.h"
#include "mm/mmu.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/xcall.h"
#include "x86/smp.h"
#include "x86/x86.h"

struct seen {
    uint64_t runs;
    uint32_t id, apicid, cpu_apicid;
} __cacheline_aligned;
static struct seen seen[NCPU_MAX];

static void record(void *arg)
{
    (void)arg;
    struct seen *s = &seen[cpu_id()];
    fetch_add_relaxed(&s->runs, 1);
    s->id = this_cpu_read(cpu.id);
    s->apicid = lapic_id();
    s->cpu_apicid = this_cpu_read(cpu.apicid);
}

KTEST(smp_every_cpu_online_and_runs_code)
{
    memset(seen, 0, sizeof seen);
    KCHECK_EQ(ncpu_online, ncpu);
    int online = 0;
    for_each_cpu(c, &cpu_online_mask)
        online++;
    KCHECK_EQ(online, ncpu);
    xcall_all(record, NULL);
    int total = 0;
    for (int c = 0; c < NCPU_MAX; c++)
        total += seen[c].runs;
    KCHECK_EQ(total, ncpu);
    for (int c = 0; c < ncpu; c++) {
        KCHECK_EQ(seen[c].runs, 1);
        KCHECK_EQ(seen[c].id, c);
        KCHECK_EQ(seen[c].apicid, cpu_apicid[c]);
        KCHECK_EQ(seen[c].cpu_apicid, cpu_apicid[c]);
    }
    kprintf("# %d CPUs online, each ran the call once\n", total);
}

KTEST(smp_apic_ids_unique_boot_cpu_first)
{
    KCHECK_EQ(cpu_apicid[0], lapic_id());
    KCHECK_EQ(cpu_id(), 0);
    int dups = 0;
    for (int c = 0; c < ncpu; c++)
        for (int d = 0; d < c; d++)
            dups += cpu_apicid[c] == cpu_apicid[d];
    KCHECK_EQ(dups, 0);
    for (int c = 0; c < ncpu; c++)
        KCHECK_EQ(cpu_index_of_apicid(cpu_apicid[c]), c);
    KCHECK_EQ(cpu_index_of_apicid(0xfffffffe), -1);
}

static DEFINE_PERCPU(uint64_t, whoami);

static void write_whoami(void *arg)
{
    (void)arg;
    this_cpu_write(whoami, 1000 + cpu_id());
}

KTEST(smp_percpu_copies_distinct)
{
    xcall_all(write_whoami, NULL);
    for (int c = 0; c < ncpu; c++) {
        KCHECK_EQ(*per_cpu_ptr(&whoami, c), 1000 + c);
        KCHECK(per_cpu_ptr(&cpu, c)->online);
        KCHECK_EQ(per_cpu_ptr(&cpu, c)->id, c);
    }
    // No two CPUs' copies on one cache line (nor at one address).
    int shared = 0;
    for (int c = 0; c < ncpu; c++)
        for (int d = 0; d < c; d++)
            shared += (uintptr_t)per_cpu_ptr(&whoami, c) / CACHELINE ==
                      (uintptr_t)per_cpu_ptr(&whoami, d) / CACHELINE;
    KCHECK_EQ(shared, 0);
}

// Each AP has its own interrupt-flag state and its own stack, and is not stuck
// with interrupts off (timer ticks and IPIs would not arrive).
struct apstate {
    uintptr_t rsp;
    uint64_t online_bit;
} __cacheline_aligned;
static struct apstate apstate[NCPU_MAX];

static void sample_state(void *arg)
{
    (void)arg;
    struct apstate *s = &apstate[cpu_id()];
    s->rsp = (uintptr_t)__builtin_frame_address(0);
    s->online_bit = cpumask_test(&cpu_online_mask, cpu_id());
}

KTEST(smp_cpus_have_own_stacks)
{
    memset(apstate, 0, sizeof apstate);
    xcall_all(sample_state, NULL);
    int same = 0;
    for (int c = 0; c < ncpu; c++) {
        KCHECK_EQ(apstate[c].online_bit, 1);
        for (int d = 0; d < c; d++)
            same += apstate[c].rsp / PGSIZE == apstate[d].rsp / PGSIZE;
    }
    KCHECK_EQ(same, 0);
}
