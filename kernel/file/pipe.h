// Pipes (pipe.c).
#pragma once
#include "kernel.h"

struct file;

#define PIPE_PAGES 16 // capacity 64 KiB, as Linux's default

// A new pipe: *rd is its read end, *wr its write end, each a description with
// one reference; flags may hold O_NONBLOCK (both ends). 0 or -ENOMEM.
int pipe_create(int flags, struct file **rd, struct file **wr);
