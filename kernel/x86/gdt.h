// Segment selectors (gdt.c). The order of the user entries is fixed by sysret:
// it loads CS = STAR[63:48] + 16 and SS = STAR[63:48] + 8.
#pragma once
#include <stdint.h>

#define GDT_KCODE 0x08
#define GDT_KDATA 0x10
#define GDT_UCODE32 0x18
#define GDT_UDATA 0x20
#define GDT_UCODE 0x28
#define GDT_TSS 0x30 // 16 bytes
#define GDT_ENTRIES 8

void tss_set_rsp0(uint64_t rsp0); // kernel stack for entries from user mode
