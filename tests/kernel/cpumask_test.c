// CPU masks: for_each_cpu visits exactly the set bits, in order, across word
// boundaries and up to the last slot.
#include "ktest/ktest.h"
#include "sync/cpumask.h"

KTEST(cpumask_walk)
{
    static const int set[] = {0, 5, 63, 64, 130, NCPU_MAX - 1};
    int n = sizeof set / sizeof set[0];
    cpumask_t m;
    cpumask_clear(&m);
    for_each_cpu(c, &m)
        KCHECK(false); // an empty mask has nothing to visit
    for (int i = 0; i < n; i++)
        cpumask_set(&m, set[i]);
    int seen = 0;
    for_each_cpu(c, &m) {
        KCHECK(seen < n && c == set[seen]);
        seen++;
    }
    KCHECK_EQ(seen, n);
    KCHECK_EQ(cpumask_next(&m, 6), 63);
    KCHECK_EQ(cpumask_next(&m, 65), 130);
    KCHECK_EQ(cpumask_next(&m, NCPU_MAX - 1), NCPU_MAX - 1);
    cpumask_unset(&m, NCPU_MAX - 1);
    KCHECK_EQ(cpumask_next(&m, 131), NCPU_MAX);
    KCHECK_EQ(cpumask_weight(&m), n - 1);
}
