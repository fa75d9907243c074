// The kernel's one vocabulary for atomic memory accesses: every lock-free read
// or write of a word another CPU may touch at the same time goes through these
// names, so a reader sees the ordering each access needs without decoding
// compiler builtins. They are gcc's __atomic builtins, type-generic over any
// naturally aligned word (pointers, integers up to 8 bytes).
//
//   load_acquire(p)        read *p; later accesses stay after it. Pairs with a
//                          store_release of the value read: everything written
//                          before that store is visible after this load.
//   store_release(p, v)    write *p; earlier accesses stay before it (publish).
//   load_relaxed(p), store_relaxed(p, v)
//                          atomic (never torn), no ordering: counters, hints,
//                          statistics, values re-checked under a lock.
//   load_seqcst(p), store_seqcst(p, v), fence()
//                          sequentially consistent: for Dekker-style handshakes
//                          where each side writes its own word and then reads the
//                          other's (x86 needs a full fence between the two).
//   cas(p, &old, new)      compare-and-swap: if *p == old, write new and return
//                          true (acquire + release); else copy *p into old and
//                          return false (acquire).
//   cas_acquire(p, &old, new)
//                          as cas, acquire only on success, no ordering on failure:
//                          taking a lock bit or a state that works as a lock.
//   cas_fail_relaxed(p, &old, new)
//                          as cas, no ordering on failure: when the value copied
//                          back on failure is only tested, never followed.
//   xchg(p, v)             write v, return the old value (acquire + release).
//   xchg_acquire(p, v)     the same, acquire only: taking a test-and-set lock
//                          (released with store_release).
//   fetch_add(p, v), fetch_sub(p, v)
//                          add or subtract, return the old value (sequentially
//                          consistent); *_relaxed: no ordering (counters).
//   fetch_or(p, v), fetch_and(p, v)
//                          set or clear bits, return the old value
//                          (sequentially consistent: a locked instruction).
//   add_fetch(p, v), sub_fetch(p, v)
//                          the same, returning the new value (acquire + release:
//                          "was that the last reference?").
//   fetch_sub_release(p, v)
//                          subtract, return the old value, release only:
//                          dropping a count that another CPU waits on with
//                          load_acquire (it then sees our work).
//   fetch_and_release(p, v)
//                          clear bits, return the old value, release only:
//                          dropping a lock bit.
//   fence_acquire(), fence_release()
//                          one-sided fences, for the sequence-count protocol
//                          (seqlock.h).
#pragma once

#define load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define load_seqcst(p) __atomic_load_n((p), __ATOMIC_SEQ_CST)

#define store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define store_seqcst(p, v) __atomic_store_n((p), (v), __ATOMIC_SEQ_CST)

#define cas(p, oldp, new)                                                                  \
    __atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)
#define cas_acquire(p, oldp, new)                                                          \
    __atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)
#define cas_fail_relaxed(p, oldp, new)                                                     \
    __atomic_compare_exchange_n((p), (oldp), (new), false, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)
#define xchg(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)
#define xchg_acquire(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQUIRE)

#define fetch_add(p, v) __atomic_fetch_add((p), (v), __ATOMIC_SEQ_CST)
#define fetch_sub(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_SEQ_CST)
#define fetch_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)
#define fetch_sub_relaxed(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELAXED)
#define fetch_or(p, v) __atomic_fetch_or((p), (v), __ATOMIC_SEQ_CST)
#define fetch_and(p, v) __atomic_fetch_and((p), (v), __ATOMIC_SEQ_CST)
#define fetch_sub_release(p, v) __atomic_fetch_sub((p), (v), __ATOMIC_RELEASE)
#define fetch_and_release(p, v) __atomic_fetch_and((p), (v), __ATOMIC_RELEASE)
#define add_fetch(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define sub_fetch(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)

#define fence() __atomic_thread_fence(__ATOMIC_SEQ_CST)
#define fence_acquire() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define fence_release() __atomic_thread_fence(__ATOMIC_RELEASE)
