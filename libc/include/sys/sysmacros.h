// Device numbers: Linux's encoding of major and minor in a dev_t.
#pragma once
#include <sys/types.h>

#define major(dev) ((unsigned)((((dev) >> 32) & 0xfffff000) | (((dev) >> 8) & 0xfff)))
#define minor(dev) ((unsigned)((((dev) >> 12) & 0xffffff00) | ((dev) & 0xff)))
#define makedev(ma, mi)                                                                   \
    ((dev_t)((((dev_t)(ma) & 0xfffff000) << 32) | (((dev_t)(ma) & 0xfff) << 8) |         \
             (((dev_t)(mi) & 0xffffff00) << 12) | ((dev_t)(mi) & 0xff)))
