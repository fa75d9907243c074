// lwIP's compiler and platform hooks (lwip/arch.h) for the kernel: the
// freestanding build has no libc headers, so the types, limits and printf
// formats are given here, and diagnostics, assertions and random numbers go to
// the kernel's kprintf, panic and random_bytes.
#pragma once
#include <stddef.h>
#include <stdint.h>

#define LWIP_NO_INTTYPES_H 1
#define LWIP_NO_LIMITS_H 1
#define LWIP_NO_CTYPE_H 1
#define LWIP_NO_UNISTD_H 1
#define INT_MAX __INT_MAX__
#define SSIZE_MAX __LONG_MAX__
typedef long ssize_t;

// printf formats of lwIP's integer types (u32_t is unsigned int here).
#define X8_F "02x"
#define U16_F "hu"
#define S16_F "hd"
#define X16_F "hx"
#define U32_F "u"
#define S32_F "d"
#define X32_F "x"
#define SZT_F "zu"

#define BYTE_ORDER LITTLE_ENDIAN

int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
uint32_t lwip_port_rand(void); // sys_arch.c

#define LWIP_PLATFORM_DIAG(x) do { kprintf x; } while (0)
#define LWIP_PLATFORM_ASSERT(x) panic("lwIP assertion \"%s\" failed at %s:%d", x, __FILE__, __LINE__)
#define LWIP_RAND() lwip_port_rand()

// The lwIP heap is the kernel heap (MEM_LIBC_MALLOC in lwipopts.h).
void *kmalloc(size_t size);
void *kzalloc(size_t size);
void kfree(void *p);
#define mem_clib_malloc kmalloc
#define mem_clib_free kfree
#define mem_clib_calloc(n, size) kzalloc((n) * (size))
