// The program loader: maps a static ELF64 executable (ET_EXEC, or ET_DYN for
// static-pie) into a fresh address space and builds the Linux initial stack
// (argc, argv, envp, auxv). The executable is a buffer (programs built into the
// kernel), copied in, or a ScaleFS file, whose pages are mapped copy-on-write
// (load_segment), so exec copies almost nothing and its size is not limited by
// contiguous kernel memory. Anything malformed -- bad header, segments outside
// the file or user space, a dynamic loader request -- is -ENOEXEC.
//
// Commute: loads of different programs, and of one program by many processes:
// the new address space is private and the file's pages are only read. What
// processes running one program share is the inode's reference (a refcache
// counter, per CPU): a mapping holds the file's pages through the inode, so a
// fault on one writes nothing of the page (VP_FILEPG, kernel/mm/uvm_internal.h).
#include "elf64.h"
#include "fs.h"
#include "lib/random.h"
#include "mm/mm.h"
#include "mm/uvm.h"
#include "proc/proc.h"
#include "uapi/abi.h"
#include "uapi/errno.h"
#include "x86/x86.h"

#define MAX_PHNUM 64
#define ARG_MAX_BYTES (64 * 1024) // argument and environment strings plus vectors
#define MAX_ARGS 1024

static bool header_ok(const struct elf64_ehdr *eh, size_t len)
{
    if (len < sizeof *eh || memcmp(eh->ident, ELFMAG, 4) != 0 ||
        eh->ident[4] != ELFCLASS64 || eh->ident[5] != ELFDATA2LSB ||
        eh->machine != EM_X86_64 || (eh->type != ET_EXEC && eh->type != ET_DYN) ||
        eh->phentsize != sizeof(struct elf64_phdr) || eh->phnum == 0 ||
        eh->phnum > MAX_PHNUM)
        return false;
    return eh->phoff <= len && eh->phnum * sizeof(struct elf64_phdr) <= len - eh->phoff;
}

static int prot_of(uint32_t flags)
{
    return (flags & PF_R ? VM_READ : 0) | (flags & PF_W ? VM_WRITE : 0) |
           (flags & PF_X ? VM_EXEC : 0);
}

// Where the executable's bytes come from: all of it in memory, or a file of
// which only the first bytes (the headers) are in memory.
struct elf_src {
    const char *head;  // the first headlen bytes
    size_t headlen;
    size_t len;        // the whole executable
    struct inode *ip;  // NULL: head holds all of it
};

// Copy n bytes at file offset off to va in vs.
static int copy_out(struct vmspace *vs, uintptr_t va, const struct elf_src *src, uint64_t off,
                    size_t n)
{
    if (!src->ip)
        return uvm_write(vs, va, src->head + off, n) < 0 ? -ENOMEM : 0;
    char *buf = page_alloc();
    if (!buf)
        return -ENOMEM;
    int err = 0;
    while (n > 0 && !err) {
        size_t m = MIN(n, PGSIZE);
        int64_t got = fs_read(src->ip, buf, m, off);
        if (got != (int64_t)m)
            err = got < 0 ? (int)got : -ENOEXEC; // shorter than its headers say
        else if (uvm_write(vs, va, buf, m) < 0)
            err = -ENOMEM;
        va += m;
        off += m;
        n -= m;
    }
    page_free(buf);
    return err;
}

// Zero n bytes at va in vs (the part of a segment past its file bytes, in a page
// whose other bytes come from elsewhere).
static int zero_out(struct vmspace *vs, uintptr_t va, size_t n)
{
    static const char zeros[256];
    for (size_t m; n > 0; va += m, n -= m) {
        m = MIN(n, sizeof zeros);
        if (uvm_write(vs, va, zeros, m) < 0)
            return -ENOMEM;
    }
    return 0;
}

