// Interval timers of a process: ITIMER_REAL (itimer.c).
#pragma once
#include "kernel.h"
#include "uapi/abi.h"

struct proc;
struct kitimerval {
    struct timeval interval, value; // Linux's struct itimerval
};

int itimer_get(struct proc *p, int which, struct kitimerval *out);
// EINVAL for another timer or a bad time; ENOMEM; *old gets what it was.
int itimer_set(struct proc *p, int which, const struct kitimerval *v, struct kitimerval *old);
void itimer_exit(struct proc *p); // the last thread has left: disarm and free
