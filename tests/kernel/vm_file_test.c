// File-backed mappings over ScaleFS: MAP_SHARED stores are seen by read and
// writes by the mapping; MAP_PRIVATE stores stay private; a fault past the end
// of the file is SIGBUS (BUS_ADRERR); truncating or unlinking a mapped file and
// unmapping afterwards frees every page exactly once.
#include "fstest.h"
#include "ktest/ktest.h"
#include "mm/mm.h"
#include "mm/uvm_internal.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "vmtest.h"

#define BASE 0x400000UL

KTEST(vm_file_shared_private_sigbus)
{
    struct inode *d = fst_scratch("t_vmfile"), *ip;
    KREQUIRE(d);
    KREQUIRE(fs_create(d, "f", 0644, FS_EXCL, &ip) == 0);
    static char data[5 * PGSIZE / 2];
    for (size_t i = 0; i < sizeof data; i++)
        data[i] = (char)('a' + i % 26);
    KCHECK_EQ(fs_write(ip, data, sizeof data, 0), (int64_t)sizeof data);
    fst_quiesce();
    size_t free0 = fst_free_pages();

    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map_file(vs, BASE, 4 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED | UVM_SHARED, ip, 0),
              (long)BASE);
    KCHECK_EQ(uvm_map_file(vs, BASE + 8 * PGSIZE, 2 * PGSIZE, VM_READ | VM_WRITE, UVM_FIXED, ip, 1),
              (long)(BASE + 8 * PGSIZE));
    vmt_enter(vs);
    uint64_t v = 0, w;
    memcpy(&w, data + PGSIZE + 8, 8);
    KCHECK(vmt_peek(BASE + PGSIZE + 8, &v) && v == w);             // shared sees the file
    KCHECK(vmt_peek(BASE + 8 * PGSIZE + 8, &v) && v == w);         // private, offset 1 page
    // Shared store -> read(2); write(2) -> shared and (untouched) private view.
    KCHECK(vmt_touch(BASE + 16, 0x1111111111111111UL));
    KCHECK_EQ(fs_read(ip, &v, 8, 16), 8);
    KCHECK_EQ(v, 0x1111111111111111UL);
    v = 0x2222222222222222UL;
    KCHECK_EQ(fs_write(ip, &v, 8, 2 * PGSIZE), 8);
    KCHECK(vmt_peek(BASE + 2 * PGSIZE, &v) && v == 0x2222222222222222UL);
    KCHECK(vmt_peek(BASE + 9 * PGSIZE, &v) && v == 0x2222222222222222UL);
    // Private store: the file and the shared view keep the old data.
    KCHECK(vmt_touch(BASE + 9 * PGSIZE, 0x3333333333333333UL));
    KCHECK_EQ(fs_read(ip, &v, 8, 2 * PGSIZE), 8);
    KCHECK_EQ(v, 0x2222222222222222UL);
    KCHECK(vmt_peek(BASE + 2 * PGSIZE, &v) && v == 0x2222222222222222UL);
    // Page 3 lies past the end of the file (2.5 pages): SIGBUS.
    struct fault_info fi = {0, 0, 0};
    KCHECK_EQ(uvm_fault(vs, BASE + 3 * PGSIZE + 4, 0, &fi), SIGBUS);
    KCHECK_EQ(fi.code, BUS_ADRERR);
    KCHECK_EQ(fi.addr, BASE + 3 * PGSIZE + 4);
    KCHECK(!vmt_peek(BASE + 3 * PGSIZE, &v));
    // The tail of the last page reads as zeros.
    KCHECK(vmt_peek(BASE + 2 * PGSIZE + PGSIZE / 2, &v) && v == 0);
    // MADV_DONTNEED on the private mapping goes back to the file's contents.
    KCHECK_EQ(uvm_dontneed(vs, BASE + 9 * PGSIZE, PGSIZE), 0);
    KCHECK(vmt_peek(BASE + 9 * PGSIZE, &v) && v == 0x2222222222222222UL);
    // A fork shares the file pages; its private copy-on-write works on them.
    struct vmspace *c = vmspace_fork(vs);
    KCHECK(c != NULL);
    vmt_leave(vs);
    if (c) {
        v = 0x4444444444444444UL;
        KCHECK_EQ(uvm_write(c, BASE + 24, &v, 8), 0); // shared: reaches the file
        KCHECK_EQ(fs_read(ip, &w, 8, 24), 8);
        KCHECK_EQ(w, v);
        vmspace_put(c);
    }
    // Truncate while mapped, then unmap: the pages go back exactly once.
    KCHECK_EQ(fs_truncate(ip, 0), 0);
    vmspace_put(vs);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
    fst_quiesce();
    KCHECK(fst_free_pages() + 4 >= free0 + 3); // the file's 3 data pages are free too
}

