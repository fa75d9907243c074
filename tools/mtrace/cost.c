// mtrace's cost mode (mode=cost): what each operation of a benchmark costs, in
// figures that do not depend on the host's speed or load.
//
// A benchmark brackets each operation of each worker with mtrace_cost_begin(op)
// and mtrace_cost_end() on the worker's vCPU (markers.h); between the two the
// vCPU has a window open for that op id. Per op id the plugin adds up
//   windows      operations measured
//   instructions guest instructions executed inside windows: in kernel mode,
//                in user mode, and in skipped interrupt handlers (entries=FILE),
//                apart
//   transfers    cache-line transfers between vCPUs charged to the window
//                (kernel, user, and in interrupt handlers, apart)
// Like a pairs window, a window belongs to a vCPU: whatever runs there while
// it is open (a blocked worker's successor, the idle loop) is counted.
//
// The transfer model: a MESI-style simulation of one cache per vCPU, at
// 64-byte lines of guest physical memory, fed with every access of every vCPU
// (user and kernel, inside windows or not, handlers included), so that a
// line's state is right when a window touches it. Per line it keeps the vCPU
// that last wrote it and the set of vCPUs that read it since. An access by
// vCPU v is a transfer when
//   - v reads or writes a line another vCPU wrote last, and v has not read it
//     since that write (once per line until it changes hands again), or
//   - v writes a line other vCPUs read since its last write (their copies go).
// Then v is the line's last writer (write) or one of its readers (read). An
// access that is both counts once; one that straddles lines counts per line.
// A transfer is charged to the window open on v, if any: that is the cost of
// the operation running there. It is also told apart by what caused it: the
// accesses of other vCPUs' operations and user code, or only accesses made in
// interrupt handlers (the timer tick's flushes, trims, epoch scans). The line
// keeps whether its last write came from a handler and which vCPU (one, or
// several) read it outside handlers since; a transfer whose other side was
// handlers alone counts as caused by handlers. Under the plugin, an operation
// runs thousands of times longer in guest time than on hardware, so it spans
// many ticks (tens at 64 vCPUs) where hardware runs many operations per tick:
// costs that follow the tick are charged far more often per operation than
// they would be, and this keeps them apart. Instructions are counted per translated block
// when it starts (TCG takes interrupts between blocks only); the blocks holding
// the begin and end stores are trimmed to the instructions between them. A block
// cut short by a fault (a page fault on a load, say) counts whole, which is
// the same from run to run.
//
// Output (out=FILE), written at exit, all numbers decimal but addresses (hex):
//   op ID windows=N kernel_insns=N user_insns=N irq_insns=N kernel_xfers=N
//      user_xfers=N irq_xfers=N handler_caused=N               (one line)
//   site ID PC CALL VADDR COUNT HANDLER_CAUSED
//   block ID PC 0 0 INSNS 0
//   total vcpus=N user_accesses=N kernel_accesses=N untracked=N xfers=N xfers_outside=N
// one "op" line per op id that had a window; "site" lines name the kernel
// instructions that made an op's transfers (sites=N per op, most first;
// default 20): PC, the call that entered its function (CALL, 0 if unknown),
// the virtual address of the line at its first transfer there, and the count,
// and how many of them handlers caused (handler_caused: of the op's kernel and
// user transfers);
// "block" lines the kernel blocks the op executed, by instructions
// (blocks=N per op, default 200), for finding where they went.
// "untracked" counts accesses above the simulated physical range.
#include "mtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NOPS MTRACE_COST_MAX_OP          // op ids 0 .. NOPS-1
#define NO_OP (-1)

struct opstat {
    uint64_t windows;
    uint64_t kernel_insns, user_insns, irq_insns;
    uint64_t kernel_xfers, user_xfers, irq_xfers;
    uint64_t handler_caused;             // of kernel_xfers + user_xfers
};

static struct opstat stats[NOPS];
static int *current;                     // per vCPU: the op whose window is open, or NO_OP
static uint64_t accesses[2], untracked, xfers, xfers_outside;  // accesses: user, kernel
static unsigned max_sites = 20, max_blocks = 200;  // per op, in the output

// ---- line states ------------------------------------------------------------
// Guest physical memory in 1 MiB chunks, allocated when first touched: q35 puts
// RAM below 4 GiB and above it, well under PHYS_LIMIT.
#define CHUNK_SHIFT 20
#define CHUNK_LINES (1u << (CHUNK_SHIFT - 6))
#define PHYS_LIMIT (1ULL << 40)

