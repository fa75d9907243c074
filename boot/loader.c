// The UEFI boot loader (BOOTX64.EFI).
//
// Reads \kernel.elf, \initrd.cpio and \cmdline.txt from the ESP it was started
// from, loads the kernel's PT_LOAD segments into one 2 MiB aligned block, builds
// minimal page tables (identity map, direct map, kernel image), fills in a
// struct bootinfo (boot/bootinfo.h), leaves boot services and jumps to the
// kernel entry with %rdi = physical address of the bootinfo.
//
// Built with gnu-efi using GNU_EFI_USE_MS_ABI, so firmware functions are called
// directly through their (ms_abi) function pointers.

#include <efi.h>
#include <efilib.h>

#include "bootinfo.h"
#include "elf64.h"

#define PAGE_SIZE 4096ULL
#define BIG_PAGE (2ULL << 20)   // 2 MiB
#define GIB (1ULL << 30)
#define MAX_KERNEL_SPAN GIB     // the kernel image must fit one page directory

#define PTE_P 0x1ULL
#define PTE_W 0x2ULL
#define PTE_PS 0x80ULL          // 2 MiB page in a PD entry

#define CR4_LA57 (1ULL << 12)

#define ROUNDUP(x, a) (((x) + (a) - 1) & ~((UINT64)(a) - 1))
#define PAGES(bytes) (ROUNDUP((bytes), PAGE_SIZE) / PAGE_SIZE)
#define KIB(bytes) (ROUNDUP((bytes), 1024) / 1024)

static EFI_HANDLE image_handle;

// Report a fatal error and power off, so that a QEMU run ends instead of hanging.
static void __attribute__((noreturn)) fatal(const CHAR16 *what, EFI_STATUS st)
{
    Print(L"loader: error: %s: %r\n", what, st);
    RT->ResetSystem(EfiResetShutdown, st, 0, NULL);
    for (;;)
        __asm__ volatile("cli; hlt");
}

static void check(EFI_STATUS st, const CHAR16 *what)
{
    if (EFI_ERROR(st))
        fatal(what, st);
}

static EFI_PHYSICAL_ADDRESS alloc_pages(UINT64 npages, const CHAR16 *what)
{
    EFI_PHYSICAL_ADDRESS pa = 0;
    check(BS->AllocatePages(AllocateAnyPages, EfiLoaderData, npages, &pa), what);
    return pa;
}

// The root directory of the volume this loader was started from.
static EFI_FILE_HANDLE open_esp_root(void)
{
    EFI_LOADED_IMAGE *li;
    EFI_SIMPLE_FILE_SYSTEM_PROTOCOL *fs;
    EFI_FILE_HANDLE root;

    check(BS->HandleProtocol(image_handle, &LoadedImageProtocol, (void **)&li),
          L"loaded image protocol");
    check(BS->HandleProtocol(li->DeviceHandle, &FileSystemProtocol, (void **)&fs),
          L"ESP file system");
    check(fs->OpenVolume(fs, &root), L"open ESP volume");
    return root;
}

// Opens path and returns its size. EFI_NOT_FOUND is returned, not fatal,
// so that callers can treat optional files as absent.
static EFI_STATUS open_file(EFI_FILE_HANDLE root, CHAR16 *path,
                            EFI_FILE_HANDLE *f, UINT64 *size)
{
    // EFI_FILE_INFO ends in a variable-length file name; leave room for it.
    UINT64 buf[(sizeof(EFI_FILE_INFO) + 512) / sizeof(UINT64)];
    UINTN bufsize = sizeof(buf);
    EFI_STATUS st;

    st = root->Open(root, f, path, EFI_FILE_MODE_READ, 0);
    if (st == EFI_NOT_FOUND)
        return st;
    check(st, path);
    check((*f)->GetInfo(*f, &GenericFileInfo, &bufsize, buf), path);
    *size = ((EFI_FILE_INFO *)buf)->FileSize;
    return EFI_SUCCESS;
}

