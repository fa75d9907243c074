// mtrace's pairs mode (the default): the cache lines two system calls share.
//
// A guest program (the pairwise conformance runner, tests/mtrace/*.c) marks each
// call's window with stores to its marker region (markers.h). While a window is
// open on a vCPU, every memory access made there by kernel code (instruction
// address in the upper half) is folded into that call's footprint: per 64-byte
// line, which bytes were read and written and the first reading and writing PC.
// When the test is done the plugin writes every line touched by both calls where
// at least one wrote it, then forgets both footprints.
//
// A window belongs to a vCPU, not to a thread (QEMU 7.2 shows a plugin no
// registers): if the call's thread blocks or is preempted inside its window,
// whatever runs on that vCPU meanwhile is counted. The guest program keeps
// everything else off the calls' CPUs.
//
// Output, one record per line, all numbers hex but the counts:
//   test ID n0=ACCESSES n1=ACCESSES lines=CONFLICTING_LINES bytes=CONFLICTING_BYTE_LINES
//   line ID KEY VADDR0 W0 R0 W1 R1 WPC0 RPC0 WPC1 RPC1 WCALL0 RCALL0 WCALL1 RCALL1 VADDR1
// where KEY is the line's physical address (mtrace.c), VADDRc is the virtual
// line address of call c's first access (they differ for a line reached through
// two mappings), W/R are 64-bit masks of the bytes each call wrote/read in the
// line, the PCs are 0 when that kind of access did not happen, and each CALL is
// the call instruction that entered the function making that access (0 if
// unknown; mtrace.c's shadow stack): for an access in a helper (memset, a spin
// lock) the caller says more than the helper. "test" comes first. With
// markers=1 a "marker" line per message received, for debugging a guest program.
#include "mtrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define NCALLS 2
#define NO_CALL (-1)

// One call's accesses to one line.
struct line {
    uint64_t key;                        // line address (| KEY_VIRT); 0 = free slot
    uint64_t vaddr;                      // virtual line address of the first access
    uint64_t rmask, wmask;               // bytes read / written
    uint64_t rpc, wpc;                   // first reading / writing instruction
    uint64_t rcall, wcall;               // the call that entered the function of each
};

// A call's footprint: an open-addressing hash table of lines.
struct footprint {
    struct line *slot;
    size_t cap, used;                    // cap is a power of two
    uint64_t accesses;
};

static struct footprint calls[NCALLS];
static int *window;                      // per vCPU: call whose window is open, or NO_CALL
static long test_id = -1;
static uint64_t tests_reported;
static bool log_markers;                 // markers=1: log each message (debugging a runner)

static uint64_t hash(uint64_t key)
{
    key ^= key >> 29;
    key *= 0xbf58476d1ce4e5b9ULL;
    return key ^ (key >> 32);
}

static struct line *lookup(struct footprint *fp, uint64_t key);

static void grow(struct footprint *fp)
{
    struct footprint bigger = { .cap = fp->cap ? fp->cap * 2 : 1024,
                                .accesses = fp->accesses };
    bigger.slot = calloc(bigger.cap, sizeof(struct line));
    if (!bigger.slot) {
        fprintf(stderr, "mtrace: out of memory\n");
        abort();
    }
    for (size_t i = 0; i < fp->cap; i++) {
        if (fp->slot[i].key)
            *lookup(&bigger, fp->slot[i].key) = fp->slot[i];
    }
    bigger.used = fp->used;
    free(fp->slot);
    *fp = bigger;
}

// The slot holding key, or the free slot where it belongs.
static struct line *lookup(struct footprint *fp, uint64_t key)
{
    size_t mask = fp->cap - 1;
    for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
        if (fp->slot[i].key == key || fp->slot[i].key == 0)
            return &fp->slot[i];
    }
}

static struct line *find(struct footprint *fp, uint64_t key)
{
    if (!fp->cap)
        return NULL;
    struct line *l = lookup(fp, key);
    return l->key ? l : NULL;
}

static struct line *insert(struct footprint *fp, uint64_t key, uint64_t vaddr)
{
    if ((fp->used + 1) * 2 > fp->cap)
        grow(fp);
    struct line *l = lookup(fp, key);
    if (!l->key) {
        *l = (struct line){ .key = key, .vaddr = vaddr };
        fp->used++;
    }
    return l;
}

#define KEEP_SLOTS 65536                 // a bigger table is freed, not cleared

static void forget(struct footprint *fp)
{
    if (fp->cap > KEEP_SLOTS) {
        free(fp->slot);
        fp->slot = NULL;
        fp->cap = 0;
    } else if (fp->cap) {
        memset(fp->slot, 0, fp->cap * sizeof(struct line));
    }
    fp->used = 0;
    fp->accesses = 0;
}

