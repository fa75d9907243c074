// Readiness of files for poll and select (poll.c): the objects a file stands for
// (a pipe, the console) keep a pollhead, and wake it when what they would report
// may have changed.
#pragma once
#include "kernel.h"
#include "lib/list.h"
#include "sync/spinlock.h"

struct poller;

struct pollhead {
    struct spinlock lock;
    struct list entries; // [l,r] of the pollers waiting on this object (docs/conventions.md)
};

void pollhead_init(struct pollhead *h, const char *name);
// From a file's poll operation: wake pl when h is woken. pl may be NULL (a
// rescan, already registered).
void poll_register(struct poller *pl, struct pollhead *h);
// The same for a pollhead of an object the file does not keep alive (a unix
// socket's peer): the caller passes a reference on it, dropped with drop(obj)
// once the poller has left h (or at once if pl takes no entry).
void poll_register_held(struct poller *pl, struct pollhead *h, void (*drop)(void *), void *obj);
// Readiness may have changed: wake the pollers registered on h. Cheap when there
// are none (one load), so the hot paths of pipes may call it on every change.
void pollhead_wake(struct pollhead *h);