// A fault past the end of the file answers SIGBUS without locking the page
// (uvm_fault.c, file_page_past_end); once the file grows over the page, the same page
// faults in the file's data, and an unmap and remap with another offset sees
// the new offset.
KTEST(vm_file_sigbus_then_grow)
{
    struct inode *d = fst_scratch("t_vmgrow"), *ip;
    KREQUIRE(d);
    KREQUIRE(fs_create(d, "f", 0644, FS_EXCL, &ip) == 0);
    uint64_t v = 0x5555555555555555UL, got = 0;
    KCHECK_EQ(fs_write(ip, &v, 8, 0), 8);
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    KCHECK_EQ(uvm_map_file(vs, BASE, 2 * PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, ip, 0), (long)BASE);
    struct fault_info fi = {0, 0, 0};
    KCHECK_EQ(uvm_fault(vs, BASE + PGSIZE + 8, 0, &fi), SIGBUS);
    KCHECK_EQ(fi.code, BUS_ADRERR);
    KCHECK_EQ(uvm_fault(vs, BASE + PGSIZE, 2 /* write */, &fi), SIGSEGV); // read-only first
    KCHECK_EQ(fi.code, SEGV_ACCERR);
    KCHECK_EQ(uvm_page_pa(vs, BASE + PGSIZE), 0);
    v = 0x6666666666666666UL;
    KCHECK_EQ(fs_write(ip, &v, 8, PGSIZE + 8), 8);
    KCHECK_EQ(uvm_fault(vs, BASE + PGSIZE + 8, 0, &fi), 0);
    KCHECK_EQ(uvm_read(vs, BASE + PGSIZE + 8, &got, 8), 0);
    KCHECK_EQ(got, v);
    // Page 1 of the mapping now shows file page 2, past the end again.
    KCHECK_EQ(uvm_map_file(vs, BASE + PGSIZE, PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, ip, 2),
              (long)(BASE + PGSIZE));
    KCHECK_EQ(uvm_fault(vs, BASE + PGSIZE, 0, &fi), SIGBUS);
    KCHECK_EQ(uvm_fault(vs, BASE, 0, &fi), 0);
    KCHECK_EQ(uvm_unmap(vs, BASE, 2 * PGSIZE), 0);
    vmspace_put(vs);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
}

// A truncate walks only the mappings whose record says a page of the file may
// be there (uvm_file.c, fmap_note): the fault that fills a page marks its own CPU's
// record, which need not be the CPU that made the mapping. Mapped here, filled
// on another CPU, truncated here: the page must still leave the mapping.
static struct vmspace *fault_vs;
static volatile int fault_sig;
static void fault_there(void *arg)
{
    (void)arg;
    struct fault_info fi = {0, 0, 0};
    fault_sig = uvm_fault(fault_vs, BASE + 8, 0, &fi);
}

static struct inode *one_page_file(struct inode *d)
{
    struct inode *ip;
    if (fs_create(d, "f", 0644, FS_EXCL, &ip) != 0)
        return NULL;
    static char page[PGSIZE];
    memset(page, 'x', sizeof page);
    if (fs_write(ip, page, PGSIZE, 0) != PGSIZE) {
        fs_iput(ip);
        return NULL;
    }
    return ip;
}

// Scratch directory `name` with a one-page file, the caller pinned to CPU 0.
static bool truncate_setup(const char *name, struct inode **d, struct inode **ip)
{
    cpumask_t me;
    cpumask_clear(&me);
    cpumask_set(&me, 0);
    return (*d = fst_scratch(name)) && (*ip = one_page_file(*d)) &&
           thread_set_affinity(thread_current(), &me) == 0;
}

