// Limits of integer types and of the system (Linux x86-64 values).
#pragma once

#define CHAR_BIT 8
#define SCHAR_MIN (-128)
#define SCHAR_MAX 127
#define UCHAR_MAX 255
#define CHAR_MIN SCHAR_MIN
#define CHAR_MAX SCHAR_MAX
#define MB_LEN_MAX 4
#define SHRT_MIN (-1 - 0x7fff)
#define SHRT_MAX 0x7fff
#define USHRT_MAX 0xffff
#define INT_MIN (-1 - 0x7fffffff)
#define INT_MAX 0x7fffffff
#define UINT_MAX 0xffffffffU
#define LONG_MIN (-LONG_MAX - 1)
#define LONG_MAX 0x7fffffffffffffffL
#define ULONG_MAX 0xffffffffffffffffUL
#define LLONG_MIN (-LLONG_MAX - 1)
#define LLONG_MAX 0x7fffffffffffffffLL
#define ULLONG_MAX 0xffffffffffffffffULL
#define SSIZE_MAX LONG_MAX

#define PATH_MAX 4096
#define NAME_MAX 255
#define PIPE_BUF 4096
#define ARG_MAX 131072
#define IOV_MAX 1024
#define PTHREAD_KEYS_MAX 128
#define PTHREAD_STACK_MIN 16384
#define PAGE_SIZE 4096
#define PAGESIZE 4096
#define HOST_NAME_MAX 64
#define NGROUPS_MAX 65536
