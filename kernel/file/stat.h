// Copying ScaleFS attributes out as Linux's struct stat and struct statx
// (sys_path.c). Device number of the one file system: st_dev.
#pragma once
#include "kernel.h"

struct fs_stat;

#define FS_DEV 0x20 // what st_dev reports for every file (major 0, minor 32)

long stat_copyout(const struct fs_stat *st, uint64_t ubuf);
long statx_copyout(const struct fs_stat *st, uint64_t ubuf);