// Reads exactly size bytes. Loops because a Read may return fewer bytes.
static void read_exact(EFI_FILE_HANDLE f, void *dst, UINT64 size, CHAR16 *path)
{
    UINT8 *p = dst;

    while (size > 0) {
        UINTN n = size;
        check(f->Read(f, &n, p), path);
        if (n == 0)
            fatal(path, EFI_END_OF_FILE);
        p += n;
        size -= n;
    }
}

// Reads a whole file into fresh EfiLoaderData pages (so the kernel sees it as
// BOOTMEM_LOADER). Returns 0 if the file is absent or empty and !required.
static UINT64 load_file(EFI_FILE_HANDLE root, CHAR16 *path, int required,
                        UINT64 *size)
{
    EFI_FILE_HANDLE f;
    EFI_PHYSICAL_ADDRESS pa;

    *size = 0;
    if (open_file(root, path, &f, size) == EFI_NOT_FOUND) {
        if (required)
            fatal(path, EFI_NOT_FOUND);
        return 0;
    }
    if (*size == 0) {
        f->Close(f);
        if (required)
            fatal(path, EFI_LOAD_ERROR);
        return 0;
    }
    pa = alloc_pages(PAGES(*size), path);
    read_exact(f, (void *)pa, *size, path);
    f->Close(f);
    return pa;
}

static int is_space(char c)
{
    return c == '\n' || c == '\r' || c == ' ' || c == '\t';
}

// Copies \cmdline.txt (if any) into bi->cmdline, truncated to fit,
// without trailing white space.
static void load_cmdline(EFI_FILE_HANDLE root, struct bootinfo *bi)
{
    EFI_FILE_HANDLE f;
    UINT64 size, n;

    bi->cmdline[0] = 0;
    if (open_file(root, L"\\cmdline.txt", &f, &size) == EFI_NOT_FOUND)
        return;
    n = size < BOOTINFO_CMDLINE_MAX - 1 ? size : BOOTINFO_CMDLINE_MAX - 1;
    read_exact(f, bi->cmdline, n, L"\\cmdline.txt");
    f->Close(f);
    while (n > 0 && is_space(bi->cmdline[n - 1]))
        n--;
    bi->cmdline[n] = 0;
}

// Checks that the file is an x86-64 ELF64 executable whose program
// headers lie inside the file.
static const struct elf64_ehdr *check_elf(UINT64 file, UINT64 size)
{
    const struct elf64_ehdr *eh = (const struct elf64_ehdr *)file;

    if (size < sizeof(*eh) ||
        eh->ident[0] != 0x7f || eh->ident[1] != 'E' ||
        eh->ident[2] != 'L' || eh->ident[3] != 'F')
        fatal(L"kernel.elf is not an ELF file", EFI_LOAD_ERROR);
    if (eh->ident[4] != ELFCLASS64 || eh->ident[5] != ELFDATA2LSB ||
        eh->machine != EM_X86_64 || eh->type != ET_EXEC)
        fatal(L"kernel.elf is not an x86-64 ELF64 executable", EFI_LOAD_ERROR);
    if (eh->phentsize < sizeof(struct elf64_phdr) ||
        eh->phoff > size ||
        (UINT64)eh->phnum * eh->phentsize > size - eh->phoff)
        fatal(L"kernel.elf: bad program headers", EFI_LOAD_ERROR);
    return eh;
}

static const struct elf64_phdr *phdr(const struct elf64_ehdr *eh, int i)
{
    return (const struct elf64_phdr *)((UINT64)eh + eh->phoff +
                                       (UINT64)i * eh->phentsize);
}

