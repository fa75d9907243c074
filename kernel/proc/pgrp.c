// Process groups and sessions: setsid, setpgid, getpgid, getpgrp, getsid, and
// the member lists kill(-pgid) walks.
//
// Commute: everything that does not name a group: kill to one pid, wait for a
// child, fork and exit of processes in different groups, and fork, posix_spawn
// and exit in one group on different CPUs. A process keeps its group and
// session ids in its own struct proc (read lock-free by getpgid, wait and the
// tty); a group is a struct pgrp found by pgid in a hash table with a lock per
// bucket (no global lock). Its members are kept in PGRP_PARTS partitions, each
// with its own lock, list and count on its own cache line: a new process joins
// the partition of the CPU it is created on, so two threads of one process that
// fork or spawn on different CPUs add their children to different lines. Only
// what concerns the whole group (setsid/setpgid moves, emptiness, kill(-pgid)'s
// snapshot) locks every partition. A group is unhashed when its last member is
// reaped and freed a grace period later, so lock_own can chase p->pgrp without
// a lock. Lock order: bucket, then partition locks by address. Neither is ever
// held while a proc lock is taken (reaping takes them inside one), so senders
// walk a snapshot of the members' pids (pgrp_pids) and signal them one by one.
#include "mm/mm.h"
#include "proc/proc.h"
#include "sync/epoch.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "uapi/errno.h"

#define PGRP_BUCKETS 256
#define PGRP_PARTS 8

struct pgrp_part {
    struct spinlock lock;
    struct list members;   // struct proc.pgrp_link
    int n;
} __cacheline_aligned;

struct pgrp {
    int pgid, sid;
    struct pgrp *hash_next; // under the bucket's lock
    bool unhashed;          // under the bucket's lock: empty for good, freed soon
    struct epoch_cb free_cb;
    struct pgrp_part part[PGRP_PARTS];
};

static struct bucket {
    struct spinlock lock;
    struct pgrp *head;
} __cacheline_aligned buckets[PGRP_BUCKETS];

static struct bucket *bucket_of(int pgid) { return &buckets[(unsigned)pgid % PGRP_BUCKETS]; }

// The partition a process created (or moved) here joins: only a placement
// choice, so no need to stay on this CPU.
static int my_part(void) { return cpu_id() % PGRP_PARTS; }

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

static struct pgrp *pgrp_new(int pgid, int sid)
{
    struct pgrp *g = kzalloc(sizeof *g);
    if (!g)
        return NULL;
    g->pgid = pgid;
    g->sid = sid;
    for (int i = 0; i < PGRP_PARTS; i++) {
        spin_init(&g->part[i].lock, "pgrp");
        list_init(&g->part[i].members);
    }
    return g;
}

static void free_cb(struct epoch_cb *cb) { kfree(container_of(cb, struct pgrp, free_cb)); }

static void lock_all(struct pgrp *g)
{
    for (int i = 0; i < PGRP_PARTS; i++)
        spin_lock(&g->part[i].lock);
}

static void unlock_all(struct pgrp *g)
{
    for (int i = 0; i < PGRP_PARTS; i++)
        spin_unlock(&g->part[i].lock);
}

static int members(struct pgrp *g) // all partitions locked
{
    int n = 0;
    for (int i = 0; i < PGRP_PARTS; i++)
        n += g->part[i].n;
    return n;
}

// Lock the partition p is on (p may be moved meanwhile: retry). The group stays
// allocated while we chase it: it is freed a grace period after it was emptied.
static struct pgrp_part *lock_own(struct proc *p)
{
    for (;;) {
        epoch_enter();
        struct pgrp *g = READ_ONCE(p->pgrp);
        struct pgrp_part *pt = &g->part[READ_ONCE(p->pgrp_part)];
        spin_lock(&pt->lock);
        epoch_exit();
        if (READ_ONCE(p->pgrp) == g && &g->part[READ_ONCE(p->pgrp_part)] == pt)
            return pt;
        spin_unlock(&pt->lock);
    }
}

// p joins partition i of g (locked).
static void add_member(struct pgrp *g, int i, struct proc *p)
{
    list_push_back(&g->part[i].members, &p->pgrp_link);
    g->part[i].n++;
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
    add_member(g, my_part(), p); // nobody else can see g's partitions yet
    spin_unlock(&b->lock);
    return 0;
}

// The child joins this CPU's partition of the parent's group. Locking that
// partition keeps the group from being freed (the parent in it keeps it from
// being empty); if the parent moved meanwhile, try its new group.
void pgrp_join_parent(struct proc *child, struct proc *parent)
{
    int i = my_part();
    for (;;) {
        epoch_enter();
        struct pgrp *g = READ_ONCE(parent->pgrp);
        spin_lock(&g->part[i].lock);
        epoch_exit();
        if (READ_ONCE(parent->pgrp) == g) {
            add_member(g, i, child);
            spin_unlock(&g->part[i].lock);
            return;
        }
        spin_unlock(&g->part[i].lock);
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

static void lock_two(struct pgrp_part *a, struct pgrp_part *b)
{
    if (a == b) {
        spin_lock(&a->lock);
    } else if (a < b) {
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

// Lock p's partition and `to`; NULL if p has been reaped meanwhile (then
// nothing is locked).
static struct pgrp_part *lock_with(struct proc *p, struct pgrp_part *to)
{
    for (;;) {
        epoch_enter();
        struct pgrp *old = READ_ONCE(p->pgrp);
        if (!old) {
            epoch_exit();
            return NULL;
        }
        struct pgrp_part *pt = &old->part[READ_ONCE(p->pgrp_part)];
        lock_two(pt, to);
        epoch_exit();
        if (READ_ONCE(p->pgrp) == old && &old->part[READ_ONCE(p->pgrp_part)] == pt)
            return pt;
        unlock_two(pt, to);
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
        kfree(g);
        return -EPERM;
    }
    g->hash_next = b->head;
    b->head = g;
    int i = my_part();
    // Never NULL: p is the caller or its unborn child.
    struct pgrp_part *from = lock_with(p, &g->part[i]);
    struct pgrp *old = p->pgrp;
    bool empty = move_locked(p, from, g, i);
    epoch_enter(); // (see maybe_free)
    unlock_two(from, &g->part[i]);
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
        kfree(fresh);
        return err;
    }
    if (!g) {
        g = fresh;
        fresh = NULL;
        g->hash_next = b->head;
        b->head = g;
    }
    int i = my_part();
    struct pgrp_part *from = lock_with(p, &g->part[i]);
    if (!from) { // reaped meanwhile; g may be the new empty group, or an old one emptied
        epoch_enter(); // (see maybe_free)
        spin_unlock(&b->lock);
        maybe_free(g);
        epoch_exit();
        kfree(fresh);
        return -ESRCH;
    }
    struct pgrp *old = p->pgrp;
    bool empty = old != g && move_locked(p, from, g, i);
    epoch_enter(); // (see maybe_free)
    unlock_two(from, &g->part[i]);
    spin_unlock(&b->lock);
    if (empty)
        maybe_free(old);
    epoch_exit();
    kfree(fresh);
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
            for (int i = 0; i < PGRP_PARTS; i++)
                list_for_each(it, &g->part[i].members)
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
    for (int i = 0; i < PGRP_PARTS; i++)
        list_for_each(it, &g->part[i].members) {
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