KTEST(vm_file_truncate_finds_page_of_other_cpu)
{
    struct inode *d, *ip;
    KREQUIRE(truncate_setup("t_vmtrunc", &d, &ip));
    KREQUIRE((fault_vs = vmspace_new()) != NULL);
    KCHECK_EQ(uvm_map_file(fault_vs, BASE, PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, ip, 0),
              (long)BASE);
    struct thread *t = vmt_on_cpu(ncpu_online > 1 ? 1 : 0, "vmt-fault", fault_there, NULL);
    KREQUIRE(t);
    thread_join(t);
    KCHECK_EQ(fault_sig, 0);
    KCHECK(uvm_page_pa(fault_vs, BASE) != 0);
    KCHECK_EQ(fs_truncate(ip, 0), 0);
    KCHECK_EQ(uvm_page_pa(fault_vs, BASE), 0); // taken out of the mapping
    struct fault_info fi = {0, 0, 0};
    KCHECK_EQ(uvm_fault(fault_vs, BASE, 0, &fi), SIGBUS);
    vmspace_put(fault_vs);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
}

// Truncate and fork look only at the CPUs of fmap_cpus (uvm_file.c): a CPU
// that maps a file joins, leaves once its records are gone (at its tick,
// FMAP_LINGER ticks later), and joins again with its next
// record, which a truncate must then find. White-box: reads the set.
static struct inode *fault_ip;
static void map_and_fault_there(void *arg)
{
    (void)arg;
    fault_sig = -1;
    if (uvm_map_file(fault_vs, BASE, PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, fault_ip, 0) !=
        (long)BASE)
        return;
    struct fault_info fi = {0, 0, 0};
    fault_sig = uvm_fault(fault_vs, BASE + 8, 0, &fi);
}

static bool in_fmap_cpus(int c)
{
    cpumask_t m;
    fmap_cpus_snapshot(&m);
    return cpumask_test(&m, c);
}

// Map and fault ip on CPU c in a new space (fault_vs).
static bool map_on(int c, struct inode *ip)
{
    fault_ip = ip;
    if (!(fault_vs = vmspace_new()))
        return false;
    struct thread *t = vmt_on_cpu(c, "vmt-fmap", map_and_fault_there, NULL);
    if (!t)
        return false;
    thread_join(t);
    return fault_sig == 0;
}

KTEST(vm_file_fmap_cpus_follow_the_records)
{
    struct inode *d, *ip;
    KREQUIRE(truncate_setup("t_vmfmapcpus", &d, &ip));
    int c = ncpu_online > 1 ? 1 : 0;
    struct fmap_list *l = per_cpu_ptr(&fmap_list, c);
    KREQUIRE(map_on(c, ip));
    KCHECK(in_fmap_cpus(c));
    KCHECK(READ_ONCE(l->nrec) > 0);
    vmspace_put(fault_vs); // its records go with it
    if (READ_ONCE(l->nrec) == 0) {
        uint64_t end = nsec_now() + 5000000000ULL;
        while (in_fmap_cpus(c) && nsec_now() < end)
            sched_yield();
        KCHECK(!in_fmap_cpus(c));
    } else {
        kprintf("# cpu %d keeps other records: its leaving is not checked\n", c);
    }
    // Back in with the next record; the truncate finds its page.
    KREQUIRE(map_on(c, ip));
    KCHECK(in_fmap_cpus(c));
    KCHECK(uvm_page_pa(fault_vs, BASE) != 0);
    KCHECK_EQ(fs_truncate(ip, 0), 0);
    KCHECK_EQ(uvm_page_pa(fault_vs, BASE), 0);
    vmspace_put(fault_vs);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
}

// The same against a racing fault, on a fresh space each round (so the fault
// makes its CPU's record then): once both are done, the one page of the file
// is either not in the mapping (the truncate took it out, or the fault saw the
// new size: SIGBUS) or the fault came after a new write made the file one
// page long again. Never a page of the truncated file left mapped.
#define RACE_ROUNDS 200
static volatile int race_go, race_done;
static void race_faulter(void *arg)
{
    (void)arg;
    for (int r = 1; r <= RACE_ROUNDS; r++) {
        while (load_acquire(&race_go) != r)
            pause();
        struct fault_info fi = {0, 0, 0};
        fault_sig = uvm_fault(fault_vs, BASE + 8, 0, &fi);
        store_release(&race_done, r);
    }
}

