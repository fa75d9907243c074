// mtrace: a QEMU TCG plugin that watches what system calls do to cache lines.
// Two modes (mode=pairs, the default, in pairs.c; mode=cost in cost.c; see
// tools/mtrace/README.md):
//   pairs  the cache lines two commuting calls share (the pairwise suite)
//   cost   per operation of a benchmark: instructions executed, and cache-line
//          transfers between vCPUs in a MESI-style simulation
// This file is what both share: it instruments every instruction when its
// block is translated, turns user stores to the marker region (markers.h) into
// messages for the mode, skips interrupt handlers, and keeps a shadow stack of
// call instructions per vCPU.
//
// Lines are keyed on the physical address, so a line reached through two virtual
// aliases (the direct map and the kernel image, or two processes' mappings) is
// one line; an access without a physical address (none in system emulation, in
// practice) is keyed on its virtual address with KEY_VIRT set.
//
// Interrupts are not part of a call: a timer tick inside one window writes the
// clock that the other call reads. With entries=FILE (tools/mtrace/entries.py
// writes it from the kernel's symbols: lines "irq ADDR" for the asynchronous
// interrupt entry points, "exc ADDR" for the exception entry points, "switch
// ADDR" for the context switch) the core marks a vCPU as in a handler from an
// interrupt's entry to its iretq (irq_depth); exceptions taken meanwhile nest.
// Exceptions taken by the call itself (page faults in copy-in/out) stay part of
// it. A handler may switch to another thread (preemption): in pairs mode, that
// thread's work is recorded (a context switch ends the skipping: at worst the
// tail of a handler resumed later is recorded); in cost mode it is skipped too,
// not being the operation's, until an iretq or user code runs. Any user-mode
// access on the vCPU ends the skipping.
//
// The shadow stack (push on call, pop on ret, emptied at a context switch;
// retpolines and return thunks keep it balanced) names, for an access in a
// helper (memset, a spin lock), the call that entered it: the caller says more
// than the helper.
//
// Arguments: mode=pairs|cost, out=FILE (else QEMU's log), entries=FILE, and
// the mode's own (pairs.c, cost.c).
// Run QEMU with single-threaded TCG (-accel tcg,thread=single; tools/runqemu
// --plugin does): the vCPUs then take turns on one host thread, so no callback
// runs concurrently and windows on different vCPUs never overlap in time.
#include "mtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

int nvcpus;
int *irq_depth;
FILE *out;
// Callbacks run one at a time under single-threaded TCG; the lock keeps the
// tables sane if someone runs multi-threaded TCG anyway.
pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static const struct mode *mode = &pairs_mode;
#define SHADOW 64                        // shadow stack entries kept per vCPU
struct shadow {
    uint64_t call[SHADOW];               // a ring: deeper frames are overwritten
    unsigned depth;
};
static struct shadow *shadow;            // per vCPU: the kernel's call stack
static uint64_t *irq_entries, *exc_entries, *switch_entries;  // sorted addresses
static size_t n_irq_entries, n_exc_entries, n_switch_entries;

bool access_key(qemu_plugin_meminfo_t info, uint64_t vaddr, uint64_t *key)
{
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (!hw) {
        *key = vaddr | KEY_VIRT;
        return true;
    }
    if (qemu_plugin_hwaddr_is_io(hw))
        return false;                    // device registers are not shared memory
    *key = qemu_plugin_hwaddr_phys_addr(hw);
    return true;
}

uint64_t caller(unsigned vcpu)
{
    struct shadow *sh = &shadow[vcpu];
    return sh->depth ? sh->call[(sh->depth - 1) % SHADOW] : 0;
}

// Any access by user code: a message if it is a store to the marker region
// (QEMU 7.2 calls a callback registered for stores on loads too, so check),
// else the mode's. udata: instructions left after this one in its block.
static void on_user_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                           void *udata)
{
    if ((int)vcpu >= nvcpus)
        return;
    irq_depth[vcpu] = 0;                 // user code runs: no handler is
    if (vaddr - MTRACE_BASE < MTRACE_SIZE) {
        if (qemu_plugin_mem_is_store(info)) {
            pthread_mutex_lock(&lock);
            mode->message(vcpu, vaddr - MTRACE_BASE, (unsigned)(uintptr_t)udata);
            pthread_mutex_unlock(&lock);
        }
        return;
    }
    if (mode->user_access)
        mode->user_access(vcpu, info, vaddr);
}

// A translated block, as its execution callback sees it. Records are interned
// on (pc, n, irq), so a block translated again (after a flush, or at another
// physical address) reuses its record: their number is bounded by the code.
struct block {
    uint64_t pc;
    unsigned n;                          // instructions
    bool irq;                            // it starts at an interrupt entry point
};
static struct block **blocks;            // open addressing; NULL = free
static size_t blocks_cap, blocks_used;

static uint64_t block_hash(uint64_t pc, unsigned n)
{
    uint64_t x = pc ^ ((uint64_t)n << 48);
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 32);
}

