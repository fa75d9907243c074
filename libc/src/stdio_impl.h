// The FILE structure, shared by stdio.c, printf.c and scanf.c.
#pragma once
#include <stdio.h>
#include "libc.h"

#define F_READ 1      // opened for reading
#define F_WRITE 2     // opened for writing
#define F_APPEND 4
#define F_EOF 8
#define F_ERR 16
#define F_OWNBUF 32   // buf was malloc'ed by stdio
#define F_NOCLOSE 64  // the standard streams' storage is static
#define UNGET 8       // bytes reserved before buf for ungetc

struct _FILE {
    int fd;
    int flags;
    int bufmode;            // _IOFBF, _IOLBF or _IONBF
    unsigned char *base;    // allocation: UNGET bytes, then buf
    unsigned char *buf;
    size_t bufsize;
    unsigned char *rpos, *rend;  // unread input [rpos, rend)
    unsigned char *wpos;         // pending output [buf, wpos); NULL when not writing
    struct lock lock;
    struct _FILE *prev, *next;   // the open-stream list (fflush(NULL), exit)
};

hidden size_t __fwrite_unlocked(const void *p, size_t n, FILE *f);
hidden int __fflush_unlocked(FILE *f);
hidden int __fgetc_unlocked(FILE *f);
hidden int __vfprintf_unlocked(FILE *f, const char *fmt, va_list ap);
