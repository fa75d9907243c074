// File data as a radix array of pages (filedata.c): the interface. Internal to fs/.
#pragma once
#include "kernel.h"

struct inode;

// The page tree: root word = node address | height. Height 0: the root is the
// file's only page (page 0); height h >= 1: a 512-slot node whose slots cover
// 512^(h-1) pages each. 0 = no pages.
struct filemap {
    uintptr_t root;
};

int64_t filedata_read(struct inode *ip, void *buf, size_t n, uint64_t off);
int64_t filedata_write(struct inode *ip, const void *buf, size_t n, uint64_t off);
int64_t filedata_append(struct inode *ip, const void *buf, size_t n);
int filedata_truncate(struct inode *ip, uint64_t size);
uint64_t filedata_size(struct inode *ip);
uint64_t filedata_pages(struct inode *ip);  // pages allocated (for st_blocks)
void filedata_free(struct inode *ip);       // all pages; nobody else can see ip