// A line's state word: its last writer, whether that write came from an
// interrupt handler, and who read it outside handlers since (none, one vCPU,
// or several).
#define ST_WRITER 0x3ffu                 // last writer + 1, or 0
#define ST_WRITE_IN_HANDLER (1u << 10)
#define ST_READER_SHIFT 11               // then: 0, reader + 1, or ST_MANY
#define ST_MANY 0x3ffu
#define MAX_VCPUS 1000                   // fits ST_WRITER and the reader field

struct chunk {
    uint32_t *state;                     // per line
    uint64_t *readers;                   // per line: `words` words, bit v: v read it since
};

enum xfer { NO_XFER, XFER, XFER_BY_HANDLERS };

static struct chunk *chunks;             // PHYS_LIMIT >> CHUNK_SHIFT of them
static unsigned words;                   // bitmap words per line

static struct chunk *chunk_of(uint64_t line)
{
    struct chunk *c = &chunks[line >> CHUNK_SHIFT];
    if (!c->state) {
        c->state = calloc(CHUNK_LINES, sizeof *c->state);
        c->readers = calloc((size_t)CHUNK_LINES * words, sizeof *c->readers);
        if (!c->state || !c->readers) {
            fprintf(stderr, "mtrace: out of memory\n");
            abort();
        }
    }
    return c;
}

// Vcpu v accesses line (a physical line address), in a handler or not: is that
// a transfer, and did only handlers' accesses cause it?
static enum xfer touch(unsigned v, uint64_t line, bool store, bool in_handler)
{
    struct chunk *c = chunk_of(line);
    size_t i = (line >> 6) % CHUNK_LINES;
    uint32_t *st = &c->state[i];
    uint64_t *readers = &c->readers[i * words];
    uint64_t bit = 1ULL << (v % 64);
    unsigned writer = *st & ST_WRITER, reader = *st >> ST_READER_SHIFT;
    bool holds = writer == v + 1 || (readers[v / 64] & bit);
    // The last write counts against v if it was another vCPU's, v not holding
    // the line since; it was a handler's or not.
    bool from_write = writer != 0 && !holds;
    bool by_handler = from_write && (*st & ST_WRITE_IN_HANDLER);
    if (!store) {
        if (holds)
            return NO_XFER;
        readers[v / 64] |= bit;
        if (!in_handler && reader != v + 1)
            *st = (*st & ~(ST_MANY << ST_READER_SHIFT)) |
                  (reader ? ST_MANY : v + 1) << ST_READER_SHIFT;
        return !from_write ? NO_XFER : by_handler ? XFER_BY_HANDLERS : XFER;
    }
    bool others_read = false;
    for (unsigned k = 0; k < words; k++) {
        others_read |= (readers[k] & ~(k == v / 64 ? bit : 0)) != 0;
        readers[k] = 0;
    }
    // Readers outside handlers other than v (ST_MANY: at least one other).
    bool others_read_outside = reader != 0 && reader != v + 1;
    *st = (v + 1) | (in_handler ? ST_WRITE_IN_HANDLER : 0);
    if (!from_write && !others_read)
        return NO_XFER;
    bool by_ops = (from_write && !by_handler) || others_read_outside;
    return by_ops ? XFER : XFER_BY_HANDLERS;
}

// ---- tallies ---------------------------------------------------------------------
// Per (op, pc, call): a count, in an open-addressing hash table. Two of them:
// the kernel instructions that made each op's transfers (call: the call that
// entered the function, vaddr: the line at the first one), and the kernel
// blocks each op executed (call 0; count: instructions).
struct entry {
    uint64_t pc, call, vaddr, count;
    uint64_t by_handlers;                // sites: of count, caused by handlers alone
    int op;                              // NO_OP: free slot
};

struct tally {
    struct entry *slot;
    size_t cap, used;
};

static struct tally sites, code;

static uint64_t hash(uint64_t x)
{
    x ^= x >> 29;
    x *= 0xbf58476d1ce4e5b9ULL;
    return x ^ (x >> 32);
}

