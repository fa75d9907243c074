// The pairwise commutativity suites as C data: one struct per test, generated
// from tests/commuter/data/*.json (the page suite) and data-bytes/*.json (the
// byte suite) by tools/commuter/gen_c.py. Field meanings follow the model
// (tools/commuter/model.py, bounds in tools/commuter/ops.py). Offsets, lengths,
// counts and sizes are in the suite's units (ct_suite.unit bytes), and data
// values are a unit's pattern (pattern.h).
#pragma once
#include <stdint.h>

enum ct_op {
    OP_OPEN, OP_LINK, OP_UNLINK, OP_RENAME, OP_STAT, OP_FSTAT, OP_LSEEK, OP_CLOSE,
    OP_PIPE, OP_READ, OP_WRITE, OP_PREAD, OP_PWRITE, OP_MMAP, OP_MUNMAP,
    OP_MPROTECT, OP_MEMREAD, OP_MEMWRITE, OP_SPAWN, OP_UNMAPASYNC, OP_COUNT
};

enum ct_fdkind { FD_FILE = 1, FD_PIPE_R = 2, FD_PIPE_W = 3 };

// What a call is expected to return.
enum ct_rkind {
    R_ERR = 1,   // -1 with errno `err`
    R_RET,       // `ret`
    R_ANYFD,     // some descriptor not open at setup (O_ANYFD)
    R_DATA,      // `ret` units, whose patterns are data[]
    R_STAT,      // a regular file: inode `ino` (0..1 initial, 2+c created by call c), nlink, size
    R_FIFO,      // fstat of a pipe
    R_PIPE,      // 0 and descriptors fds[0], fds[1]
    R_ADDR,      // mmap: the test page `ret`, or any other address when ret < 0
    R_VAL,       // a memory read that returned the unit of value `ret`
    R_SIG,       // a memory access that faulted with signal `ret`, si_code `code`
    R_STATUS,    // posix_spawn: the child ended with `ret` (exit status 0..255, or
                 // 256 + the signal that killed it)
};

// posix_spawn's arguments (tools/commuter/ops.py): args[0] the program,
// args[1] the file action, then name, cfd, src, the value to write.
enum { SPAWN_EXEC, SPAWN_READ, SPAWN_WRITE };
enum { FA_NONE, FA_OPEN, FA_CREAT, FA_CLOSE, FA_DUP2 };

struct ct_fd { int8_t fd, kind, ino, mode, off, pipe; };
struct ct_pipe { int8_t pipe, len; uint8_t data[6]; };
struct ct_page { int8_t page, prot, anon, ino, fpage, fw; uint8_t data[4]; };
struct ct_proc {
    int8_t proc, nfds, npipes, npages;
    struct ct_fd fds[3];
    struct ct_pipe pipes[1];
    struct ct_page pages[2];
};
struct ct_inode { int8_t ino, len; uint8_t data[8]; };
struct ct_name { int8_t name, ino; };
struct ct_call { int8_t op, proc; int16_t args[6]; };
struct ct_result {
    int8_t kind; int16_t ret, err; uint8_t data[2]; int8_t ino, nlink, size; int8_t fds[2];
    int8_t code;
};

struct ct_test {
    const char *name;
    uint16_t pair;              // index into ct_pairs
    uint8_t commute;            // run in both orders; else one order (A then B)
    uint8_t linux_skip;         // relies on an extension Linux lacks (O_ANYFD)
    int8_t ninodes, nnames, nprocs;
    struct ct_inode inodes[2];
    struct ct_name names[3];
    struct ct_proc procs[2];
    struct ct_call calls[2];
    struct ct_result expect[2];
};

struct ct_suite {
    const char *name;
    unsigned unit;              // bytes of one data value: 4096 (page) or 1 (bytes)
    unsigned pageb;             // units of a test page the model holds
    const struct ct_test *tests;
    unsigned ntests;
    const char *const *pairs;   // "a/b", by ct_test.pair
    unsigned npairs;
    const char *const *opnames; // by enum ct_op
};

extern const struct ct_suite ct_suite_page, ct_suite_bytes;
