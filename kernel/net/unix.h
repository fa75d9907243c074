// AF_UNIX sockets' own structures, shared by unix.c (the sockets) and
// unix_gc.c (the collector of files in flight that only reference each other).
#pragma once
#include "file/poll.h"
#include "lib/list.h"
#include "net/socket.h"
#include "sync/sleeplock.h"
#include "uapi/abi.h"

#define UNIX_QUEUE (256 * 1024) // bytes a socket's receive queue holds
#define UNIX_CHUNK (64 * 1024)  // the largest message a stream send makes
#define UNIX_PATH (UNIX_PATH_MAX + 1)
#define RIGHTS_MAX 253          // fds one message carries (Linux's SCM_MAX_FD)

// A bound name: the path as given (for getsockname), or an abstract name:
// the bytes after sun_path's leading NUL (any bytes, NULs too).
struct uname {
    char path[UNIX_PATH];
    int len;                  // strlen(path), or the abstract name's bytes
    bool abstract;
};

// Files sent with SCM_RIGHTS, each with the kind of reference (fd_dup_ref).
struct rights {
    struct rights *next; // on the reap list (below)
    int n;
    struct right {
        struct file *f;
        unsigned how;
    } r[];
};

// SCM_CREDENTIALS (Linux's struct ucred).
struct kucred {
    int32_t pid;
    uint32_t uid, gid;
};

struct umsg {
    struct list link;
    size_t len, off;          // bytes, and bytes already read (streams)
    struct uname from;        // datagrams: the sender's name (len 0: unbound)
    struct rights *rights;    // SCM_RIGHTS, or NULL
    struct kucred cred;       // the sender's, or those it gave (SCM_CREDENTIALS)
    char data[];
};

// [i] immutable once made, [a] atomic, [l] lock.
struct unix_sock {
    struct sock sk;
    int refs;                 // [a] the file, the peer's link, an accept queue
    struct sleeplock lock;
    struct waitq wq;          // its receivers, and senders waiting for room in its queue
    struct pollhead poll;
    struct list rq;           // [l] struct umsg, oldest first
    size_t rq_bytes;          // [l]
    struct unix_sock *peer;   // [l] referenced; streams: the other end; dgram: default destination
    bool closed;              // [l] its file is gone
    bool shut_rd, shut_wr;    // [l] its own shutdowns
    bool eof;                 // [l] nothing more will come (the peer shut down writing, or went)
    bool nowrite;             // [l] the peer takes nothing more (shut down reading, or went)
    bool connected;           // [l] streams: has (had) a peer
    bool listening;           // [l]
    int backlog;              // [l]
    struct list acceptq;      // [l] connected struct unix_socks (by their `alink`)
    int nacc;                 // [l]
    struct list alink;        // [l of the listener] in its acceptq
    struct uname name;        // [l] bound name (len 0: none); a server end: the listener's
    struct inode *ip;         // [l] the bound node (referenced), or NULL
    bool abound;              // [l, bucket lock to clear] in the name table by its abstract name
    struct list blink;        // [bucket lock] in the name table
    int peer_pid;             // [l] SO_PEERCRED: the peer's process when it connected (0: none)
    bool passcred;            // [a] SO_PASSCRED: receives report the sender's credentials
    // In flight (unix_gc.c), [g]: unix_gc's lock.
    int inflight;             // [g] references to its file in messages' rights
    struct list glink;        // [g] on the list of sockets in flight, while inflight > 0
    int gc_refs;              // [g] a collection's count of references from outside
    bool gc_candidate, gc_reached; // [g]
    struct unix_sock *gc_next; // [g] a collection's work list
};

static inline struct unix_sock *usk(struct sock *sk) { return (struct unix_sock *)sk; }
// A byte stream (SOCK_STREAM)? Connection-oriented (also SOCK_SEQPACKET,
// which keeps a datagram's message boundaries on a connection)?
static inline bool stream(struct unix_sock *u) { return u->sk.type == SOCK_STREAM; }
static inline bool conn(struct unix_sock *u) { return u->sk.type != SOCK_DGRAM; }

// unix.c. Free the messages of list q (never under a socket's lock: dropping
// a file sent with SCM_RIGHTS may close another socket, which locks its peer).
void unix_free_msgs(struct list *q);

// unix_gc.c. The file f went into (delta 1) or out of (-1) a message's rights;
// nothing if it is not an AF_UNIX socket. Never under unix_gc's lock.
void unix_inflight(struct file *f, int delta);
// Free what only files in flight reference: called as an AF_UNIX socket goes,
// and by unix_inflight as more files go in flight. No socket lock held.
void unix_gc(void);
