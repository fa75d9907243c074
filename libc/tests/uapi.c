// Our public headers against the kernel's uapi/abi.h: every constant both
// define has the same value, and every structure both define has the same
// size and field offsets (libc duplicates them by value; the two must agree).
// abi.h is included first with its structures renamed, its values are
// captured, and its macros are removed before our headers come in.
#include <stddef.h>

#define timespec kernel_timespec
#define timeval kernel_timeval
#define utsname kernel_utsname
#define winsize kernel_winsize
#define termios kernel_termios
#define iovec kernel_iovec
#define pollfd kernel_pollfd
#include "../../kernel/uapi/abi.h"
#undef timespec
#undef timeval
#undef utsname
#undef winsize
#undef termios
#undef iovec
#undef pollfd

static const struct {
    const char *name;
    long value;
} kernel[] = {
    {"PROT_NONE", PROT_NONE},
    {"PROT_READ", PROT_READ},
    {"PROT_WRITE", PROT_WRITE},
    {"PROT_EXEC", PROT_EXEC},
    {"MAP_SHARED", MAP_SHARED},
    {"MAP_PRIVATE", MAP_PRIVATE},
    {"MAP_FIXED", MAP_FIXED},
    {"MAP_ANONYMOUS", MAP_ANONYMOUS},
    {"MAP_NORESERVE", MAP_NORESERVE},
    {"MAP_FIXED_NOREPLACE", MAP_FIXED_NOREPLACE},
    {"CLOCK_REALTIME", CLOCK_REALTIME},
    {"CLOCK_MONOTONIC", CLOCK_MONOTONIC},
    {"TIMER_ABSTIME", TIMER_ABSTIME},
    {"WNOHANG", WNOHANG},
    {"SIGILL", SIGILL},
    {"SIGTRAP", SIGTRAP},
    {"SIGBUS", SIGBUS},
    {"SIGFPE", SIGFPE},
    {"SIGKILL", SIGKILL},
    {"SIGSEGV", SIGSEGV},
    {"SIG_BLOCK", SIG_BLOCK},
    {"SIG_UNBLOCK", SIG_UNBLOCK},
    {"SIG_SETMASK", SIG_SETMASK},
    {"TCGETS", TCGETS},
    {"TIOCGWINSZ", TIOCGWINSZ},
    {"AT_NULL", AT_NULL},
    {"AT_PHDR", AT_PHDR},
    {"AT_PHENT", AT_PHENT},
    {"AT_PHNUM", AT_PHNUM},
    {"AT_PAGESZ", AT_PAGESZ},
    {"AT_BASE", AT_BASE},
    {"AT_ENTRY", AT_ENTRY},
    {"AT_UID", AT_UID},
    {"AT_EUID", AT_EUID},
    {"AT_GID", AT_GID},
    {"AT_EGID", AT_EGID},
    {"AT_HWCAP", AT_HWCAP},
    {"AT_CLKTCK", AT_CLKTCK},
    {"AT_SECURE", AT_SECURE},
    {"AT_RANDOM", AT_RANDOM},
    {"AT_EXECFN", AT_EXECFN},
    {"POLLIN", POLLIN},
    {"POLLPRI", POLLPRI},
    {"POLLOUT", POLLOUT},
    {"POLLERR", POLLERR},
    {"POLLHUP", POLLHUP},
    {"POLLNVAL", POLLNVAL},
    {"POLLRDNORM", POLLRDNORM},
    {"POLLWRNORM", POLLWRNORM},
};

static const size_t kernel_sizes[] = {
    sizeof(struct kernel_timespec), sizeof(struct kernel_timeval), sizeof(struct kernel_utsname),
    sizeof(struct kernel_winsize), offsetof(struct kernel_termios, c_cc) + 19, sizeof(struct kernel_iovec),
    offsetof(struct kernel_timespec, tv_nsec), offsetof(struct kernel_timeval, tv_usec),
    offsetof(struct kernel_utsname, machine), offsetof(struct kernel_winsize, ws_col),
    offsetof(struct kernel_termios, c_line), offsetof(struct kernel_termios, c_cc),
    offsetof(struct kernel_iovec, iov_len),
    sizeof(struct kernel_pollfd), offsetof(struct kernel_pollfd, revents),
};