// Size of the kernel image: the end of the highest PT_LOAD segment,
// measured in load (p_paddr) offsets, rounded up to 2 MiB.
// Also validates each segment against the file.
static UINT64 kernel_span(const struct elf64_ehdr *eh, UINT64 filesize)
{
    UINT64 end = 0;

    for (int i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr(eh, i);
        if (ph->type != PT_LOAD)
            continue;
        if (ph->filesz > ph->memsz || ph->offset > filesize ||
            ph->filesz > filesize - ph->offset ||
            ph->paddr >= MAX_KERNEL_SPAN ||
            ph->memsz > MAX_KERNEL_SPAN - ph->paddr)
            fatal(L"kernel.elf: bad PT_LOAD segment", EFI_LOAD_ERROR);
        if (ph->paddr + ph->memsz > end)
            end = ph->paddr + ph->memsz;
    }
    if (end == 0)
        fatal(L"kernel.elf: no PT_LOAD segments", EFI_LOAD_ERROR);
    return ROUNDUP(end, BIG_PAGE);
}

// Allocates span bytes of 2 MiB aligned EfiLoaderData: over-allocate by
// 2 MiB - 4 KiB, then give back the unaligned head and the spare tail.
static UINT64 alloc_aligned(UINT64 span)
{
    UINT64 extra = BIG_PAGE - PAGE_SIZE;
    UINT64 base = alloc_pages((span + extra) / PAGE_SIZE, L"kernel memory");
    UINT64 aligned = ROUNDUP(base, BIG_PAGE);
    UINT64 head = aligned - base;
    UINT64 tail = extra - head;

    if (head)
        check(BS->FreePages(base, head / PAGE_SIZE), L"free head");
    if (tail)
        check(BS->FreePages(aligned + span, tail / PAGE_SIZE), L"free tail");
    return aligned;
}

// Copies each PT_LOAD segment to phys + p_paddr. The whole span is zeroed
// first, which covers .bss (p_memsz > p_filesz) and the gaps between segments.
static void load_segments(const struct elf64_ehdr *eh, UINT64 phys, UINT64 span)
{
    ZeroMem((void *)phys, span);
    for (int i = 0; i < eh->phnum; i++) {
        const struct elf64_phdr *ph = phdr(eh, i);
        if (ph->type == PT_LOAD)
            CopyMem((void *)(phys + ph->paddr),
                    (void *)((UINT64)eh + ph->offset), ph->filesz);
    }
}

static int guid_eq(EFI_GUID *a, EFI_GUID *b)
{
    return CompareMem(a, b, sizeof(*a)) == 0;
}

// The ACPI RSDP from the system configuration table, preferring ACPI 2.0+.
static UINT64 find_rsdp(void)
{
    EFI_GUID acpi20 = ACPI_20_TABLE_GUID;
    EFI_GUID acpi10 = ACPI_TABLE_GUID;
    UINT64 rsdp = 0;

    for (UINTN i = 0; i < ST->NumberOfTableEntries; i++) {
        EFI_CONFIGURATION_TABLE *t = &ST->ConfigurationTable[i];
        if (guid_eq(&t->VendorGuid, &acpi20))
            return (UINT64)t->VendorTable;
        if (guid_eq(&t->VendorGuid, &acpi10))
            rsdp = (UINT64)t->VendorTable;
    }
    return rsdp;
}

// Records the GOP frame buffer, if there is one the kernel could draw into.
static void find_framebuffer(struct bootfb *fb)
{
    EFI_GRAPHICS_OUTPUT_PROTOCOL *gop;
    EFI_GRAPHICS_OUTPUT_MODE_INFORMATION *info;

    ZeroMem(fb, sizeof(*fb));
    if (EFI_ERROR(BS->LocateProtocol(&GraphicsOutputProtocol, NULL, (void **)&gop)))
        return;
    info = gop->Mode->Info;
    if (info->PixelFormat == PixelBltOnly)
        return;
    fb->base = gop->Mode->FrameBufferBase;
    fb->size = gop->Mode->FrameBufferSize;
    fb->width = info->HorizontalResolution;
    fb->height = info->VerticalResolution;
    fb->pitch = info->PixelsPerScanLine;
    fb->format = info->PixelFormat;
}

