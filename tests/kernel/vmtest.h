// Helpers for the virtual-memory tests: run kernel threads that load a user
// address space on chosen CPUs and touch its pages through the user-copy helpers.
#pragma once
#include "lib/kstats.h"
#include "mm/usercopy.h"
#include "mm/uvm.h"
#include "proc/sched.h"
#include "sync/percpu.h"
#include "x86/smp.h"
#include "x86/x86.h"

static inline void vmt_enter(struct vmspace *vs)
{
    push_off();
    thread_current()->vm = vs;
    uvm_switch(NULL, vs);
    pop_off();
}

static inline void vmt_leave(struct vmspace *vs)
{
    push_off();
    thread_current()->vm = NULL;
    uvm_switch(vs, NULL);
    pop_off();
}

static inline struct thread *vmt_on_cpu(int c, const char *name, void (*fn)(void *), void *arg)
{
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, c);
    return kthread_create(name, fn, arg, &m);
}

// Keep the calling thread on CPU c from now on; 0 or an errno.
static inline int vmt_pin(int c)
{
    cpumask_t m;
    cpumask_clear(&m);
    cpumask_set(&m, c);
    return thread_set_affinity(thread_current(), &m);
}

static inline int64_t vmt_ipis_sent_here(void) { return counter_read_cpu(&kst_ipi_sent, cpu_id()); }

static inline bool vmt_touch(uintptr_t va, uint64_t v) { return copy_to_user(va, &v, sizeof v) == 0; }
static inline bool vmt_peek(uintptr_t va, uint64_t *v) { return copy_from_user(v, va, sizeof *v) == 0; }
