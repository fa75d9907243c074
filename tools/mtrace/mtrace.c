// mtrace: a QEMU TCG plugin that finds the cache lines two system calls share.
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
// Lines are keyed on the physical address, so a line reached through two virtual
// aliases (the direct map and the kernel image, or two processes' mappings) is
// one line; an access without a physical address (none in system emulation, in
// practice) is keyed on its virtual address with KEY_VIRT set.
//
// Interrupts are not part of a call: a timer tick inside one window writes the
// clock that the other call reads. With entries=FILE (tools/mtrace/entries.py
// writes it from the kernel's symbols: lines "irq ADDR" for the asynchronous
// interrupt entry points, "exc ADDR" for the exception entry points, "switch
// ADDR" for the context switch) the plugin stops recording on a vCPU from an
// interrupt's entry to its iretq; exceptions taken meanwhile nest. Exceptions
// taken by the call itself (page faults in copy-in/out) stay part of it. A
// handler may switch to another thread, which then runs outside the handler:
// a context switch or any user-mode store on the vCPU ends the skipping (at
// worst the tail of a handler resumed later is recorded).
//
// Output (out=FILE, else QEMU's log; markers=1 adds a "marker" line per message
// received, for debugging a guest program), one record per line, all numbers hex but
// the counts:
//   test ID n0=ACCESSES n1=ACCESSES lines=CONFLICTING_LINES bytes=CONFLICTING_BYTE_LINES
//   line ID KEY VADDR0 W0 R0 W1 R1 WPC0 RPC0 WPC1 RPC1 WCALL0 RCALL0 WCALL1 RCALL1 VADDR1
// where VADDRc is the virtual line address of call c's first access (they differ
// for a line reached through two mappings), W/R are 64-bit masks of the bytes
// each call wrote/read in the line, the PCs are 0 when that kind of access did
// not happen, and each CALL is the call
// instruction that entered the function making that access (0 if unknown): for
// an access in a helper (memset, a spin lock) the caller says more than the
// helper. The plugin keeps a shadow stack of call instructions per vCPU (push
// on call, pop on ret, emptied at a context switch); retpolines and return
// thunks keep it balanced. "test" comes first.
// Run QEMU with single-threaded TCG (-accel tcg,thread=single; tools/runqemu
// --plugin does): the vCPUs then take turns on one host thread, so the calls'
// windows never overlap in time and no callback runs concurrently. Guest
// timing still follows the host clock, so interrupts land at different points
// from run to run -- which is why they are skipped.
#define MTRACE_NO_HELPERS
#include "markers.h"
#include "qemu-plugin-api.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE 64
#define KEY_VIRT (1ULL << 63)            // key is a virtual line address
#define KERNEL_HALF (1ULL << 63)         // x86-64: kernel addresses have bit 63 set
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
static int *irq_depth;                   // per vCPU: nesting of interrupts being skipped
#define SHADOW 64                        // shadow stack entries kept per vCPU
struct shadow {
    uint64_t call[SHADOW];               // a ring: deeper frames are overwritten
    unsigned depth;
};
static struct shadow *shadow;            // per vCPU: the kernel's call stack
static uint64_t *irq_entries, *exc_entries, *switch_entries;  // sorted addresses
static size_t n_irq_entries, n_exc_entries, n_switch_entries;
static int nvcpus;
static long test_id = -1;
static uint64_t tests_reported;
static FILE *out;
static bool log_markers;                 // markers=1: log each message (debugging a runner)
// Callbacks run one at a time under single-threaded TCG; the lock keeps the
// tables sane if someone runs multi-threaded TCG anyway.
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

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

// A user-mode store: a message if it lands in the marker region. QEMU 7.2
// calls a callback registered for stores on loads too, so check.
static void on_user_store(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                          void *udata)
{
    (void)udata;
    if ((int)vcpu >= nvcpus)
        return;
    irq_depth[vcpu] = 0;                 // user code runs: no handler is
    if (vaddr - MTRACE_BASE >= MTRACE_SIZE || !qemu_plugin_mem_is_store(info))
        return;
    uint64_t off = vaddr - MTRACE_BASE;
    pthread_mutex_lock(&lock);
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
    pthread_mutex_unlock(&lock);
}

// The call that entered the function running on vcpu, or 0.
static uint64_t caller(unsigned vcpu)
{
    struct shadow *sh = &shadow[vcpu];
    return sh->depth ? sh->call[(sh->depth - 1) % SHADOW] : 0;
}

// Any access by kernel code; udata is the instruction's address.
static void on_kernel_access(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr,
                             void *udata)
{
    if ((int)vcpu >= nvcpus || window[vcpu] == NO_CALL || irq_depth[vcpu])
        return;
    uint64_t key = vaddr | KEY_VIRT;
    struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
    if (hw) {
        if (qemu_plugin_hwaddr_is_io(hw))
            return;                      // device registers are not shared memory
        key = qemu_plugin_hwaddr_phys_addr(hw);
    }
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
// instructions get a callback on every access (and interrupt entries and
// iretq one on execution), user instructions on stores.
static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
    (void)id;
    size_t n = qemu_plugin_tb_n_insns(tb);
    for (size_t i = 0; i < n; i++) {
        struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
        uint64_t pc = qemu_plugin_insn_vaddr(insn);
        if (pc & KERNEL_HALF) {
            qemu_plugin_register_vcpu_mem_cb(insn, on_kernel_access, QEMU_PLUGIN_CB_NO_REGS,
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
        }
        else {
            qemu_plugin_register_vcpu_mem_cb(insn, on_user_store, QEMU_PLUGIN_CB_NO_REGS,
                                             QEMU_PLUGIN_MEM_W, NULL);
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
    char msg[80];
    snprintf(msg, sizeof msg, "mtrace: %" PRIu64 " tests reported\n", tests_reported);
    qemu_plugin_outs(msg);
    if (out)
        fflush(out);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
                                           int argc, char **argv)
{
    if (!info->system_emulation) {
        fprintf(stderr, "mtrace: needs system emulation\n");
        return -1;
    }
    const char *path = NULL;
    for (int i = 0; i < argc; i++) {
        if (strncmp(argv[i], "out=", 4) == 0) {
            path = argv[i] + 4;
        } else if (strcmp(argv[i], "markers=1") == 0) {
            log_markers = true;
        } else if (strncmp(argv[i], "entries=", 8) == 0) {
            if (read_entries(argv[i] + 8) != 0)
                return -1;
        } else {
            fprintf(stderr, "mtrace: unknown argument %s (expected out=FILE, entries=FILE, "
                    "markers=1)\n", argv[i]);
            return -1;
        }
    }
    out = path ? fopen(path, "w") : stderr;
    if (!out) {
        perror(path);
        return -1;
    }
    nvcpus = info->system.max_vcpus;
    window = malloc(nvcpus * sizeof *window);
    irq_depth = calloc(nvcpus, sizeof *irq_depth);
    shadow = calloc(nvcpus, sizeof *shadow);
    if (!window || !irq_depth || !shadow)
        return -1;
    close_windows(NO_CALL);
    qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
    qemu_plugin_register_atexit_cb(id, at_exit, NULL);
    return 0;
}