static struct block **block_slot(struct block **table, size_t cap, uint64_t pc, unsigned n,
                                 bool irq)
{
    for (size_t i = block_hash(pc, n) & (cap - 1);; i = (i + 1) & (cap - 1)) {
        struct block *b = table[i];
        if (!b || (b->pc == pc && b->n == n && b->irq == irq))
            return &table[i];
    }
}

static struct block *intern_block(uint64_t pc, unsigned n, bool irq)
{
    if ((blocks_used + 1) * 2 > blocks_cap) {
        size_t cap = blocks_cap ? blocks_cap * 2 : 65536;
        struct block **bigger = calloc(cap, sizeof *bigger);
        if (!bigger)
            abort();
        for (size_t i = 0; i < blocks_cap; i++) {
            if (blocks[i])
                *block_slot(bigger, cap, blocks[i]->pc, blocks[i]->n, blocks[i]->irq) = blocks[i];
        }
        free(blocks);
        blocks = bigger;
        blocks_cap = cap;
    }
    struct block **slot = block_slot(blocks, blocks_cap, pc, n, irq);
    if (!*slot) {
        if (!(*slot = malloc(sizeof **slot)))
            abort();
        **slot = (struct block){ .pc = pc, .n = n, .irq = irq };
        blocks_used++;
    }
    return *slot;
}

static struct block *intern_block_locked(uint64_t pc, unsigned n, bool irq)
{
    pthread_mutex_lock(&lock);           // multi-threaded TCG translates in parallel
    struct block *b = intern_block(pc, n, irq);
    pthread_mutex_unlock(&lock);
    return b;
}

// A block starts executing. Its first instruction has not run yet (its own
// callbacks come after this one): a handler starting here is already one.
static void on_block(unsigned int vcpu, void *udata)
{
    const struct block *b = udata;
    if ((int)vcpu >= nvcpus)
        return;
    mode->block(vcpu, b->pc, b->n, !(b->pc & KERNEL_HALF) ? BLOCK_IN_USER
                : b->irq || irq_depth[vcpu] ? BLOCK_IN_HANDLER : BLOCK_IN_KERNEL);
}

static void on_irq_entry(unsigned int vcpu, void *udata)
{
    (void)udata;
    if ((int)vcpu < nvcpus)
        irq_depth[vcpu]++;
}

static void on_exc_entry(unsigned int vcpu, void *udata)
{
    (void)udata;
    if ((int)vcpu < nvcpus && irq_depth[vcpu])
        irq_depth[vcpu]++;
}

static void on_switch(unsigned int vcpu, void *udata)
{
    (void)udata;
    if ((int)vcpu < nvcpus) {
        if (!mode->preemption_skipped)
            irq_depth[vcpu] = 0;
        shadow[vcpu].depth = 0;          // the next thread's stack is another one
    }
}

static void on_call(unsigned int vcpu, void *udata)
{
    if ((int)vcpu < nvcpus) {
        struct shadow *sh = &shadow[vcpu];
        sh->call[sh->depth++ % SHADOW] = (uint64_t)(uintptr_t)udata;
    }
}

static void on_ret(unsigned int vcpu, void *udata)
{
    (void)udata;
    if ((int)vcpu < nvcpus && shadow[vcpu].depth)
        shadow[vcpu].depth--;
}

static void on_iret(unsigned int vcpu, void *udata)
{
    (void)udata;
    if ((int)vcpu < nvcpus && irq_depth[vcpu])
        irq_depth[vcpu]--;
}

static bool listed(const uint64_t *a, size_t n, uint64_t pc)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (a[mid] == pc)
            return true;
        if (a[mid] < pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return false;
}

// call rel32 (e8), or an indirect call (ff /2, perhaps after a REX prefix).
static bool is_call(struct qemu_plugin_insn *insn)
{
    const uint8_t *b = qemu_plugin_insn_data(insn);
    size_t n = qemu_plugin_insn_size(insn), i = (n > 1 && (b[0] & 0xf0) == 0x40);
    if (n == 5 && b[0] == 0xe8)
        return true;
    return n > i + 1 && b[i] == 0xff && ((b[i + 1] >> 3) & 7) == 2;
}

// ret, ret imm16, rep ret.
static bool is_ret(struct qemu_plugin_insn *insn)
{
    const uint8_t *b = qemu_plugin_insn_data(insn);
    size_t n = qemu_plugin_insn_size(insn);
    return (n == 1 && b[0] == 0xc3) || (n == 3 && b[0] == 0xc2) ||
           (n == 2 && b[0] == 0xf3 && b[1] == 0xc3);
}

static bool is_iretq(struct qemu_plugin_insn *insn)
{
    const uint8_t *b = qemu_plugin_insn_data(insn);
    return qemu_plugin_insn_size(insn) == 2 && b[0] == 0x48 && b[1] == 0xcf;
}

