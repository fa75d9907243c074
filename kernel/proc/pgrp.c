// Process groups and sessions: setsid, setpgid, getpgid, getpgrp, getsid, and
// the member lists kill(-pgid) walks.
//
// Commute: everything that does not name a group: kill to one pid, wait for a
// child, fork and exit of processes in different groups, and fork, posix_spawn
// and exit in one group on different CPUs. A process keeps its group and
// session ids in its own struct proc (read lock-free by getpgid, wait and the
// tty); a group is a struct pgrp found by pgid in a hash table with a lock per
// bucket (no global lock). Its members are kept in partitions, one per CPU that
// created a member (or moved one in), each with its own lock, list and count on
// a cache line of its own, allocated on that CPU when it first needs it: a new
// process joins the partition of the CPU it is created on, and is usually
// reaped there by its parent, so processes of one group that fork, spawn and
// wait on different CPUs write different lines however many CPUs there are.
// (With a fixed 8 partitions, CPU c used partition c % 8: posix_spawn+wait in
// 64 worker processes of one group moved 5.6 lines per operation, bench-cost.)
// A group holds a pointer per CPU the machine has (8 bytes each) and a line per
// CPU that used it. Only what concerns the whole group (setsid/setpgid moves,
// emptiness, kill(-pgid)'s snapshot) locks every partition made. A group is
// unhashed when its last member is reaped and freed a grace period later, so
// lock_own can chase p->pgrp without a lock.
//
// Lock order: bucket, then a group's make_lock (making a partition, and held
// while all of them are locked, so none appears meanwhile), then partition
// locks, ordered by (group address, CPU). None is ever held while a proc lock
// is taken (reaping takes them inside one), so senders walk a snapshot of the
// members' pids (pgrp_pids) and signal them one by one.
#include "mm/mm.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"

#define PGRP_BUCKETS 256

struct pgrp_part {
    struct spinlock lock;
    struct list members;   // struct proc.pgrp_link
    int n;
} __cacheline_aligned;

struct pgrp {
    int pgid, sid;
    struct pgrp *hash_next; // under the bucket's lock
    bool unhashed;          // under the bucket's lock: empty for good, freed soon
    int home;               // [i] the CPU whose partition came with the group
    int nparts;             // [i] entries in part[]: the CPUs the machine has
    struct epoch_cb free_cb;
    struct spinlock make_lock; // making a partition; held through lock_all
    cpumask_t made;         // [make_lock] the CPUs whose partition exists
    struct pgrp_part *part[]; // [make_lock] set once (release), NULL until made
};

static struct bucket {
    struct spinlock lock;
    struct pgrp *head;
} __cacheline_aligned buckets[PGRP_BUCKETS];

static struct bucket *bucket_of(int pgid) { return &buckets[(unsigned)pgid % PGRP_BUCKETS]; }

static struct pgrp_part *part_new(void)
{
    struct pgrp_part *pt = kmalloc(sizeof *pt);
    if (pt) {
        spin_init(&pt->lock, "pgrp");
        list_init(&pt->members);
        pt->n = 0;
    }
    return pt;
}

static struct pgrp_part *part_of(struct pgrp *g, int i) { return load_acquire(&g->part[i]); }

// The partition a process created (or moved) on this CPU joins: this CPU's,
// made now if need be; the group's first if it cannot be made (out of memory).
// Only a placement choice, so no need to stay on this CPU. Holds no partition
// lock; g is held by the caller's epoch section or a member.
static int part_here(struct pgrp *g)
{
    int c = cpu_id();
    if (c >= g->nparts)
        return g->home; // (a CPU the machine did not count when g was made)
    if (part_of(g, c))
        return c;
    struct pgrp_part *pt = part_new();
    if (!pt)
        return g->home;
    spin_lock(&g->make_lock);
    if (!g->part[c]) {
        store_release(&g->part[c], pt);
        cpumask_set(&g->made, c);
        pt = NULL;
    }
    spin_unlock(&g->make_lock);
    kfree(pt); // (made meanwhile by another thread on this CPU)
    return c;
}