static void record(struct footprint *fp, uint64_t key, uint64_t vaddr, unsigned size,
                   bool store, uint64_t pc, uint64_t call)
{
    // An access may straddle two lines (or more, for wide vector accesses).
    while (size) {
        unsigned off = key % LINE;
        unsigned n = size < LINE - off ? size : LINE - off;
        uint64_t bytes = (n == 64 ? ~0ULL : ((1ULL << n) - 1)) << off;
        struct line *l = insert(fp, key - off, vaddr - off);
        if (store) {
            l->wmask |= bytes;
            if (!l->wpc)
                l->wpc = pc, l->wcall = call;
        } else {
            l->rmask |= bytes;
            if (!l->rpc)
                l->rpc = pc, l->rcall = call;
        }
        key += n;
        vaddr += n;
        size -= n;
    }
}

// Writes the test's conflicts and forgets both footprints.
static void report(void)
{
    struct footprint *a = &calls[0], *b = &calls[1];
    uint64_t lines = 0, bytes = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *body = open_memstream(&buf, &len);
    for (size_t i = 0; i < a->cap; i++) {
        struct line *x = &a->slot[i];
        if (!x->key)
            continue;
        struct line *y = find(b, x->key);
        if (!y || !(x->wmask || y->wmask))
            continue;
        lines++;
        if ((x->wmask & (y->rmask | y->wmask)) | (y->wmask & (x->rmask | x->wmask)))
            bytes++;
        fprintf(body, "line %ld %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
                " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64
                " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 " %" PRIx64 "\n",
                test_id, x->key, x->vaddr, x->wmask, x->rmask, y->wmask, y->rmask,
                x->wpc, x->rpc, y->wpc, y->rpc, x->wcall, x->rcall, y->wcall, y->rcall,
                y->vaddr);
    }
    fclose(body);
    fprintf(out, "test %ld n0=%" PRIu64 " n1=%" PRIu64 " lines=%" PRIu64 " bytes=%" PRIu64 "\n",
            test_id, a->accesses, b->accesses, lines, bytes);
    fwrite(buf, 1, len, out);
    fflush(out);
    free(buf);
    tests_reported++;
    forget(a);
    forget(b);
}

static void close_windows(int call)
{
    for (int v = 0; v < nvcpus; v++) {
        if (window[v] == call || call == NO_CALL)
            window[v] = NO_CALL;
    }
}

// A store to the marker region.
static void message(unsigned vcpu, uint64_t off, unsigned rest)
{
    (void)rest;
    if (log_markers)
        fprintf(out, "marker vcpu=%u off=%#" PRIx64 " n0=%" PRIu64 " n1=%" PRIu64 "\n", vcpu,
                off, calls[0].accesses, calls[1].accesses);
    if (off >= MTRACE_ID) {
        test_id = off - MTRACE_ID;
    } else if (off == MTRACE_DONE) {
        close_windows(NO_CALL);
        report();
    } else if (off >= MTRACE_CLOSE && off < MTRACE_CLOSE + NCALLS) {
        close_windows(off - MTRACE_CLOSE);
    } else if (off - MTRACE_OPEN < NCALLS) {
        close_windows(off - MTRACE_OPEN);  // a call runs on one vCPU at a time
        window[vcpu] = off - MTRACE_OPEN;
    }
}

// Any access by kernel code; udata is the instruction's address.
static void on_kernel_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                             void *udata)
{
    if ((int)vcpu >= nvcpus || window[vcpu] == NO_CALL || irq_depth[vcpu])
        return;
    uint64_t key;
    if (!access_key(info, vaddr, &key))
        return;
    if (key == 0)
        key = KEY_VIRT;                  // physical line 0: keep 0 for free slots
    pthread_mutex_lock(&lock);
    int call = window[vcpu];
    if (call != NO_CALL) {
        calls[call].accesses++;
        record(&calls[call], key, vaddr, 1u << qemu_plugin_mem_size_shift(info),
               qemu_plugin_mem_is_store(info), (uint64_t)(uintptr_t)udata, caller(vcpu));
    }
    pthread_mutex_unlock(&lock);
}

static bool option(const char *arg)
{
    if (strcmp(arg, "markers=1") == 0)
        return log_markers = true;
    return false;
}

static int init(void)
{
    window = malloc(nvcpus * sizeof *window);
    if (!window)
        return -1;
    close_windows(NO_CALL);
    return 0;
}

static void finish(void)
{
    char msg[80];
    snprintf(msg, sizeof msg, "mtrace: %" PRIu64 " tests reported\n", tests_reported);
    qemu_plugin_outs(msg);
}

const struct mode pairs_mode = {
    .name = "pairs",
    .option = option,
    .init = init,
    .kernel_access = on_kernel_access,
    .message = message,
    .finish = finish,
};