// One page below 1 MiB for the APs' real-mode start-up code.
// Page 0 is kept (allocated) and skipped: 0 would read as "none".
static UINT64 alloc_trampoline(void)
{
    for (int try = 0; try < 2; try++) {
        EFI_PHYSICAL_ADDRESS pa = 0xFFFFF;
        check(BS->AllocatePages(AllocateMaxAddress, EfiLoaderData, 1, &pa),
              L"trampoline page below 1 MiB");
        if (pa != 0)
            return pa;
    }
    fatal(L"trampoline page below 1 MiB", EFI_OUT_OF_RESOURCES);
}

// The UEFI memory map, in a buffer we own.
struct efimap {
    UINT8 *buf;
    UINTN cap;    // bytes allocated
    UINTN size;   // bytes filled by GetMemoryMap
    UINTN key;
    UINTN descsize;
    UINT32 descver;
};

static EFI_MEMORY_DESCRIPTOR *efimap_at(struct efimap *m, UINTN i)
{
    return (EFI_MEMORY_DESCRIPTOR *)(m->buf + i * m->descsize);
}

static UINTN efimap_count(struct efimap *m)
{
    return m->size / m->descsize;
}

// Fetches the current memory map, growing the buffer as needed. Allocating
// the buffer can itself add map entries, hence the slack.
static void get_memory_map(struct efimap *m)
{
    for (;;) {
        EFI_STATUS st;
        m->size = m->cap;
        st = BS->GetMemoryMap(&m->size, (EFI_MEMORY_DESCRIPTOR *)m->buf,
                              &m->key, &m->descsize, &m->descver);
        if (st != EFI_BUFFER_TOO_SMALL) {
            check(st, L"GetMemoryMap");
            return;
        }
        if (m->buf)
            BS->FreePool(m->buf);
        m->cap = m->size + 16 * m->descsize;
        check(BS->AllocatePool(EfiLoaderData, m->cap, (void **)&m->buf),
              L"memory map buffer");
    }
}

// End of the highest memory-map entry.
static UINT64 highest_address(struct efimap *m)
{
    UINT64 top = 0;

    for (UINTN i = 0; i < efimap_count(m); i++) {
        EFI_MEMORY_DESCRIPTOR *d = efimap_at(m, i);
        UINT64 end = d->PhysicalStart + d->NumberOfPages * PAGE_SIZE;
        if (end > top)
            top = end;
    }
    return top;
}

// Page tables for the jump into the kernel, all with 2 MiB pages:
// physical [0, maxphys) at 0 and at DIRECTMAP_BASE (sharing PDPTs and PDs),
// and [kphys, kphys + span) at KERNEL_VBASE. Layout of the allocation:
// PML4, the PDPTs for the low maps, their PDs, the kernel PDPT, the kernel PD.
static UINT64 build_page_tables(UINT64 maxphys, UINT64 kphys, UINT64 span)
{
    UINT64 ngib = maxphys / GIB;
    UINT64 npdpt = (ngib + 511) / 512;
    UINT64 npages = 1 + npdpt + ngib + 2;
    UINT64 base = alloc_pages(npages, L"page tables");
    UINT64 *pml4 = (UINT64 *)base;
    UINT64 *pdpt = pml4 + 512;             // npdpt pages, indexed by GiB
    UINT64 *pd = pdpt + 512 * npdpt;       // ngib pages, indexed by 2 MiB
    UINT64 *kpdpt = pd + 512 * ngib;
    UINT64 *kpd = kpdpt + 512;
    UINT64 dm = (DIRECTMAP_BASE >> 39) & 511;

    if (dm + npdpt > ((KERNEL_VBASE >> 39) & 511))
        fatal(L"physical address space too large", EFI_UNSUPPORTED);
    ZeroMem(pml4, npages * PAGE_SIZE);
    for (UINT64 i = 0; i < ngib * 512; i++)
        pd[i] = i * BIG_PAGE | PTE_P | PTE_W | PTE_PS;
    for (UINT64 g = 0; g < ngib; g++)
        pdpt[g] = (UINT64)&pd[g * 512] | PTE_P | PTE_W;
    for (UINT64 i = 0; i < npdpt; i++) {
        pml4[i] = (UINT64)&pdpt[i * 512] | PTE_P | PTE_W;
        pml4[dm + i] = pml4[i];
    }

    pml4[(KERNEL_VBASE >> 39) & 511] = (UINT64)kpdpt | PTE_P | PTE_W;
    kpdpt[(KERNEL_VBASE >> 30) & 511] = (UINT64)kpd | PTE_P | PTE_W;
    for (UINT64 i = 0; i < span / BIG_PAGE; i++)
        kpd[((KERNEL_VBASE >> 21) & 511) + i] = (kphys + i * BIG_PAGE) | PTE_P | PTE_W | PTE_PS;
    return base;
}