#undef PROT_NONE
#undef PROT_READ
#undef PROT_WRITE
#undef PROT_EXEC
#undef MAP_SHARED
#undef MAP_PRIVATE
#undef MAP_FIXED
#undef MAP_ANONYMOUS
#undef MAP_NORESERVE
#undef MAP_FIXED_NOREPLACE
#undef CLOCK_REALTIME
#undef CLOCK_MONOTONIC
#undef TIMER_ABSTIME
#undef WNOHANG
#undef SIGILL
#undef SIGTRAP
#undef SIGBUS
#undef SIGFPE
#undef SIGKILL
#undef SIGSEGV
#undef SIG_BLOCK
#undef SIG_UNBLOCK
#undef SIG_SETMASK
#undef TCGETS
#undef TIOCGWINSZ
#undef AT_NULL
#undef AT_PHDR
#undef AT_PHENT
#undef AT_PHNUM
#undef AT_PAGESZ
#undef AT_BASE
#undef AT_ENTRY
#undef AT_UID
#undef AT_EUID
#undef AT_GID
#undef AT_EGID
#undef AT_HWCAP
#undef AT_CLKTCK
#undef AT_SECURE
#undef AT_RANDOM
#undef AT_EXECFN
#undef ARCH_SET_GS
#undef ARCH_SET_FS
#undef ARCH_GET_FS
#undef ARCH_GET_GS
#undef W_EXITCODE
#undef NSIG
#undef GRND_NONBLOCK
#undef GRND_RANDOM
#undef GRND_INSECURE
#undef AT_FLAGS
#undef AT_PLATFORM
#undef POLLIN
#undef POLLPRI
#undef POLLOUT
#undef POLLERR
#undef POLLHUP
#undef POLLNVAL
#undef POLLRDNORM
#undef POLLWRNORM

#include <elf.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include "tap.h"

static const long ours[] = {
    PROT_NONE,
    PROT_READ,
    PROT_WRITE,
    PROT_EXEC,
    MAP_SHARED,
    MAP_PRIVATE,
    MAP_FIXED,
    MAP_ANONYMOUS,
    MAP_NORESERVE,
    MAP_FIXED_NOREPLACE,
    CLOCK_REALTIME,
    CLOCK_MONOTONIC,
    TIMER_ABSTIME,
    WNOHANG,
    SIGILL,
    SIGTRAP,
    SIGBUS,
    SIGFPE,
    SIGKILL,
    SIGSEGV,
    SIG_BLOCK,
    SIG_UNBLOCK,
    SIG_SETMASK,
    TCGETS,
    TIOCGWINSZ,
    AT_NULL,
    AT_PHDR,
    AT_PHENT,
    AT_PHNUM,
    AT_PAGESZ,
    AT_BASE,
    AT_ENTRY,
    AT_UID,
    AT_EUID,
    AT_GID,
    AT_EGID,
    AT_HWCAP,
    AT_CLKTCK,
    AT_SECURE,
    AT_RANDOM,
    AT_EXECFN,
    POLLIN,
    POLLPRI,
    POLLOUT,
    POLLERR,
    POLLHUP,
    POLLNVAL,
    POLLRDNORM,
    POLLWRNORM,
};

int main(void)
{
    int bad = 0;
    for (size_t i = 0; i < sizeof ours / sizeof *ours; i++)
        if (ours[i] != kernel[i].value) {
            printf("# %s: ours %ld, kernel %ld\n", kernel[i].name, ours[i], kernel[i].value);
            bad++;
        }
    check(bad == 0, "%zu constants shared with uapi/abi.h agree (%d differ)",
          sizeof ours / sizeof *ours, bad);
    static const size_t sizes[] = {
        sizeof(struct timespec), sizeof(struct timeval), sizeof(struct utsname),
        sizeof(struct winsize), offsetof(struct termios, c_cc) + 19, sizeof(struct iovec),
        offsetof(struct timespec, tv_nsec), offsetof(struct timeval, tv_usec),
        offsetof(struct utsname, machine), offsetof(struct winsize, ws_col),
        offsetof(struct termios, c_line), offsetof(struct termios, c_cc),
        offsetof(struct iovec, iov_len),
        sizeof(struct pollfd), offsetof(struct pollfd, revents),
    };
    static const char *const what[] = {
        "struct timespec size", "struct timeval size", "struct utsname size", "struct winsize size",
        "struct termios kernel part", "struct iovec size", "timespec.tv_nsec", "timeval.tv_usec",
        "utsname.machine", "winsize.ws_col", "termios.c_line", "termios.c_cc", "iovec.iov_len",
        "struct pollfd size", "pollfd.revents",
    };
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++)
        check(sizes[i] == kernel_sizes[i], "%s agrees with abi.h (%zu, %zu)", what[i], sizes[i],
              kernel_sizes[i]);
    return tap_done();
}