static struct entry *slot_of(struct entry *slot, size_t cap, int op, uint64_t pc,
                             uint64_t call)
{
    size_t mask = cap - 1;
    for (size_t i = hash(pc ^ hash(call + (uint64_t)op)) & mask;; i = (i + 1) & mask) {
        struct entry *e = &slot[i];
        if (e->op == NO_OP || (e->op == op && e->pc == pc && e->call == call))
            return e;
    }
}

static void grow(struct tally *t)
{
    size_t cap = t->cap ? t->cap * 2 : 4096;
    struct entry *bigger = malloc(cap * sizeof *bigger);
    if (!bigger) {
        fprintf(stderr, "mtrace: out of memory\n");
        abort();
    }
    for (size_t i = 0; i < cap; i++)
        bigger[i].op = NO_OP;
    for (size_t i = 0; i < t->cap; i++) {
        struct entry *e = &t->slot[i];
        if (e->op != NO_OP)
            *slot_of(bigger, cap, e->op, e->pc, e->call) = *e;
    }
    free(t->slot);
    t->slot = bigger;
    t->cap = cap;
}

static void add(struct tally *t, int op, uint64_t pc, uint64_t call, uint64_t vaddr,
                uint64_t n, bool by_handlers)
{
    if ((t->used + 1) * 2 > t->cap)
        grow(t);
    struct entry *e = slot_of(t->slot, t->cap, op, pc, call);
    if (e->op == NO_OP) {
        *e = (struct entry){ .op = op, .pc = pc, .call = call, .vaddr = vaddr };
        t->used++;
    }
    e->count += n;
    if (by_handlers)
        e->by_handlers += n;
}

// ---- accesses -------------------------------------------------------------------

static void charge(unsigned v, bool kernel, uint64_t pc, uint64_t vaddr, enum xfer x)
{
    xfers++;
    int op = current[v];
    bool by_handlers = x == XFER_BY_HANDLERS;
    if (op == NO_OP) {
        xfers_outside++;
    } else if (!kernel) {
        stats[op].user_xfers++;
        stats[op].handler_caused += by_handlers;
    } else if (irq_depth[v]) {
        stats[op].irq_xfers++;
    } else {
        stats[op].kernel_xfers++;
        stats[op].handler_caused += by_handlers;
        add(&sites, op, pc, caller(v), vaddr & ~(uint64_t)(LINE - 1), 1, by_handlers);
    }
}

static void access(unsigned v, qemu_plugin_meminfo_t info, uint64_t vaddr, bool kernel,
                   uint64_t pc)
{
    uint64_t key;
    if (!access_key(info, vaddr, &key))
        return;
    pthread_mutex_lock(&lock);
    accesses[kernel]++;
    if (key >= PHYS_LIMIT) {             // KEY_VIRT too: no physical address
        untracked++;
    } else {
        bool store = qemu_plugin_mem_is_store(info);
        uint64_t end = key + (1u << qemu_plugin_mem_size_shift(info));
        for (uint64_t line = key & ~(uint64_t)(LINE - 1); line < end; line += LINE) {
            enum xfer x = touch(v, line, store, irq_depth[v] != 0);
            if (x != NO_XFER)
                charge(v, kernel, pc, vaddr, x);
        }
    }
    pthread_mutex_unlock(&lock);
}

static void on_kernel_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                             void *udata)
{
    if ((int)vcpu < nvcpus)
        access(vcpu, info, vaddr, true, (uint64_t)(uintptr_t)udata);
}

static void user_access(unsigned vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr)
{
    access(vcpu, info, vaddr, false, 0);
}

// A cold start: no line has a writer or readers.
static void forget_lines(void)
{
    for (size_t i = 0; i < (PHYS_LIMIT >> CHUNK_SHIFT); i++) {
        if (chunks[i].state) {
            memset(chunks[i].state, 0, CHUNK_LINES * sizeof *chunks[i].state);
            memset(chunks[i].readers, 0, (size_t)CHUNK_LINES * words * sizeof *chunks[i].readers);
        }
    }
}

// A store to the marker region: a window opens or closes, or a cold start. rest: instructions
// after the store in its block, which block() counted (end) or did not (begin).
static void message(unsigned vcpu, uint64_t off, unsigned rest)
{
    if (off - MTRACE_COST_OP < NOPS) {
        int op = off - MTRACE_COST_OP;
        current[vcpu] = op;
        stats[op].windows++;
        stats[op].user_insns += rest;
    } else if (off == MTRACE_COST_END && current[vcpu] != NO_OP) {
        stats[current[vcpu]].user_insns -= rest;
        current[vcpu] = NO_OP;
    } else if (off == MTRACE_COST_COLD) {
        forget_lines();
    }
}

