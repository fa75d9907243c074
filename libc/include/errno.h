// errno: per thread (thread-local storage reached through FS); values are the
// kernel's, which are Linux's.
#pragma once
#include "../../kernel/uapi/errno.h"

#ifndef EWOULDBLOCK
#define EWOULDBLOCK EAGAIN
#endif
#ifndef ENOTSUP
#define ENOTSUP EOPNOTSUPP
#endif
#ifndef ECANCELED
#define ECANCELED 125
#endif
#ifndef EILSEQ
#define EILSEQ 84
#endif
#ifndef ENOTCONN
#define ENOTCONN 107
#endif
#ifndef EALREADY
#define EALREADY 114
#endif
#ifndef EINPROGRESS
#define EINPROGRESS 115
#endif
#ifndef ESTALE
#define ESTALE 116
#endif
#ifndef EOWNERDEAD
#define EOWNERDEAD 130
#endif
#ifndef ENOTRECOVERABLE
#define ENOTRECOVERABLE 131
#endif

#ifndef EAFNOSUPPORT
#define EAFNOSUPPORT 97
#endif
#ifndef EADDRNOTAVAIL
#define EADDRNOTAVAIL 99
#endif
#ifndef ENETDOWN
#define ENETDOWN 100
#endif
#ifndef ENETUNREACH
#define ENETUNREACH 101
#endif
#ifndef ECONNABORTED
#define ECONNABORTED 103
#endif
#ifndef ECONNRESET
#define ECONNRESET 104
#endif
#ifndef ENOBUFS
#define ENOBUFS 105
#endif
#ifndef EISCONN
#define EISCONN 106
#endif
#ifndef EHOSTUNREACH
#define EHOSTUNREACH 113
#endif
#ifndef EPROTONOSUPPORT
#define EPROTONOSUPPORT 93
#endif
#ifndef EPROTO
#define EPROTO 71
#endif
#ifndef EMSGSIZE
#define EMSGSIZE 90
#endif
#ifndef EDESTADDRREQ
#define EDESTADDRREQ 89
#endif
#ifndef EPROTOTYPE
#define EPROTOTYPE 91
#endif
#ifndef ENOPROTOOPT
#define ENOPROTOOPT 92
#endif
#ifndef ENOTBLK
#define ENOTBLK 15
#endif
#ifndef ENODATA
#define ENODATA 61
#endif
#ifndef ETIME
#define ETIME 62
#endif
#ifndef EBADMSG
#define EBADMSG 74
#endif
#ifndef ENOLINK
#define ENOLINK 67
#endif
#ifndef EMULTIHOP
#define EMULTIHOP 72
#endif
#ifndef EIDRM
#define EIDRM 43
#endif
#ifndef ENOSR
#define ENOSR 63
#endif
#ifndef ENOSTR
#define ENOSTR 60
#endif
#ifndef EDQUOT
#define EDQUOT 122
#endif
#ifndef EUSERS
#define EUSERS 87
#endif

int *__errno_location(void);
#define errno (*__errno_location())

extern char *program_invocation_name;
extern char *program_invocation_short_name;