// Instruments each instruction once, when its block is translated: kernel
// instructions get the mode's callback on every access (and interrupt entries
// and exits, context switches, calls and returns one on execution), user
// instructions on every access (markers). A block runs in one privilege level
// (syscall, sysret and iretq end blocks), so the mode's block callback, if
// any, tells kernel blocks from user ones by their first instruction.
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    if (mode->block && n) {
        uint64_t first = qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0));
        struct block *b = intern_block_locked(first, n,
                                             listed(irq_entries, n_irq_entries, first));
        qemu_plugin_register_vcpu_tb_exec_cb(tb, on_block, QEMU_PLUGIN_CB_NO_REGS, b);
    }
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        if (pc & KERNEL_HALF) {
            qemu_plugin_register_vcpu_mem_cb(insn, mode->kernel_access, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)pc);
            if (listed(irq_entries, n_irq_entries, pc))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_irq_entry,
                                                       QEMU_PLUGIN_CB_NO_REGS, NULL);
            else if (listed(exc_entries, n_exc_entries, pc))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exc_entry,
                                                       QEMU_PLUGIN_CB_NO_REGS, NULL);
            else if (listed(switch_entries, n_switch_entries, pc))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_switch,
                                                       QEMU_PLUGIN_CB_NO_REGS, NULL);
            else if (is_iretq(insn))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_iret,
                                                       QEMU_PLUGIN_CB_NO_REGS, NULL);
            else if (is_call(insn))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_call, QEMU_PLUGIN_CB_NO_REGS,
                                                       (void *)(uintptr_t)pc);
            else if (is_ret(insn))
                qemu_plugin_register_vcpu_insn_exec_cb(insn, on_ret, QEMU_PLUGIN_CB_NO_REGS,
                                                       NULL);
        } else {
            qemu_plugin_register_vcpu_mem_cb(insn, on_user_access, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)(n - 1 - i));
        }
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int add_entry(uint64_t **a, size_t *n, uint64_t pc)
{
    uint64_t *bigger = realloc(*a, (*n + 1) * sizeof **a);
    if (!bigger)
        return -1;
    bigger[(*n)++] = pc;
    *a = bigger;
    return 0;
}

// entries=FILE: "irq ADDR" / "exc ADDR" lines, addresses in hex.
static int read_entries(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        perror(path);
        return -1;
    }
    char kind[8];                        // irq, exc or switch
    uint64_t pc;
    int err = 0;
    while (!err && fscanf(f, "%7s %" SCNx64, kind, &pc) == 2) {
        if (strcmp(kind, "irq") == 0)
            err = add_entry(&irq_entries, &n_irq_entries, pc);
        else if (strcmp(kind, "exc") == 0)
            err = add_entry(&exc_entries, &n_exc_entries, pc);
        else if (strcmp(kind, "switch") == 0)
            err = add_entry(&switch_entries, &n_switch_entries, pc);
        else
            err = -1;
    }
    fclose(f);
    if (err || !n_irq_entries) {
        fprintf(stderr, "mtrace: %s: expected \"irq|exc|switch ADDR\" lines\n", path);
        return -1;
    }
    qsort(irq_entries, n_irq_entries, sizeof *irq_entries, cmp_u64);
    qsort(exc_entries, n_exc_entries, sizeof *exc_entries, cmp_u64);
    qsort(switch_entries, n_switch_entries, sizeof *switch_entries, cmp_u64);
    return 0;
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
    (void)id, (void)udata;
    pthread_mutex_lock(&lock);
    mode->finish();
    if (out)
        fflush(out);
    pthread_mutex_unlock(&lock);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    if (!info->system_emulation) {
        fprintf(stderr, "mtrace: needs system emulation\n");
        return -1;
    }
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "mode=cost") == 0) {
            mode = &cost_mode;
        } else if (strcmp(argv[i], "mode=pairs") == 0) {
            mode = &pairs_mode;
        } else if (strncmp(argv[i], "mode=", 5) == 0) {
            fprintf(stderr, "mtrace: %s: the modes are pairs and cost\n", argv[i]);
            return -1;
        }
    }
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "mode=", 5) == 0) {
            continue;
        } else if (strncmp(argv[i], "out=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strncmp(argv[i], "entries=", 8) == 0) {
            if (read_entries(argv[i] + 8) != 0)
                return -1;
        } else if (!mode->option(argv[i])) {
            fprintf(stderr, "mtrace: unknown argument %s for mode %s (see "
                    "tools/mtrace/README.md)\n", argv[i], mode->name);
            return -1;
        }
    }
    out = path ? fopen(path, "w") : stderr;
    if (!out) {
        perror(path);
        return -1;
    }
    nvcpus = info->system.max_vcpus;
    irq_depth = calloc(nvcpus, sizeof *irq_depth);
    shadow = calloc(nvcpus, sizeof *shadow);
    if (!irq_depth || !shadow || mode->init() != 0)
        return -1;
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
