// Helpers for the ScaleFS tests (tests/kernel/fs_*_test.c and others that need
// files), implemented in fs_helpers.c.
#pragma once
#include "fs.h"

// Run fn(i, arg) for i in [0, n) on n threads, thread i pinned to CPU
// i % ncpu_online, and wait for all of them. False if threads could not be made.
bool fst_run(int n, void (*fn)(int i, void *arg), void *arg);
// Create and join n threads a few times, so that the kernel stacks the CPUs
// keep cached (proc/kstack.c) are made before a test counts free pages.
void fst_warm_threads(int n);
// Let every deferred free happen (epoch callbacks, refcache releases and what
// they trigger), then empty the allocators' per-CPU caches.
void fst_quiesce(void);
// Free pages after fst_quiesce.
size_t fst_free_pages(void);
// Did the free page count come back to within `slack` of `before`? Says both if not.
bool fst_pages_back(size_t before, size_t after, size_t slack);
// A new empty directory /name (any old one is removed first); returned referenced.
struct inode *fst_scratch(const char *name);
// Remove everything below dir, then dir itself from its parent (path from root).
int fst_rm_rf(const char *path);
int64_t fst_nlink(struct inode *ip);
// Names in dir, counted by readdir (excluding "." and "..").
long fst_count_entries(struct inode *dir);
// Is the test named `name` given in full in the test= selection (not just by prefix)?
bool fst_selected_explicitly(const char *name);
