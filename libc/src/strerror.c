// Error-number strings: strerror, strerror_r.
#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const errors[] = {
    [0] = "Success", [EPERM] = "Operation not permitted", [ENOENT] = "No such file or directory",
    [ESRCH] = "No such process", [EINTR] = "Interrupted system call", [EIO] = "Input/output error",
    [ENXIO] = "No such device or address", [E2BIG] = "Argument list too long",
    [ENOEXEC] = "Exec format error", [EBADF] = "Bad file descriptor",
    [ECHILD] = "No child processes", [EAGAIN] = "Resource temporarily unavailable",
    [ENOMEM] = "Cannot allocate memory", [EACCES] = "Permission denied",
    [EFAULT] = "Bad address", [ENOTBLK] = "Block device required",
    [EBUSY] = "Device or resource busy", [EEXIST] = "File exists",
    [EXDEV] = "Invalid cross-device link", [ENODEV] = "No such device",
    [ENOTDIR] = "Not a directory", [EISDIR] = "Is a directory", [EINVAL] = "Invalid argument",
    [ENFILE] = "Too many open files in system", [EMFILE] = "Too many open files",
    [ENOTTY] = "Inappropriate ioctl for device", [ETXTBSY] = "Text file busy",
    [EFBIG] = "File too large", [ENOSPC] = "No space left on device",
    [ESPIPE] = "Illegal seek", [EROFS] = "Read-only file system", [EMLINK] = "Too many links",
    [EPIPE] = "Broken pipe", [EDOM] = "Numerical argument out of domain",
    [ERANGE] = "Numerical result out of range", [EDEADLK] = "Resource deadlock avoided",
    [ENAMETOOLONG] = "File name too long", [ENOLCK] = "No locks available",
    [ENOSYS] = "Function not implemented", [ENOTEMPTY] = "Directory not empty",
    [ELOOP] = "Too many levels of symbolic links", [ENOMSG] = "No message of desired type",
    [EOVERFLOW] = "Value too large for defined data type", [EILSEQ] = "Invalid or incomplete multibyte or wide character",
    [ENOTSOCK] = "Socket operation on non-socket", [EOPNOTSUPP] = "Operation not supported",
    [EADDRINUSE] = "Address already in use", [ECONNREFUSED] = "Connection refused",
    [ETIMEDOUT] = "Connection timed out", [ECONNRESET] = "Connection reset by peer",
    [ECANCELED] = "Operation canceled",
};

int strerror_r(int err, char *buf, size_t len)
{
    const char *s = err >= 0 && err < (int)(sizeof errors / sizeof *errors) ? errors[err] : NULL;
    if (!s) {
        snprintf(buf, len, "Unknown error %d", err);
        return EINVAL;
    }
    if (strlcpy(buf, s, len) >= len)
        return ERANGE;
    return 0;
}

char *strerror(int err)
{
    if (err >= 0 && err < (int)(sizeof errors / sizeof *errors) && errors[err])
        return (char *)errors[err];
    static _Thread_local char buf[32];
    snprintf(buf, sizeof buf, "Unknown error %d", err);
    return buf;
}