void pgrp_init(void)
{
    for (int i = 0; i < PGRP_BUCKETS; i++)
        spin_init(&buckets[i].lock, "pgrp bucket");
}

// Under the bucket's lock.
static struct pgrp *find(struct bucket *b, int pgid)
{
    for (struct pgrp *g = b->head; g; g = g->hash_next)
        if (g->pgid == pgid)
            return g;
    return NULL;
}

// A group with this CPU's partition made (its home).
static struct pgrp *pgrp_new(int pgid, int sid)
{
    int nparts = READ_ONCE(ncpu);
    struct pgrp *g = kzalloc(sizeof *g + nparts * sizeof g->part[0]);
    struct pgrp_part *pt = part_new();
    if (!g || !pt) {
        kfree(g);
        kfree(pt);
        return NULL;
    }
    g->pgid = pgid;
    g->sid = sid;
    g->nparts = nparts;
    g->home = MIN(cpu_id(), nparts - 1);
    spin_init(&g->make_lock, "pgrp parts");
    g->part[g->home] = pt;
    cpumask_set(&g->made, g->home);
    return g;
}

// After a grace period: partitions made by joiners that raced with the group's
// end (inside their epoch sections) are in `made` by now.
static void pgrp_free(struct pgrp *g)
{
    if (!g)
        return;
    for_each_cpu(c, &g->made)
        kfree(g->part[c]);
    kfree(g);
}

static void free_cb(struct epoch_cb *cb) { pgrp_free(container_of(cb, struct pgrp, free_cb)); }

static void lock_all(struct pgrp *g)
{
    spin_lock(&g->make_lock);
    for_each_cpu(c, &g->made)
        spin_lock(&g->part[c]->lock);
}

static void unlock_all(struct pgrp *g)
{
    for_each_cpu(c, &g->made)
        spin_unlock(&g->part[c]->lock);
    spin_unlock(&g->make_lock);
}

static int members(struct pgrp *g) // all partitions locked
{
    int n = 0;
    for_each_cpu(c, &g->made)
        n += g->part[c]->n;
    return n;
}

// Lock the partition p is on (p may be moved meanwhile: retry). The group stays
// allocated while we chase it: it is freed a grace period after it was emptied.
static struct pgrp_part *lock_own(struct proc *p)
{
    for (;;) {
        epoch_enter();
        struct pgrp *g = READ_ONCE(p->pgrp);
        struct pgrp_part *pt = part_of(g, READ_ONCE(p->pgrp_part));
        spin_lock(&pt->lock);
        epoch_exit();
        if (READ_ONCE(p->pgrp) == g && part_of(g, READ_ONCE(p->pgrp_part)) == pt)
            return pt;
        spin_unlock(&pt->lock);
    }
}

// p joins partition i of g (locked).
static void add_member(struct pgrp *g, int i, struct proc *p)
{
    list_push_back(&g->part[i]->members, &p->pgrp_link);
    g->part[i]->n++;
    WRITE_ONCE(p->pgrp, g);
    WRITE_ONCE(p->pgrp_part, i);
    WRITE_ONCE(p->pgid, g->pgid);
    WRITE_ONCE(p->sid, g->sid);
}

// Drop an empty group from the hash table and free it, unless somebody joined
// it in the meantime (setpgid found it through the table, or a fork by a member).
// Two callers may both have seen it empty (its last member reaped, and a setpgid
// that found it while the process it was to move was reaped): the first takes
// it out, the second finds it unhashed. The caller is in an epoch read section
// begun while what it locked kept g allocated, so g is still there to look at.
static void maybe_free(struct pgrp *g)
{
    struct bucket *b = bucket_of(g->pgid);
    spin_lock(&b->lock);
    lock_all(g);
    bool empty = members(g) == 0 && !g->unhashed;
    if (empty) {
        g->unhashed = true;
        struct pgrp **pp = &b->head;
        while (*pp != g)
            pp = &(*pp)->hash_next;
        *pp = g->hash_next;
    }
    unlock_all(g);
    spin_unlock(&b->lock);
    if (empty)
        epoch_defer(&g->free_cb, free_cb);
}

