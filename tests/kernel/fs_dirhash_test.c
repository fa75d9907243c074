// ScaleFS directory hash tables (fs/dirhash.c): a table grows and shrinks with
// its directory, and a small directory spreads its names over buckets of their
// own.
#include "fstest.h"
#include "inode.h"
#include "ktest/ktest.h"

// The table grows as entries arrive and shrinks back as they go; lookups find
// every name at every size.
KTEST(fs_dirhash_grow_and_shrink)
{
    struct inode *d = fst_scratch("t_grow");
    KREQUIRE(d);
    char name[16];
    uint32_t o0 = dirhash_order(&d->dir);
    int lost = 0;
    for (int k = 0; k < 20000; k++) {
        ksnprintf(name, sizeof name, "g%d", k);
        KREQUIRE(fs_create(d, name, 0644, FS_EXCL, NULL) == 0);
        if (k % 997 == 0) // spot checks while it grows
            for (int j = 0; j <= k; j += 101) {
                struct inode *ip;
                ksnprintf(name, sizeof name, "g%d", j);
                if (fs_lookup(d, name, 0, &ip))
                    lost++;
                else
                    fs_iput(ip);
            }
    }
    uint32_t o1 = dirhash_order(&d->dir);
    KCHECK_EQ(lost, 0);
    KCHECK_EQ(fst_count_entries(d), 20000);
    KCHECK(o1 >= 12); // 20000 entries at <= 2 per bucket on average (sampled): >= 4096 buckets
    for (int k = 0; k < 20000; k++) {
        ksnprintf(name, sizeof name, "g%d", k);
        KCHECK_EQ(fs_unlink(d, name), 0);
    }
    uint32_t o2 = dirhash_order(&d->dir);
    kprintf("# table order %u -> %u (20000 entries) -> %u (empty), %zu bytes\n", o0, o1, o2,
            dirhash_table_bytes(&d->dir));
    KCHECK(o0 < 6);
    KCHECK_EQ(o2, 6); // back to the smallest spread table (dirhash.c), no further
    KCHECK_EQ(fst_count_entries(d), 0);
    fs_iput(d);
    KCHECK_EQ(fs_rmdir(NULL, "/t_grow"), 0);
}

// A small directory gives each name a bucket of its own (so operations on
// different names share no bucket line) until it has 64 buckets, and removing
// its names does not shrink it under other operations.
KTEST(fs_dirhash_small_spread)
{
    struct inode *d = fst_scratch("t_spread");
    KREQUIRE(d);
    enum { N = 8 };
    char name[N][16];
    uint32_t hash[N];
    KCHECK_EQ(dirhash_order(&d->dir), 1);
    int shared = 0;
    uint32_t o = 0;
    for (int k = 0; k < N; k++) {
        ksnprintf(name[k], sizeof name[k], "f%d", k);
        hash[k] = dirhash_hash(&d->dir, name[k], strlen(name[k]));
        KREQUIRE(fs_create(d, name[k], 0644, FS_EXCL, NULL) == 0);
        o = dirhash_order(&d->dir);
        for (int i = 0; i <= k; i++)
            for (int j = 0; j < i; j++)
                shared += o < 6 && hash[i] >> (32 - o) == hash[j] >> (32 - o);
        if (k == 0)
            KCHECK_EQ(o, 1); // one name: still the 256-byte table
    }
    kprintf("# %d names: table order %u\n", N, o);
    KCHECK_EQ(shared, 0);
    for (int k = 0; k < N; k++)
        KCHECK_EQ(fs_unlink(d, name[k]), 0);
    KCHECK_EQ(dirhash_order(&d->dir), o);
    fs_iput(d);
    KCHECK_EQ(fs_rmdir(NULL, "/t_spread"), 0);
}
