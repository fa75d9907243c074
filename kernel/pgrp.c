// Process groups and sessions: setsid, setpgid, getpgid, getpgrp, getsid, and
// the member lists kill(-pgid) walks.
//
// Commute: everything that does not name a group: kill to one pid, wait for a
// child, fork and exit of processes in different groups. A process keeps its
// group and session ids in its own struct proc (read lock-free by getpgid, wait
// and the tty); a group is a struct pgrp with its own lock and member list,
// found by pgid in a hash table with a lock per bucket (no global lock). fork
// joins the parent's group under that group's lock only; a group is unhashed
// and freed when its last member is reaped. Lock order: bucket, then group (two
// groups: by address). No proc lock is held with either, so senders walk a
// snapshot of the members' pids (pgrp_pids) and signal them one by one.
#include "mm.h"
#include "proc.h"
#include "spinlock.h"
#include "uapi/errno.h"

#define PGRP_BUCKETS 256

struct pgrp {
    int pgid, sid;
    struct spinlock lock;  // members, nmembers
    struct list members;   // struct proc.pgrp_link
    int nmembers;
    struct pgrp *hash_next; // under the bucket's lock
};

static struct bucket {
    struct spinlock lock;
    struct pgrp *head;
} __cacheline_aligned buckets[PGRP_BUCKETS];

static struct bucket *bucket_of(int pgid) { return &buckets[(unsigned)pgid % PGRP_BUCKETS]; }

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
    spin_init(&g->lock, "pgrp");
    list_init(&g->members);
    return g;
}

// Lock p's current group (it may be moved meanwhile: retry).
static struct pgrp *lock_own(struct proc *p)
{
    for (;;) {
        struct pgrp *g = READ_ONCE(p->pgrp);
        spin_lock(&g->lock);
        if (READ_ONCE(p->pgrp) == g)
            return g;
        spin_unlock(&g->lock);
    }
}

static void add_member(struct pgrp *g, struct proc *p)
{
    list_push_back(&g->members, &p->pgrp_link);
    g->nmembers++;
    WRITE_ONCE(p->pgrp, g);
    WRITE_ONCE(p->pgid, g->pgid);
    WRITE_ONCE(p->sid, g->sid);
}

// Drop an empty group from the hash table and free it, unless somebody joined
// it in the meantime (setpgid found it through the table).
static void maybe_free(struct pgrp *g)
{
    struct bucket *b = bucket_of(g->pgid);
    spin_lock(&b->lock);
    spin_lock(&g->lock);
    bool empty = g->nmembers == 0;
    if (empty) {
        struct pgrp **pp = &b->head;
        while (*pp != g)
            pp = &(*pp)->hash_next;
        *pp = g->hash_next;
    }
    spin_unlock(&g->lock);
    spin_unlock(&b->lock);
    if (empty)
        kfree(g);
}

// Move p from its group into g (locked by the caller, as is p's group `old`).
static bool move_locked(struct proc *p, struct pgrp *old, struct pgrp *g)
{
    list_remove(&p->pgrp_link);
    old->nmembers--;
    add_member(g, p);
    return old->nmembers == 0;
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
    add_member(g, p);
    spin_unlock(&b->lock);
    return 0;
}

void pgrp_join_parent(struct proc *child, struct proc *parent)
{
    struct pgrp *g = lock_own(parent); // parent is alive, so its group too
    add_member(g, child);
    spin_unlock(&g->lock);
}

void pgrp_leave(struct proc *p)
{
    if (!p->pgrp)
        return;
    struct pgrp *g = lock_own(p);
    list_remove(&p->pgrp_link);
    bool empty = --g->nmembers == 0;
    p->pgrp = NULL;
    spin_unlock(&g->lock);
    if (empty)
        maybe_free(g);
}

static void lock_two(struct pgrp *a, struct pgrp *b)
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

static void unlock_two(struct pgrp *a, struct pgrp *b)
{
    spin_unlock(&a->lock);
    if (a != b)
        spin_unlock(&b->lock);
}

// Lock p's group and g; NULL if p has been reaped meanwhile (then only g is
// nothing is locked).
static struct pgrp *lock_with(struct proc *p, struct pgrp *g)
{
    for (;;) {
        struct pgrp *old = READ_ONCE(p->pgrp);
        if (!old)
            return NULL;
        lock_two(old, g);
        if (READ_ONCE(p->pgrp) == old)
            return old;
        unlock_two(old, g);
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
    struct pgrp *old = lock_with(p, g); // never NULL: p is the caller or its unborn child
    bool empty = move_locked(p, old, g);
    unlock_two(old, g);
    spin_unlock(&b->lock);
    if (empty)
        maybe_free(old);
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
    struct pgrp *old = lock_with(p, g);
    if (!old) { // reaped meanwhile; g may be the new empty group
        bool unused = fresh == NULL && g->nmembers == 0;
        spin_unlock(&b->lock);
        kfree(fresh);
        if (unused)
            maybe_free(g);
        return -ESRCH;
    }
    bool empty = old != g && move_locked(p, old, g);
    unlock_two(old, g);
    spin_unlock(&b->lock);
    kfree(fresh);
    if (empty)
        maybe_free(old);
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
        spin_lock(&g->lock);
        int n = g->nmembers;
        if (n <= cap) {
            int i = 0;
            list_for_each(it, &g->members)
                (*pids)[i++] = list_entry(it, struct proc, pgrp_link)->pid;
        }
        spin_unlock(&g->lock);
        spin_unlock(&b->lock);
        if (n <= cap)
            return n;
        kfree(*pids);
        cap = n + 4;
        if (!(*pids = kmalloc(cap * sizeof(int))))
            return -ENOMEM;
    }
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
