// What the mtrace plugin's core (mtrace.c) shares with its two modes:
//   pairs.c  (mode=pairs, the default) the cache lines two calls share
//   cost.c   (mode=cost) per operation: instructions and cache-line transfers
// The core decodes arguments, instruments every instruction, skips interrupt
// handlers, keeps a shadow call stack and turns stores to the marker region
// into messages; a mode sees accesses and messages. Internal to the plugin.
#pragma once
#define MTRACE_NO_HELPERS
#include "markers.h"
#include "qemu-plugin-api.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define LINE 64
#define KEY_VIRT (1ULL << 63)            // key is a virtual line address
#define KERNEL_HALF (1ULL << 63)         // x86-64: kernel addresses have bit 63 set

enum block_kind {
    BLOCK_IN_USER,
    BLOCK_IN_KERNEL,
    BLOCK_IN_HANDLER,                    // an interrupt handler that is skipped
};

struct mode {
    const char *name;
    // After the core's own setup; argument "NAME=VALUE" not known to the core
    // goes to option() first (returns false if the mode does not know it either).
    bool (*option)(const char *arg);
    int (*init)(void);
    // Any access by kernel code on a vCPU (udata: the instruction's address).
    qemu_plugin_vcpu_mem_cb_t kernel_access;
    // Any access by user code outside the marker region (NULL: not needed).
    void (*user_access)(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr);
    // A store to the marker region at offset off; rest = instructions left
    // after the store in its translated block.
    void (*message)(unsigned vcpu, uint64_t off, unsigned rest);
    // Each execution of a translated block of n instructions starting at pc
    // (NULL: not needed).
    void (*block)(unsigned vcpu, uint64_t pc, unsigned n, enum block_kind kind);
    void (*finish)(void);                // at exit: write what is left
    // A context switch inside a skipped handler (preemption) keeps skipping
    // what the vCPU runs, until an iretq or user code: it is not the
    // interrupted code's work. Else the switch ends the skipping.
    bool preemption_skipped;
};

extern const struct mode pairs_mode, cost_mode;

// The core's state, for the modes.
extern int nvcpus;
extern int *irq_depth;                   // per vCPU: > 0 while an interrupt is skipped
extern FILE *out;
extern pthread_mutex_t lock;             // callbacks are serialised (see mtrace.c)

// The physical line key of an access (byte address, not rounded), or
// KEY_VIRT | vaddr without one; false for device registers (no memory).
bool access_key(qemu_plugin_meminfo_t info, uint64_t vaddr, uint64_t *key);
// The call instruction that entered the function running on vcpu, or 0.
uint64_t caller(unsigned vcpu);