// ---- After ExitBootServices: plain memory operations only, no firmware calls.

static uint32_t bootmem_type(UINT32 efitype)
{
    switch (efitype) {
    case EfiConventionalMemory:
    case EfiBootServicesCode:
    case EfiBootServicesData:
    case EfiLoaderCode:
        return BOOTMEM_USABLE;
    case EfiLoaderData:
        return BOOTMEM_LOADER;
    case EfiACPIReclaimMemory:
        return BOOTMEM_ACPI;
    case EfiACPIMemoryNVS:
        return BOOTMEM_NVS;
    case EfiMemoryMappedIO:
    case EfiMemoryMappedIOPortSpace:
        return BOOTMEM_MMIO;
    default:
        return BOOTMEM_RESERVED;
    }
}

// Insertion sort by base: the map has at most a few hundred entries.
static void sort_bootmem(struct bootmem *bm, UINT64 n)
{
    for (UINT64 i = 1; i < n; i++) {
        struct bootmem e = bm[i];
        UINT64 j = i;
        for (; j > 0 && bm[j - 1].base > e.base; j--)
            bm[j] = bm[j - 1];
        bm[j] = e;
    }
}

// Merges neighbours of the same type that touch; returns the new count.
static UINT64 merge_bootmem(struct bootmem *bm, UINT64 n)
{
    UINT64 out = 0;

    for (UINT64 i = 0; i < n; i++) {
        struct bootmem *prev = out ? &bm[out - 1] : NULL;
        if (prev && prev->type == bm[i].type &&
            prev->base + prev->npages * PAGE_SIZE == bm[i].base)
            prev->npages += bm[i].npages;
        else
            bm[out++] = bm[i];
    }
    return out;
}

static UINT64 translate_map(struct efimap *m, struct bootmem *bm)
{
    UINT64 n = efimap_count(m);

    for (UINT64 i = 0; i < n; i++) {
        EFI_MEMORY_DESCRIPTOR *d = efimap_at(m, i);
        bm[i].base = d->PhysicalStart;
        bm[i].npages = d->NumberOfPages;
        bm[i].type = bootmem_type(d->Type);
        bm[i].pad = 0;
    }
    sort_bootmem(bm, n);
    return merge_bootmem(bm, n);
}

// Switch to our page tables and enter the kernel. The kernel sets up its own
// stack and GDT at once; until then the identity map keeps the loader's code
// and stack reachable.
static void __attribute__((noreturn)) enter_kernel(UINT64 pml4, UINT64 entry, UINT64 bi)
{
    // Toggling CR4.PGE after the CR3 load also flushes global TLB entries,
    // in case the firmware's page tables used any.
    __asm__ volatile("cli\n\t"
                     "cld\n\t"
                     "mov %0, %%cr3\n\t"
                     "mov %%cr4, %%rax\n\t"
                     "mov %%rax, %%rdx\n\t"
                     "and $~0x80, %%rdx\n\t"
                     "mov %%rdx, %%cr4\n\t"
                     "mov %%rax, %%cr4\n\t"
                     "jmp *%1"
                     :: "r"(pml4), "r"(entry), "D"(bi)
                     : "rax", "rdx", "memory");
    __builtin_unreachable();
}

// ---- Main line.