// Map and fill one PT_LOAD segment: bytes [va, va + filesz) from the file at
// offset, zeros up to va + memsz. A file's whole pages are mapped from the file
// itself, copy-on-write (uvm_map_file): exec copies nothing, the pages are
// read in on first touch, and every process running the program shares them.
// Only the page where the file bytes give way to .bss is copied (its tail must
// read as zeros), and .bss beyond it is anonymous memory. A page the segment
// shares with the previous one (segments not page aligned) keeps that one's
// mapping, gets the union of both protections, and this segment's bytes are
// copied into it.
static int load_segment(struct vmspace *vs, const struct elf_src *src,
                        const struct elf64_phdr *ph, uintptr_t bias, uintptr_t *mapped_end)
{
    uintptr_t va = ph->vaddr + bias;
    size_t len = src->len;
    if (ph->filesz > ph->memsz || ph->offset > len || ph->filesz > len - ph->offset ||
        ph->memsz > USER_TOP || va < USER_MIN || va > USER_TOP - ph->memsz ||
        va % PGSIZE != ph->offset % PGSIZE)
        return -ENOEXEC;
    uintptr_t start = PGROUNDDOWN(va), end = PGROUNDUP(va + ph->memsz);
    uintptr_t fend = va + ph->filesz, mend = va + ph->memsz;
    int prot = prot_of(ph->flags);
    int err = 0;
    if (start < *mapped_end) { // shares its first page with the previous segment
        int prev = 0;
        uvm_mapped(vs, start, &prev);
        if (uvm_protect(vs, start, PGSIZE, prev | prot) < 0)
            return -ENOMEM;
        uintptr_t pend = start + PGSIZE, f = MIN(fend, pend);
        if (f > va)
            err = copy_out(vs, va, src, ph->offset, f - va);
        if (!err && MIN(mend, pend) > MAX(va, fend))
            err = zero_out(vs, MAX(va, fend), MIN(mend, pend) - MAX(va, fend));
        if (err)
            return err;
        start = pend;
    }
    *mapped_end = MAX(*mapped_end, end);
    if (start >= end)
        return 0;
    // [start, fpages): straight from the file; [fpages, end): anonymous.
    uintptr_t fpages = !src->ip ? start : mend > fend ? PGROUNDDOWN(fend) : PGROUNDUP(fend);
    fpages = MAX(fpages, start);
    if (fpages > start &&
        uvm_map_file(vs, start, fpages - start, prot, UVM_FIXED, src->ip,
                     (ph->offset + (start - va)) / PGSIZE) < 0)
        return -ENOMEM;
    if (end > fpages && uvm_map(vs, fpages, end - fpages, prot, UVM_FIXED) < 0)
        return -ENOMEM;
    uintptr_t c = MAX(fpages, va); // file bytes left to copy: [c, fend)
    return fend > c ? copy_out(vs, c, src, ph->offset + (c - va), fend - c) : 0;
}

struct stack_builder {
    char *buf;        // kernel copy of [top - ARG_MAX_BYTES, top)
    uintptr_t top;    // user address of the end of buf
    size_t used;      // bytes filled from the top down
};

// Push bytes onto the string area; returns their user address, 0 if full.
static uintptr_t push_bytes(struct stack_builder *sb, const void *p, size_t n)
{
    if (n > ARG_MAX_BYTES - sb->used)
        return 0;
    sb->used += n;
    memcpy(sb->buf + ARG_MAX_BYTES - sb->used, p, n);
    return sb->top - sb->used;
}

static int count(const char *const v[])
{
    int n = 0;
    while (v && v[n])
        n++;
    return n;
}

struct image_info {
    uintptr_t entry, phdr;
    int phnum;
};

static uint64_t hwcap(void)
{
    uint32_t a, b, c, d;
    cpuid(1, 0, &a, &b, &c, &d);
    return d;
}