// Move p from partition `from` (locked) into partition i of g (locked); true if
// `from` is left empty.
static bool move_locked(struct proc *p, struct pgrp_part *from, struct pgrp *g, int i)
{
    list_remove(&p->pgrp_link);
    from->n--;
    add_member(g, i, p);
    return from->n == 0;
}

int pgrp_create(struct proc *p)
{
    struct pgrp *g = pgrp_new(p->pid, p->pid);
    if (!g)
        return -ENOMEM;
    struct bucket *b = bucket_of(p->pid);
    spin_lock(&b->lock);
    g->hash_next = b->head;
    b->head = g;
    add_member(g, g->home, p); // nobody else can see g's partitions yet
    spin_unlock(&b->lock);
    return 0;
}

// The child joins this CPU's partition of the parent's group. Locking that
// partition keeps the group from being freed (the parent in it keeps it from
// being empty; a partition made after the group's emptiness was decided is
// made after the parent's move out of it, which the check then sees); if the
// parent moved meanwhile, try its new group.
void pgrp_join_parent(struct proc *child, struct proc *parent)
{
    for (;;) {
        epoch_enter();
        struct pgrp *g = READ_ONCE(parent->pgrp);
        int i = part_here(g);
        struct pgrp_part *pt = part_of(g, i);
        spin_lock(&pt->lock);
        epoch_exit();
        if (READ_ONCE(parent->pgrp) == g) {
            add_member(g, i, child);
            spin_unlock(&pt->lock);
            return;
        }
        spin_unlock(&pt->lock);
    }
}

void pgrp_leave(struct proc *p)
{
    if (!p->pgrp)
        return;
    struct pgrp_part *pt = lock_own(p);
    struct pgrp *g = p->pgrp;
    list_remove(&p->pgrp_link);
    bool empty = --pt->n == 0;
    p->pgrp = NULL;
    // Reaped by a member of the group (usually its parent): the group lives on,
    // and nobody else's partition need be looked at. Read under our partition's
    // lock: a concurrent move of the reaper out of g wrote its pgrp before its
    // maybe_free locked this partition, so we see the move or it sees p gone.
    struct proc *me = proc_current();
    bool last = empty && !(me && me != p && READ_ONCE(me->pgrp) == g);
    epoch_enter(); // (see maybe_free)
    spin_unlock(&pt->lock);
    if (last)
        maybe_free(g);
    epoch_exit();
}

// Partition i of group g, and j of h, locked in the order above.
static void lock_two(struct pgrp *g, int i, struct pgrp *h, int j)
{
    struct pgrp_part *a = part_of(g, i), *b = part_of(h, j);
    if (a == b) {
        spin_lock(&a->lock);
    } else if (g < h || (g == h && i < j)) {
        spin_lock(&a->lock);
        spin_lock(&b->lock);
    } else {
        spin_lock(&b->lock);
        spin_lock(&a->lock);
    }
}

static void unlock_two(struct pgrp_part *a, struct pgrp_part *b)
{
    spin_unlock(&a->lock);
    if (a != b)
        spin_unlock(&b->lock);
}

// Lock p's partition and partition i of g; NULL if p has been reaped meanwhile
// (then nothing is locked).
static struct pgrp_part *lock_with(struct proc *p, struct pgrp *g, int i)
{
    for (;;) {
        epoch_enter();
        struct pgrp *old = READ_ONCE(p->pgrp);
        if (!old) {
            epoch_exit();
            return NULL;
        }
        int at = READ_ONCE(p->pgrp_part);
        struct pgrp_part *pt = part_of(old, at);
        lock_two(old, at, g, i);
        epoch_exit();
        if (READ_ONCE(p->pgrp) == old && READ_ONCE(p->pgrp_part) == at)
            return pt;
        unlock_two(pt, part_of(g, i));
    }
}

