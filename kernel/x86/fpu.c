// The user threads' floating-point and vector registers (x87, SSE, and AVX and
// beyond when the firmware enabled them in XCR0). The kernel never touches these
// registers (-mgeneral-regs-only), so a user thread's state stays live in the
// CPU while it is in the kernel and is saved only when another user thread takes
// the CPU (switch_to).
//
// Scalability: each thread has its own save area; nothing is shared.
#include "mm/mm.h"
#include "proc/sched.h"
#include "x86/console.h"
#include "x86/x86.h"

#define CR4_OSXSAVE (1UL << 18)

static size_t area_size = 512; // fxsave's; xsave's for the enabled features
static bool use_xsave;

void fpu_init(void)
{
    if (!(read_cr4() & CR4_OSXSAVE))
        return;
    uint32_t a, b, c, d;
    cpuid(0xd, 0, &a, &b, &c, &d);
    use_xsave = true;
    area_size = b; // bytes needed for the features XCR0 enables
    kprintf("fpu: xsave, %lu bytes per user thread\n", area_size);
}

static void save(void *area)
{
    if (use_xsave)
        asm volatile("xsave64 (%0)" : : "r"(area), "a"(~0U), "d"(~0U) : "memory");
    else
        asm volatile("fxsave64 (%0)" : : "r"(area) : "memory");
}

static void restore(const void *area)
{
    if (use_xsave)
        asm volatile("xrstor64 (%0)" : : "r"(area), "a"(~0U), "d"(~0U) : "memory");
    else
        asm volatile("fxrstor64 (%0)" : : "r"(area) : "memory");
}

// The initial state: x87 control word and MXCSR with every exception masked;
// with xsave, an all-zero header means "initial" for every other component.
int fpu_alloc(struct thread *t)
{
    t->fpu = kzalloc(area_size); // kmalloc aligns to the size class: >= 64 bytes
    if (!t->fpu)
        return -1;
    uint8_t *f = t->fpu;
    *(uint16_t *)&f[0] = 0x37f;
    *(uint32_t *)&f[24] = 0x1f80;
    return 0;
}

void fpu_free(struct thread *t)
{
    kfree(t->fpu);
    t->fpu = NULL;
}

void fpu_save(struct thread *t) { save(t->fpu); }
void fpu_restore(struct thread *t) { restore(t->fpu); }

void fpu_reset_current(struct thread *t)
{
    memset(t->fpu, 0, area_size);
    uint8_t *f = t->fpu;
    *(uint16_t *)&f[0] = 0x37f;
    *(uint32_t *)&f[24] = 0x1f80;
    restore(t->fpu);
}