// The System V initial stack, from the stack pointer up: argc, argv[] and NULL,
// envp[] and NULL, auxv pairs ending in AT_NULL, then the strings and random bytes.
// The stack pointer (at argc) is 16-byte aligned.
static int build_stack(struct vmspace *vs, const char *const argv[], const char *const envp[],
                       const char *execfn, const struct image_info *ii, uintptr_t *sp_out)
{
    int argc = count(argv), envc = count(envp);
    if (argc > MAX_ARGS || envc > MAX_ARGS)
        return -E2BIG;
    struct stack_builder sb = {kmalloc(ARG_MAX_BYTES), USER_TOP, 0};
    uint64_t *vec = kmalloc((argc + envc + 2 + 2 * 32 + 1) * sizeof(uint64_t));
    if (!sb.buf || !vec) {
        kfree(sb.buf);
        kfree(vec);
        return -ENOMEM;
    }
    int err = -E2BIG;
    uint8_t rnd[16];
    random_bytes(rnd, sizeof rnd);
    uintptr_t u_rnd = push_bytes(&sb, rnd, sizeof rnd);
    uintptr_t u_execfn = push_bytes(&sb, execfn, strlen(execfn) + 1);
    uintptr_t u_platform = push_bytes(&sb, "x86_64", 7);
    int n = 0;
    vec[n++] = argc;
    for (int i = 0; i < argc; i++)
        if (!(vec[n++] = push_bytes(&sb, argv[i], strlen(argv[i]) + 1)))
            goto out;
    vec[n++] = 0;
    for (int i = 0; i < envc; i++)
        if (!(vec[n++] = push_bytes(&sb, envp[i], strlen(envp[i]) + 1)))
            goto out;
    vec[n++] = 0;
    if (!u_rnd || !u_execfn || !u_platform)
        goto out;
    uint64_t aux[][2] = {
        {AT_PHDR, ii->phdr}, {AT_PHENT, sizeof(struct elf64_phdr)}, {AT_PHNUM, ii->phnum},
        {AT_PAGESZ, PGSIZE}, {AT_BASE, 0}, {AT_FLAGS, 0}, {AT_ENTRY, ii->entry},
        {AT_UID, 0}, {AT_EUID, 0}, {AT_GID, 0}, {AT_EGID, 0}, {AT_SECURE, 0},
        {AT_HWCAP, hwcap()}, {AT_CLKTCK, 100}, {AT_RANDOM, u_rnd},
        {AT_EXECFN, u_execfn}, {AT_PLATFORM, u_platform}, {AT_NULL, 0},
    };
    for (size_t i = 0; i < ARRAY_SIZE(aux); i++) {
        vec[n++] = aux[i][0];
        vec[n++] = aux[i][1];
    }
    size_t vbytes = n * sizeof(uint64_t);
    uintptr_t sp = (sb.top - sb.used - vbytes) & ~15UL;
    if (sb.top - sp > ARG_MAX_BYTES)
        goto out;
    err = -ENOMEM;
    if (uvm_write(vs, sp, vec, vbytes) < 0 ||
        uvm_write(vs, sb.top - sb.used, sb.buf + ARG_MAX_BYTES - sb.used, sb.used) < 0)
        goto out;
    *sp_out = sp;
    err = 0;
out:
    kfree(sb.buf);
    kfree(vec);
    return err;
}

static int load(struct vmspace *vs, const struct elf_src *src, const char *const argv[],
                const char *const envp[], const char *execfn, struct exec_info *out)
{
    const struct elf64_ehdr *eh = (const void *)src->head;
    if (!header_ok(eh, src->headlen)) // the program headers must be in the head
        return -ENOEXEC;
    const struct elf64_phdr *ph = (const void *)(src->head + eh->phoff);

    // static-pie: place the lowest segment at PIE_BASE.
    uintptr_t lowest = UINTPTR_MAX;
    for (int i = 0; i < eh->phnum; i++) {
        if (ph[i].type == PT_INTERP)
            return -ENOEXEC; // dynamically linked: no loader yet
        if (ph[i].type == PT_LOAD)
            lowest = MIN(lowest, PGROUNDDOWN(ph[i].vaddr));
    }
    if (lowest == UINTPTR_MAX)
        return -ENOEXEC;
    uintptr_t bias = eh->type == ET_DYN ? PIE_BASE - lowest : 0;

    struct image_info ii = {.entry = eh->entry + bias, .phnum = eh->phnum};
    uintptr_t mapped_end = 0;
    for (int i = 0; i < eh->phnum; i++) {
        if (ph[i].type == PT_PHDR)
            ii.phdr = ph[i].vaddr + bias;
        if (ph[i].type != PT_LOAD)
            continue;
        if (ph[i].offset == 0 && !ii.phdr)
            ii.phdr = ph[i].vaddr + bias + eh->phoff;
        int err = load_segment(vs, src, &ph[i], bias, &mapped_end);
        if (err)
            return err;
    }
    if (ii.entry < USER_MIN || ii.entry >= mapped_end)
        return -ENOEXEC;

    if (ustack_map(vs) < 0)
        return -ENOMEM;
    int err = build_stack(vs, argv, envp, execfn, &ii, &out->sp);
    if (err)
        return err;
    out->entry = ii.entry;
    out->brk = PGROUNDUP(mapped_end);
    out->argv = argv;
    return 0;
}

int elf_exec(struct vmspace *vs, const void *image, size_t len, const char *const argv[],
             const char *const envp[], const char *execfn, struct exec_info *out)
{
    struct elf_src src = {.head = image, .headlen = len, .len = len};
    return load(vs, &src, argv, envp, execfn, out);
}

int elf_exec_file(struct vmspace *vs, struct inode *ip, size_t len, const void *head,
                  size_t headlen, const char *const argv[], const char *const envp[],
                  const char *execfn, struct exec_info *out)
{
    struct elf_src src = {.head = head, .headlen = headlen, .len = len, .ip = ip};
    return load(vs, &src, argv, envp, execfn, out);
}