KTEST(vm_file_truncate_vs_fault_race)
{
    struct inode *d, *ip;
    KREQUIRE(truncate_setup("t_vmtrrace", &d, &ip));
    race_go = race_done = 0;
    struct thread *t = vmt_on_cpu(ncpu_online > 1 ? 1 : 0, "vmt-race", race_faulter, NULL);
    KREQUIRE(t);
    static char page[PGSIZE];
    memset(page, 'y', sizeof page);
    int left = 0, sigbus = 0;
    for (int r = 1; r <= RACE_ROUNDS; r++) {
        KREQUIRE((fault_vs = vmspace_new()) != NULL);
        KCHECK_EQ(uvm_map_file(fault_vs, BASE, PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, ip, 0),
                  (long)BASE);
        store_release(&race_go, r);
        for (int spin = r % 8 * 50; spin > 0; spin--) // vary the overlap
            pause();
        KCHECK_EQ(fs_truncate(ip, 0), 0);
        while (load_acquire(&race_done) != r)
            sched_yield();
        left += uvm_page_pa(fault_vs, BASE) != 0;
        sigbus += fault_sig == SIGBUS;
        vmspace_put(fault_vs);
        KCHECK_EQ(fs_write(ip, page, PGSIZE, 0), PGSIZE);
    }
    thread_join(t);
    kprintf("# %d of %d faults came after the truncate (SIGBUS)\n", sigbus, RACE_ROUNDS);
    KCHECK_EQ(left, 0);
    fs_iput(ip);
    KCHECK_EQ(fs_unlink(d, "f"), 0);
    fs_iput(d);
}

// Pages mapped through a description open for writing (UVM_WRITER) hold write
// access to their file (ETXTBSY, fs/writecount.c) until they are unmapped,
// however that happens, in the space that mapped them and in a fork's copy.
// The counts go in runs of pages of one file: here one unmap crosses runs of
// two files, and pages mapped without UVM_WRITER never count.
KTEST(vm_file_writer_pages)
{
    struct inode *d = fst_scratch("t_vmwr"), *a, *b;
    KREQUIRE(d);
    static char data[2 * PGSIZE];
    KREQUIRE(fs_create(d, "a", 0755, FS_EXCL, &a) == 0);
    KREQUIRE(fs_create(d, "b", 0755, FS_EXCL, &b) == 0);
    KCHECK_EQ(fs_write(a, data, sizeof data, 0), (int64_t)sizeof data);
    KCHECK_EQ(fs_write(b, data, sizeof data, 0), (int64_t)sizeof data);
    struct vmspace *vs = vmspace_new();
    KREQUIRE(vs);
    int sh = UVM_FIXED | UVM_SHARED | UVM_WRITER | UVM_POPULATE;
    // The descriptions' write access, held over the mmaps (as sys_mmap does).
    KCHECK_EQ(fs_get_write(a), 0);
    KCHECK_EQ(fs_get_write(b), 0);
    KCHECK_EQ(uvm_map_file(vs, BASE, 2 * PGSIZE, VM_READ | VM_WRITE, sh, a, 0), (long)BASE);
    KCHECK_EQ(uvm_map_file(vs, BASE + 2 * PGSIZE, 2 * PGSIZE, VM_READ, sh, b, 0),
              (long)(BASE + 2 * PGSIZE));
    KCHECK_EQ(uvm_map_file(vs, BASE + 4 * PGSIZE, PGSIZE, VM_READ | VM_WRITE,
                           UVM_FIXED | UVM_WRITER | UVM_POPULATE, a, 1), (long)(BASE + 4 * PGSIZE));
    KCHECK_EQ(uvm_map_file(vs, BASE + 8 * PGSIZE, 2 * PGSIZE, VM_READ, UVM_FIXED | UVM_SHARED, a, 0),
              (long)(BASE + 8 * PGSIZE));
    fs_put_write(a); // the descriptions are closed: the pages still count
    fs_put_write(b);
    KCHECK_EQ(fs_deny_write(a), -ETXTBSY);
    KCHECK_EQ(fs_deny_write(b), -ETXTBSY);

    struct vmspace *c = vmspace_fork(vs);
    KREQUIRE(c);
    KCHECK_EQ(uvm_unmap(vs, BASE, 5 * PGSIZE), 0); // runs of a, b, a
    KCHECK_EQ(fs_deny_write(a), -ETXTBSY);          // the child's copies
    KCHECK_EQ(fs_deny_write(b), -ETXTBSY);
    KCHECK_EQ(uvm_unmap_async(c, BASE + PGSIZE, 3 * PGSIZE), 0); // a page 1, b
    epoch_synchronize(); // (released at once here: no other CPU had the pages)
    KCHECK_EQ(fs_deny_write(b), 0);
    fs_allow_write(b);
    KCHECK_EQ(fs_deny_write(a), -ETXTBSY); // pages at BASE and BASE + 4 pages
    KCHECK_EQ(uvm_map(c, BASE, PGSIZE, VM_READ, UVM_FIXED), (long)BASE);
    KCHECK_EQ(fs_deny_write(a), -ETXTBSY);
    vmspace_put(c);
    KCHECK_EQ(fs_deny_write(a), 0); // the pages left (BASE + 8) never counted
    fs_allow_write(a);

    // Freeing the space (exit, exec) gives the write access back too.
    KCHECK_EQ(fs_get_write(b), 0);
    KCHECK_EQ(uvm_map_file(vs, BASE, 2 * PGSIZE, VM_READ, sh, b, 0), (long)BASE);
    fs_put_write(b);
    KCHECK_EQ(fs_deny_write(b), -ETXTBSY);
    vmspace_put(vs);
    KCHECK_EQ(fs_deny_write(b), 0);
    fs_allow_write(b);
    fs_iput(a);
    fs_iput(b);
    KCHECK_EQ(fs_unlink(d, "a"), 0);
    KCHECK_EQ(fs_unlink(d, "b"), 0);
    fs_iput(d);
}