// Grabs the final memory map and leaves boot services. If the map changed
// between GetMemoryMap and ExitBootServices (EFI_INVALID_PARAMETER), try again;
// the bootmem array is grown (an allocation, allowed even after a failed
// ExitBootServices) if the map no longer fits it.
static void exit_boot_services(struct efimap *m, struct bootinfo *bi, UINT64 *cap)
{
    for (int try = 0; try < 16; try++) {
        EFI_STATUS st;
        get_memory_map(m);
        if (efimap_count(m) > *cap) {
            BS->FreePages(bi->mmap, PAGES(*cap * sizeof(struct bootmem)));
            *cap = efimap_count(m) * 2;
            bi->mmap = alloc_pages(PAGES(*cap * sizeof(struct bootmem)), L"bootmem");
            continue;
        }
        st = BS->ExitBootServices(image_handle, m->key);
        if (st == EFI_SUCCESS)
            return;
        if (st != EFI_INVALID_PARAMETER)
            fatal(L"ExitBootServices", st);
    }
    fatal(L"ExitBootServices: memory map keeps changing", EFI_ABORTED);
}

static void check_paging_mode(void)
{
    UINT64 cr4;

    __asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
    if (cr4 & CR4_LA57)
        fatal(L"firmware runs with 5-level paging (unsupported)", EFI_UNSUPPORTED);
}

EFI_STATUS efi_main(EFI_HANDLE image, EFI_SYSTEM_TABLE *systab)
{
    EFI_FILE_HANDLE root;
    struct bootinfo *bi;
    const struct elf64_ehdr *eh;
    struct efimap map = {0};
    UINT64 span, maxphys, cap, pml4;

    InitializeLib(image, systab);
    image_handle = image;
    BS->SetWatchdogTimer(0, 0, 0, NULL);   // loading a big initrd may take a while
    check_paging_mode();

    bi = (struct bootinfo *)alloc_pages(PAGES(sizeof(*bi)), L"bootinfo");
    ZeroMem(bi, sizeof(*bi));
    bi->magic = BOOTINFO_MAGIC;

    root = open_esp_root();
    bi->kernel_elf = load_file(root, L"\\kernel.elf", 1, &bi->kernel_elf_size);
    eh = check_elf(bi->kernel_elf, bi->kernel_elf_size);
    span = kernel_span(eh, bi->kernel_elf_size);
    if (eh->entry < KERNEL_VBASE || eh->entry - KERNEL_VBASE >= span)
        fatal(L"kernel.elf: entry point outside the image", EFI_LOAD_ERROR);
    bi->kernel_phys = alloc_aligned(span);
    bi->kernel_size = span;
    load_segments(eh, bi->kernel_phys, span);
    bi->initrd = load_file(root, L"\\initrd.cpio", 0, &bi->initrd_size);
    load_cmdline(root, bi);
    root->Close(root);

    bi->rsdp = find_rsdp();
    find_framebuffer(&bi->fb);
    bi->trampoline = alloc_trampoline();

    // A first look at the memory map sizes the direct map and the bootmem array.
    // The direct map covers at least the low 4 GiB (local APIC, I/O APIC, ...)
    // and the frame buffer, which need not be in the memory map.
    get_memory_map(&map);
    maxphys = highest_address(&map);
    if (maxphys < 4 * GIB)
        maxphys = 4 * GIB;
    if (maxphys < bi->fb.base + bi->fb.size)
        maxphys = bi->fb.base + bi->fb.size;
    maxphys = ROUNDUP(maxphys, GIB);
    cap = efimap_count(&map) * 2 + 64;
    bi->mmap = alloc_pages(PAGES(cap * sizeof(struct bootmem)), L"bootmem");
    pml4 = build_page_tables(maxphys, bi->kernel_phys, span);

    Print(L"loader: kernel.elf %ld KiB, image at 0x%lx, initrd %ld KiB, cmdline \"%a\"\n",
          KIB(bi->kernel_elf_size), bi->kernel_phys, KIB(bi->initrd_size), bi->cmdline);

    exit_boot_services(&map, bi, &cap);
    __asm__ volatile("cli");
    bi->mmap_count = translate_map(&map, (struct bootmem *)bi->mmap);
    enter_kernel(pml4, eh->entry, (UINT64)bi);
}