int pgrp_setsid(struct proc *p)
{
    struct bucket *b = bucket_of(p->pid);
    struct pgrp *g = pgrp_new(p->pid, p->pid);
    if (!g)
        return -ENOMEM;
    spin_lock(&b->lock);
    if (find(b, p->pid)) { // already a group leader (or its old group lives on)
        spin_unlock(&b->lock);
        pgrp_free(g);
        return -EPERM;
    }
    g->hash_next = b->head;
    b->head = g;
    int i = g->home;
    // Never NULL: p is the caller or its unborn child.
    struct pgrp_part *from = lock_with(p, g, i);
    struct pgrp *old = p->pgrp;
    bool empty = move_locked(p, from, g, i);
    epoch_enter(); // (see maybe_free)
    unlock_two(from, part_of(g, i));
    spin_unlock(&b->lock);
    if (empty)
        maybe_free(old);
    epoch_exit();
    return p->pid;
}

// Move p into group pgid of session sid, creating it if pgid == p->pid.
int pgrp_move(struct proc *p, int pgid, int sid)
{
    struct bucket *b = bucket_of(pgid);
    struct pgrp *fresh = NULL;
    if (pgid == p->pid && !(fresh = pgrp_new(pgid, sid)))
        return -ENOMEM;
    spin_lock(&b->lock);
    struct pgrp *g = find(b, pgid);
    int err = 0;
    if (g && g->sid != sid)
        err = -EPERM; // a group of another session
    else if (!g && !fresh)
        err = -EPERM; // no such group in the session
    if (err) {
        spin_unlock(&b->lock);
        pgrp_free(fresh);
        return err;
    }
    if (!g) {
        g = fresh;
        fresh = NULL;
        g->hash_next = b->head;
        b->head = g;
    }
    int i = part_here(g);
    struct pgrp_part *from = lock_with(p, g, i);
    if (!from) { // reaped meanwhile; g may be the new empty group, or an old one emptied
        epoch_enter(); // (see maybe_free)
        spin_unlock(&b->lock);
        maybe_free(g);
        epoch_exit();
        pgrp_free(fresh);
        return -ESRCH;
    }
    struct pgrp *old = p->pgrp;
    bool empty = old != g && move_locked(p, from, g, i);
    epoch_enter(); // (see maybe_free)
    unlock_two(from, part_of(g, i));
    spin_unlock(&b->lock);
    if (empty)
        maybe_free(old);
    epoch_exit();
    pgrp_free(fresh);
    return 0;
}

int pgrp_pids(int pgid, int **pids)
{
    struct bucket *b = bucket_of(pgid);
    int cap = 0;
    *pids = NULL;
    for (;;) {
        spin_lock(&b->lock);
        struct pgrp *g = find(b, pgid);
        if (!g) {
            spin_unlock(&b->lock);
            kfree(*pids);
            *pids = NULL;
            return -ESRCH;
        }
        lock_all(g);
        int n = members(g);
        if (n <= cap) {
            int k = 0;
            for_each_cpu(c, &g->made)
                list_for_each(it, &g->part[c]->members)
                    (*pids)[k++] = list_entry(it, struct proc, pgrp_link)->pid;
        }
        unlock_all(g);
        spin_unlock(&b->lock);
        if (n <= cap)
            return n;
        kfree(*pids);
        cap = n + 4;
        if (!(*pids = kmalloc(cap * sizeof(int))))
            return -ENOMEM;
    }
}

// ---- orphaned groups -------------------------------------------------------------
// POSIX: a group is orphaned when no member has a parent in the group's session
// but outside the group: nobody is left whose shell could continue its stopped
// jobs. Nothing keeps count (a count would be written by every fork and exit in
// the group); the members are walked where it matters: a stop signal's default
// action, a background terminal access, and the exit of a process that was such
// a parent, or such a member (proc.c).

