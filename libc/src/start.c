// Process start-up: self-relocation of a static PIE, the main thread's TLS
// block and thread pointer (FS), the environment, constructors, then main.
#include <elf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include "libc.h"

int main(int argc, char **argv, char **envp);

extern const char __ehdr_start[] hidden;
extern void (*__preinit_array_start[])(int, char **, char **) hidden;
extern void (*__preinit_array_end[])(int, char **, char **) hidden;
extern void (*__init_array_start[])(int, char **, char **) hidden;
extern void (*__init_array_end[])(int, char **, char **) hidden;

struct tls_image __tls;
size_t __page_size = 4096;
char **__auxv_ptr;
char *program_invocation_name;
char *program_invocation_short_name;

// Load bias: where the ELF header is minus where it was linked (0 for ET_EXEC).
static uintptr_t load_bias(const Elf64_Phdr *ph, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (ph[i].p_type == PT_LOAD && ph[i].p_offset == 0)
            return (uintptr_t)__ehdr_start - ph[i].p_vaddr;
    return 0;
}

// A static PIE carries R_X86_64_RELATIVE relocations for every stored address.
// Nothing before this may read a pointer from initialised data; it touches
// only the stack and PC-relative addresses.
static void self_relocate(const Elf64_Dyn *dynamic, uintptr_t bias)
{
    const Elf64_Rela *rela = NULL;
    size_t relasz = 0, relaent = sizeof(Elf64_Rela);
    for (const Elf64_Dyn *d = dynamic; d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_RELA)
            rela = (const Elf64_Rela *)(bias + d->d_un.d_ptr);
        else if (d->d_tag == DT_RELASZ)
            relasz = d->d_un.d_val;
        else if (d->d_tag == DT_RELAENT)
            relaent = d->d_un.d_val;
    }
    for (size_t off = 0; rela && off + relaent <= relasz; off += relaent) {
        const Elf64_Rela *r = (const Elf64_Rela *)((const char *)rela + off);
        if (ELF64_R_TYPE(r->r_info) == R_X86_64_RELATIVE)
            *(uint64_t *)(bias + r->r_offset) = bias + r->r_addend;
    }
}

size_t __tls_size(void)
{
    size_t align = __tls.align > 64 ? __tls.align : 64;
    return __tls.offset + sizeof(struct pthread) + align;
}

struct pthread *__tls_setup(void *mem, size_t size)
{
    size_t align = __tls.align > 64 ? __tls.align : 64;
    uintptr_t tp = ((uintptr_t)mem + __tls.offset + align - 1) & ~(uintptr_t)(align - 1);
    char *block = (char *)tp - __tls.offset;
    (void)size;
    memcpy(block, __tls.init, __tls.filesz);
    memset(block + __tls.filesz, 0, __tls.offset - __tls.filesz);
    struct pthread *t = (struct pthread *)tp;
    memset(t, 0, sizeof *t);
    t->self = t;
    return t;
}

static void tls_init_main(const Elf64_Phdr *ph, size_t n, uintptr_t bias, const void *random)
{
    for (size_t i = 0; i < n; i++) {
        if (ph[i].p_type != PT_TLS)
            continue;
        __tls.init = (const void *)(bias + ph[i].p_vaddr);
        __tls.filesz = ph[i].p_filesz;
        __tls.memsz = ph[i].p_memsz;
        __tls.align = ph[i].p_align ? ph[i].p_align : 1;
    }
    __tls.offset = (__tls.memsz + __tls.align - 1) & ~(__tls.align - 1);
    size_t size = __tls_size();
    long mem = __sys(__NR_mmap, 0, size, 3 /* RW */, 0x22 /* PRIVATE|ANON */, -1, 0);
    if (mem < 0 && mem > -4096)
        __sys(__NR_exit_group, 127);
    struct pthread *t = __tls_setup((void *)mem, size);
    t->map = (void *)mem;
    t->map_size = size;
    t->state = THREAD_DETACHED;  // the main thread is never joined
    if (random)
        memcpy(&t->canary, random, sizeof t->canary);
    t->canary &= ~(uintptr_t)0xff;  // a zero byte stops string overruns
    if (__sys(__NR_arch_prctl, 0x1002 /* ARCH_SET_FS */, t) < 0)
        __sys(__NR_exit_group, 127);
    t->tid = __sys(__NR_set_tid_address, &t->tid);
}

_Noreturn void __libc_start(long *sp, const Elf64_Dyn *dynamic)
{
    int argc = (int)sp[0];
    char **argv = (char **)(sp + 1);
    char **envp = argv + argc + 1;
    char **p = envp;
    while (*p)
        p++;
    Elf64_auxv_t *aux = (Elf64_auxv_t *)(p + 1);
    const Elf64_Phdr *ph = NULL;
    size_t phnum = 0;
    const void *random = NULL;
    for (Elf64_auxv_t *a = aux; a->a_type != AT_NULL; a++) {
        if (a->a_type == AT_PHDR)
            ph = (const Elf64_Phdr *)a->a_un.a_val;
        else if (a->a_type == AT_PHNUM)
            phnum = a->a_un.a_val;
        else if (a->a_type == AT_PAGESZ)
            __page_size = a->a_un.a_val;
        else if (a->a_type == AT_RANDOM)
            random = (const void *)a->a_un.a_val;
    }
    uintptr_t bias = load_bias(ph, phnum);
    if (dynamic)
        self_relocate(dynamic, bias);
    __auxv_ptr = (char **)aux;
    tls_init_main(ph, phnum, bias, random);
    __environ_init(envp);
    if (argc > 0 && argv[0]) {
        program_invocation_name = argv[0];
        char *slash = strrchr(argv[0], '/');
        program_invocation_short_name = slash ? slash + 1 : argv[0];
    }
    for (size_t i = 0; i < (size_t)(__preinit_array_end - __preinit_array_start); i++)
        __preinit_array_start[i](argc, argv, envp);
    for (size_t i = 0; i < (size_t)(__init_array_end - __init_array_start); i++)
        __init_array_start[i](argc, argv, envp);
    exit(main(argc, argv, envp));
}

unsigned long getauxval(unsigned long type)
{
    for (unsigned long *a = (unsigned long *)__auxv_ptr; a && a[0] != AT_NULL; a += 2)
        if (a[0] == type)
            return a[1];
    errno = ENOENT;
    return 0;
}