static void block(unsigned vcpu, uint64_t pc, unsigned n, enum block_kind kind)
{
    int op = current[vcpu];
    if (op == NO_OP)
        return;
    if (kind == BLOCK_IN_USER) {
        stats[op].user_insns += n;
    } else if (kind == BLOCK_IN_HANDLER) {
        stats[op].irq_insns += n;
    } else {
        stats[op].kernel_insns += n;
        add(&code, op, pc, 0, 0, n, false);
    }
}

// ---- setup and output ----------------------------------------------------------

static bool number(const char *arg, const char *name, unsigned *value)
{
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0 || arg[len] != '=')
        return false;
    char *end;
    *value = strtoul(arg + len + 1, &end, 10);
    return *end == 0 && end != arg + len + 1;
}

static bool option(const char *arg)
{
    return number(arg, "sites", &max_sites) || number(arg, "blocks", &max_blocks);
}

static int init(void)
{
    if (nvcpus > MAX_VCPUS)
        return -1;
    words = (nvcpus + 63) / 64;
    current = malloc(nvcpus * sizeof *current);
    chunks = calloc(PHYS_LIMIT >> CHUNK_SHIFT, sizeof *chunks);
    if (!current || !chunks)
        return -1;
    for (int v = 0; v < nvcpus; v++)
        current[v] = NO_OP;
    return 0;
}

static int by_op_then_count(const void *a, const void *b)
{
    const struct entry *x = a, *y = b;
    if (x->op != y->op)
        return x->op < y->op ? -1 : 1;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    if (x->pc != y->pc)                  // an order that is the same from run to run
        return x->pc < y->pc ? -1 : 1;
    return x->call < y->call ? -1 : x->call > y->call;
}

// "KIND OP PC CALL VADDR COUNT BY_HANDLERS" for the first `max` entries of each
// op, most first.
static void write_tally(struct tally *t, const char *kind, unsigned max)
{
    qsort(t->slot, t->cap, sizeof *t->slot, by_op_then_count);  // free slots (NO_OP) first
    unsigned shown = 0;
    for (size_t i = 0; i < t->cap; i++) {
        struct entry *e = &t->slot[i];
        if (e->op == NO_OP)
            continue;
        shown = i && t->slot[i - 1].op == e->op ? shown + 1 : 0;
        if (shown < max)
            fprintf(out, "%s %d %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIu64 " %" PRIu64 "\n",
                    kind, e->op, e->pc, e->call, e->vaddr, e->count, e->by_handlers);
    }
}

static void finish(void)
{
    int ops = 0;
    for (int op = 0; op < NOPS; op++) {
        struct opstat *s = &stats[op];
        if (!s->windows)
            continue;
        ops++;
        fprintf(out, "op %d windows=%" PRIu64 " kernel_insns=%" PRIu64 " user_insns=%" PRIu64
                " irq_insns=%" PRIu64 " kernel_xfers=%" PRIu64 " user_xfers=%" PRIu64
                " irq_xfers=%" PRIu64 " handler_caused=%" PRIu64 "\n", op, s->windows,
                s->kernel_insns, s->user_insns, s->irq_insns, s->kernel_xfers, s->user_xfers,
                s->irq_xfers, s->handler_caused);
    }
    write_tally(&sites, "site", max_sites);
    write_tally(&code, "block", max_blocks);
    fprintf(out, "total vcpus=%d user_accesses=%" PRIu64 " kernel_accesses=%" PRIu64
            " untracked=%" PRIu64 " xfers=%" PRIu64 " xfers_outside=%" PRIu64 "\n", nvcpus,
            accesses[0], accesses[1], untracked, xfers, xfers_outside);
    char msg[80];
    snprintf(msg, sizeof msg, "mtrace: cost of %d op ids reported\n", ops);
    qemu_plugin_outs(msg);
}

const struct mode cost_mode = {
    .name = "cost",
    .option = option,
    .init = init,
    .kernel_access = on_kernel_access,
    .user_access = user_access,
    .message = message,
    .block = block,
    .finish = finish,
    .preemption_skipped = true,
};