// A space that maps files one after another and unmaps them lets each go
// (uvm_file.c, "When records go"); kept, the 40 files of 3 pages would be
// over 160 pages short. Unmapped here, a file goes when the space maps the next one
// (the last one stays until the space goes). Unmapped by another CPU, which
// this CPU does not hear of, records go by count: at most FMAP_SWEEP_MIN (8)
// dead ones stay.
static struct vmspace *letgo_vs;
static uintptr_t letgo_va;
static void unmap_there(void *arg)
{
    (void)arg;
    uvm_unmap(letgo_vs, letgo_va, 3 * PGSIZE);
}

KTEST(vm_file_unmapped_files_are_let_go)
{
    struct inode *d = fst_scratch("t_vmletgo");
    KREQUIRE(d);
    struct vmspace *vs = letgo_vs = vmspace_new();
    KREQUIRE(vs);
    vmt_enter(vs);
    static char data[3 * PGSIZE];
    memset(data, 'z', sizeof data);
    fst_quiesce();
    size_t free0 = fst_free_pages();
    for (int there = 0; there <= 1; there++) {
        for (int i = 0; i < 40; i++) {
            struct inode *ip;
            KREQUIRE(fs_create(d, "f", 0644, FS_EXCL, &ip) == 0);
            KCHECK_EQ(fs_write(ip, data, sizeof data, 0), (int64_t)sizeof data);
            long a = uvm_map_file(vs, 0, sizeof data, VM_READ | VM_WRITE, UVM_SHARED, ip, 0);
            KREQUIRE(a > 0);
            KCHECK(vmt_touch(a + PGSIZE, (uint64_t)i));
            if (there) {
                letgo_va = a;
                struct thread *t = vmt_on_cpu(ncpu_online > 1 ? 1 : 0, "vmt-unmap", unmap_there, NULL);
                KREQUIRE(t);
                thread_join(t);
            } else {
                KCHECK_EQ(uvm_unmap(vs, a, sizeof data), 0);
            }
            fs_iput(ip);
            KCHECK_EQ(fs_unlink(d, "f"), 0);
        }
        fst_quiesce();
        // The mappings' page-table pages and tree nodes stay with the space
        // (3 pages here, a few more for the other CPU's tables), and so do
        // the files kept: one here, 8 there, each about 6 pages (its data,
        // their index, its inode's share of a slab).
        KCHECK(fst_pages_back(free0, fst_free_pages(), there ? 16 + 8 * 6 : 6 + 6));
    }
    vmt_leave(vs);
    vmspace_put(vs);
    fs_iput(d);
    fst_quiesce();
    KCHECK(fst_pages_back(free0, fst_free_pages(), 4));
}
