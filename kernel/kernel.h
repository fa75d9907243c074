// Kernel-wide basics: sizes, printing, panics, assertions, string helpers.
#pragma once
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NCPU_MAX 256      // CPU slots; xAPIC limits QEMU TCG to 255 usable ones
#define CACHELINE 64
#define __cacheline_aligned __attribute__((aligned(CACHELINE)))
// A global alone on its cache line: aligned to one, and the linker keeps every
// other variable off its lines (kernel.ld). For a variable some CPUs write and
// many read (an epoch counter, a shared mask); __cacheline_aligned alone lets
// the next variable share its line, so its readers, who never see the writes
// they pay for, miss with every write.
#define __cacheline_alone __attribute__((aligned(CACHELINE), section(".data.alone")))
#define __noreturn __attribute__((noreturn))
#define __unused __attribute__((unused))

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define ROUNDUP(x, n) (((x) + (n) - 1) / (n) * (n))
#define container_of(p, type, member) ((type *)((char *)(p) - offsetof(type, member)))

#define READ_ONCE(x) (*(volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))
#define barrier() asm volatile("" ::: "memory")

// printf.c: formatted output to the console.
int kprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int kvprintf(const char *fmt, va_list ap);
int ksnprintf(char *buf, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int kvsnprintf(char *buf, size_t n, const char *fmt, va_list ap);

// panic.c: stop every CPU after printing the message and a backtrace.
void panic(const char *fmt, ...) __attribute__((format(printf, 1, 2))) __noreturn;
#define assert(c)                                                                         \
    do {                                                                                  \
        if (!(c))                                                                         \
            panic("assertion failed: %s at %s:%d", #c, __FILE__, __LINE__);              \
    } while (0)

// string.c
void *memset(void *d, int c, size_t n);
void *memcpy(void *d, const void *s, size_t n);
void *memmove(void *d, const void *s, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);
size_t strlcpy(char *d, const char *s, size_t n);

// cmdline.c: the kernel command line from the boot loader.
struct bootinfo;
void cmdline_init(const struct bootinfo *bi);
extern char kernel_cmdline[];
const char *cmdline_get(const char *key, size_t *len); // value of key=value, or NULL
const char *cmdline_find(const char *line, const char *key, size_t *len); // same, in line
int cmdline_env(const char *line, char *buf, size_t size, char **envp, int max); // init's
bool cmdline_has(const char *key);                       // key or key=... present
// The decimal number key=N starts with (saturating), in *out; false without key.
bool cmdline_uint(const char *key, uint32_t *out);
bool cmdline_find_uint(const char *line, const char *key, uint32_t *out); // same, in line
