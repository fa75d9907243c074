// Per-CPU counters for statistics: each CPU adds to its own copy with one
// instruction, so counting on different CPUs commutes and shares no cache line;
// reading sums every CPU's copy without stopping anyone, so the result is
// approximate while counting goes on (exact once it has stopped).
//
//     DEFINE_COUNTER(page_faults);   counter_inc(page_faults);   counter_read(&page_faults)
#pragma once
#include "sync/cpumask.h"
#include "sync/percpu.h"

#define DEFINE_COUNTER(name) DEFINE_PERCPU(int64_t, name)
#define DECLARE_COUNTER(name) DECLARE_PERCPU(int64_t, name)
#define counter_add(name, v) this_cpu_add(name, (int64_t)(v))
#define counter_inc(name) counter_add(name, 1)

static inline int64_t counter_read_cpu(int64_t *c, int cpu) { return READ_ONCE(*per_cpu_ptr(c, cpu)); }

static inline int64_t counter_read(int64_t *c)
{
    int64_t sum = 0;
    for_each_cpu(cpu, &cpu_online_mask)
        sum += counter_read_cpu(c, cpu);
    return sum;
}