// All of g's partitions locked, inside an epoch section (members' parents stay
// allocated). `going`, if not NULL, counts as gone: neither member nor parent.
static bool orphaned_locked(struct pgrp *g, const struct proc *going, bool *stopped)
{
    bool orphan = true;
    *stopped = false;
    for_each_cpu(c, &g->made)
        list_for_each(it, &g->part[c]->members) {
            struct proc *m = list_entry(it, struct proc, pgrp_link);
            // A member whose last thread has left is exiting: it no longer
            // counts, although it is a zombie only once its children are
            // abandoned (which is when they see their parent gone).
            if (m == going || READ_ONCE(m->state) == P_ZOMBIE || READ_ONCE(m->nthreads) == 0)
                continue;
            *stopped |= READ_ONCE(m->stopped);
            struct proc *par = READ_ONCE(m->parent);
            if (par && par != going && READ_ONCE(par->pgid) != g->pgid &&
                READ_ONCE(par->sid) == g->sid)
                orphan = false;
        }
    return orphan;
}

bool pgrp_orphaned(int pgid, const struct proc *going, bool *stopped)
{
    bool dummy, orphan = false;
    stopped = stopped ? stopped : &dummy;
    *stopped = false;
    struct bucket *b = bucket_of(pgid);
    epoch_enter();
    spin_lock(&b->lock);
    struct pgrp *g = find(b, pgid);
    if (g) {
        lock_all(g);
        orphan = orphaned_locked(g, going, stopped);
        unlock_all(g);
    }
    spin_unlock(&b->lock);
    epoch_exit();
    return orphan;
}

int pgrp_session(int pgid)
{
    struct bucket *b = bucket_of(pgid);
    spin_lock(&b->lock);
    struct pgrp *g = find(b, pgid);
    int sid = g ? g->sid : -ESRCH;
    spin_unlock(&b->lock);
    return sid;
}

// ---- system calls -------------------------------------------------------------

long sys_getpgrp(void) { return READ_ONCE(proc_current()->pgid); }

// p (pid 0: the caller) inside an epoch section, or NULL.
static struct proc *lookup(int pid)
{
    struct proc *self = proc_current();
    if (pid == 0 || pid == self->pid)
        return self;
    struct proc *p = pid_lookup(pid);
    return p && p->pgrp ? p : NULL;
}

long sys_getpgid(int pid)
{
    if (pid < 0)
        return -ESRCH;
    epoch_enter();
    struct proc *p = lookup(pid);
    long r = p ? READ_ONCE(p->pgid) : -ESRCH;
    epoch_exit();
    return r;
}

long sys_getsid(int pid)
{
    if (pid < 0)
        return -ESRCH;
    epoch_enter();
    struct proc *p = lookup(pid);
    long r = p ? READ_ONCE(p->sid) : -ESRCH;
    epoch_exit();
    return r;
}

long sys_setsid(void) { return pgrp_setsid(proc_current()); }

// setpgid(pid, pgid), Linux's rules: pid is the caller or a child of it (else
// ESRCH) that has not exec'd (EACCES) and is in the caller's session (EPERM);
// it is no session leader (EPERM); pgid is its own pid or an existing group of
// the session (EPERM).
long sys_setpgid(int pid, int pgid)
{
    struct proc *self = proc_current();
    if (pid < 0 || pgid < 0)
        return -EINVAL;
    epoch_enter();
    struct proc *p = pid == 0 || pid == self->pid ? self : pid_lookup(pid);
    long err = 0;
    if (!p || (p != self && READ_ONCE(p->parent) != self) || !p->pgrp)
        err = -ESRCH;
    else if (p != self && READ_ONCE(p->sid) != READ_ONCE(self->sid))
        err = -EPERM;
    else if (p != self && READ_ONCE(p->did_exec))
        err = -EACCES;
    else if (READ_ONCE(p->sid) == p->pid)
        err = -EPERM;
    if (!err)
        err = pgrp_move(p, pgid ? pgid : p->pid, READ_ONCE(self->sid));
    epoch_exit();
    return err;
}
