// Tests for seqlocks under concurrent use.
#include "ktest/ktest.h"
#include "sync/atomic.h"
#include "sync/percpu.h"
#include "sync/seqlock.h"
#include "sync/xcall.h"
#include "x86/smp.h"

// Writers keep a == b; lock-free readers must never see them differ.
static struct seqlock pair_lock;
static volatile uint64_t pair_a, pair_b;
static volatile int torn;

static void seq_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 2000; i++) {
        if (i % 4 == 0) {
            seq_write_begin(&pair_lock);
            pair_a = pair_a + 1;
            pair_b = pair_b + 1;
            seq_write_end(&pair_lock);
            continue;
        }
        uint64_t a, b;
        uint32_t s;
        do {
            s = seq_read_begin(&pair_lock);
            a = pair_a;
            b = pair_b;
        } while (seq_read_retry(&pair_lock, s));
        if (a != b)
            fetch_add(&torn, 1);
    }
}

KTEST(seqlock_readers_never_see_torn_writes)
{
    seq_init(&pair_lock, "test pair");
    pair_a = pair_b = 0;
    torn = 0;
    xcall_all(seq_worker, NULL);
    KCHECK_EQ(torn, 0);
    KCHECK_EQ(pair_a, 500 * ncpu_online);
    KCHECK_EQ(pair_b, pair_a);
    KCHECK_EQ(pair_lock.seq % 2, 0);
}
