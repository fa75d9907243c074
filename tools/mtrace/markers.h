// The marker protocol between a guest program (the pairwise conformance runner,
// the mtrace validation programs) and the mtrace QEMU plugin (tools/mtrace/).
//
// QEMU 7.2's plugin API reports the address of each store but not the value, so
// a guest program talks to the plugin by *where* it stores: it maps a marker
// region at a fixed user address and stores one byte at an offset that encodes
// the message. The stores are ordinary user-mode stores, so the same binary runs
// unchanged without the plugin (the region is then just memory) and on Linux.
//
// Per test:
//   mtrace_test_id(id)    before anything else (0 <= id < MTRACE_MAX_ID)
//   mtrace_open(c)        on the vCPU about to run call c (0 or 1) -- then the call
//   mtrace_close(c)       on the same vCPU, right after the call returns
//   mtrace_test_done()    once both calls ran: the plugin reports every cache line
//                         written by one call's window and touched by the other's,
//                         then forgets both windows
// While a window is open on a vCPU the plugin records every access made by
// kernel code (instruction address in the upper half) on that vCPU. Accesses by
// user code, outside windows, on other vCPUs, or by interrupt handlers (when the
// plugin is given the kernel's entry points) are ignored.
//
// The region needs no pre-faulting: a store that faults reaches the plugin only
// once it completes, after the fault was handled, so the fault of an "open"
// store is not in the window (and never memset the region: every store is a
// message; loads are not). Keep the other call's thread or process parked on its own CPU while
// a window is open, so that its kernel work is not counted in the window, and
// run the two calls in different threads or processes: one thread running both
// calls "shares" its own kernel stack and task structure with itself.
//
// Cost mode (make bench-cost): a benchmark brackets each single operation of
// each worker with
//   mtrace_cost_begin(op)   on the worker's vCPU, right before the operation
//                           (0 <= op < MTRACE_COST_MAX_OP)
//   mtrace_cost_end()       on the same vCPU, right after it
// and the plugin adds up, per op id, the windows, the instructions executed and
// the cache-line transfers between vCPUs inside them (tools/mtrace/README.md).
// Before a measured phase, mtrace_cost_cold() (any vCPU) starts it cold: the
// plugin forgets which vCPU wrote or read each line, as if every cache had been
// written back and emptied, so that only what the phase itself moves counts (a
// line written at boot or in set-up by another CPU is a miss to memory, not a
// transfer).
// The guest names its op ids on the console: lines "cost-op ID NAME".
// mtrace_cost_end() also executes PAUSE, which ends the vCPU's turn in
// single-threaded TCG: the workers' operations then interleave one by one, as
// they would overlap on parallel hardware, instead of one vCPU running
// thousands of them in a turn (where a line shared by all would move once per
// turn, not once per operation). On hardware PAUSE costs some tens of cycles.
//
// Naming the tests: the analysis (tools/mtrace/analyze.py) reads the guest's
// console output for lines
//   mtrace-test ID CALL0 CALL1 [NAME...]   or   mtrace-test ID CALL0/CALL1 [NAME...]
// (e.g. "mtrace-test 17 open close open-close-same-fd"), which give each test id
// its pair of calls for the per-pair table and the heat map. A test may run more
// than once under one id (e.g. in both orders); it is conflict-free only if every
// run is.
#pragma once

#define MTRACE_BASE 0x100000000000UL     // 16 TiB: free in our and Linux's layouts
#define MTRACE_SIZE (2UL << 20)          // 2 MiB, mapped read/write, anonymous
#define MTRACE_OPEN 0x000                // + call (0 or 1)
#define MTRACE_CLOSE 0x040               // + call
#define MTRACE_DONE 0x080
#define MTRACE_COST_END 0x0c0            // cost mode: end of this vCPU's operation
#define MTRACE_COST_COLD 0x0c8           // cost mode: every cache written back and emptied
#define MTRACE_COST_OP 0x100             // cost mode: + op id, begin one operation
#define MTRACE_COST_MAX_OP 0xf00
#define MTRACE_ID 0x1000                 // + test id
#define MTRACE_MAX_ID (MTRACE_SIZE - MTRACE_ID)

#ifndef MTRACE_NO_HELPERS
// Helpers for guest programs. The region must have been mapped first, e.g.
//   mmap((void *)MTRACE_BASE, MTRACE_SIZE, PROT_READ | PROT_WRITE,
//        MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0)
// The volatile stores keep the compiler from dropping or merging them.
static inline void mtrace_store(unsigned long off) { *(volatile char *)(MTRACE_BASE + off) = 1; }
static inline void mtrace_test_id(unsigned long id) { mtrace_store(MTRACE_ID + id); }
static inline void mtrace_open(int call) { mtrace_store(MTRACE_OPEN + call); }
static inline void mtrace_close(int call) { mtrace_store(MTRACE_CLOSE + call); }
static inline void mtrace_test_done(void) { mtrace_store(MTRACE_DONE); }
static inline void mtrace_cost_begin(unsigned op) { mtrace_store(MTRACE_COST_OP + op); }
static inline void mtrace_cost_cold(void) { mtrace_store(MTRACE_COST_COLD); }
static inline void mtrace_cost_end(void)
{
    mtrace_store(MTRACE_COST_END);
    __asm__ volatile("pause" ::: "memory");
}
#endif
