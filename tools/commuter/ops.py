"""The modelled operations, their arguments and the model's bounds.

Shared by the generator (model.py, which needs z3) and the C generator
(gen_c.py, which must not: a build needs no solver).

Two suites share the model and differ in its unit, the size of one modelled
data value (configure(), or COMMUTER_SUITE in the environment):
  page   (the default) a data value is a page, 4096 bytes, at page-aligned
         offsets, as in Commuter's model (its DATAVAL_BYTES), on which the
         SOSP 2013 figures were measured: files of 0..3 pages (up to 8 after
         writes), reads and writes of 1..2 pages, a memory access reads or
         writes its whole test page, and a file mapping's page k is the
         file's unit k;
  bytes  a data value is a byte: files of 0..3 bytes (up to 8), reads and
         writes of 1..2 bytes at any offset, memory accesses of one byte at
         offsets 0..3 of a test page; a file's page 1 always lies past its end.
Offsets, lengths and counts are in units everywhere in the model and its
data; the runner multiplies them by the unit and expands each value v to a
unit-sized pattern (tests/commuter/pattern.h; value 0 is all zeros, as a hole).
"""
import os

NNAMES = 3        # names in the one directory: f0, f1, f2
NINODES = 2       # inodes at the start of a test
NFDS = 3          # descriptor slots that may be open at the start
FDARGS = 4        # descriptor arguments range over 0..FDARGS-1
NPIPES = 1        # pipes per process at the start
NPAGES = 2        # fixed test pages per process
DATA = 8          # units of file data modelled
PIPEMAX = 6       # units a pipe holds in the model
PAGE = 4096       # bytes of a memory page
# suite -> (UNIT: bytes per data value, PAGEB: units of a test page modelled,
# at offsets 0..PAGEB-1)
SUITES = {'page': (4096, 1), 'bytes': (1, 4)}

B = ('b', 0, 1)


def configure(suite):
    """Selects the suite: SUITE, UNIT, PAGEB, PAGE_UNITS (units per memory
    page) and ARGS. Exported to the environment too, for worker processes."""
    global SUITE, UNIT, PAGEB, PAGE_UNITS, ARGS
    SUITE = suite
    UNIT, PAGEB = SUITES[suite]
    PAGE_UNITS = PAGE // UNIT
    os.environ['COMMUTER_SUITE'] = suite
    ARGS = make_args()


def make_args():
    """name -> [(arg, kind, lo, hi)], kind 'i' int or 'b' bool, in the order
    the C runner takes them."""
    return {
        'open': [('name', 'i', 0, NNAMES - 1), ('creat',) + B, ('excl',) + B, ('trunc',) + B,
                 ('anyfd',) + B, ('mode', 'i', 0, 2)],
        'link': [('old', 'i', 0, NNAMES - 1), ('new', 'i', 0, NNAMES - 1)],
        'unlink': [('name', 'i', 0, NNAMES - 1)],
        'rename': [('old', 'i', 0, NNAMES - 1), ('new', 'i', 0, NNAMES - 1)],
        'stat': [('name', 'i', 0, NNAMES - 1)],
        'fstat': [('fd', 'i', 0, FDARGS - 1)],
        'lseek': [('fd', 'i', 0, FDARGS - 1), ('off', 'i', -1, 3), ('whence', 'i', 0, 2)],
        'close': [('fd', 'i', 0, FDARGS - 1)],
        'pipe': [],
        'read': [('fd', 'i', 0, FDARGS - 1), ('count', 'i', 1, 2)],
        'write': [('fd', 'i', 0, FDARGS - 1), ('count', 'i', 1, 2), ('b0', 'i', 0, 255),
                  ('b1', 'i', 0, 255)],
        'pread': [('fd', 'i', 0, FDARGS - 1), ('count', 'i', 1, 2), ('off', 'i', 0, 3)],
        'pwrite': [('fd', 'i', 0, FDARGS - 1), ('count', 'i', 1, 2), ('off', 'i', 0, 3),
                   ('b0', 'i', 0, 255), ('b1', 'i', 0, 255)],
        'mmap': [('page', 'i', 0, NPAGES - 1), ('anon',) + B, ('fixed',) + B, ('writable',) + B,
                 ('fd', 'i', 0, FDARGS - 1), ('fpage', 'i', 0, 1)],
        'munmap': [('page', 'i', 0, NPAGES - 1)],
        'mprotect': [('page', 'i', 0, NPAGES - 1), ('prot', 'i', 0, 2)],
        'memread': [('page', 'i', 0, NPAGES - 1), ('off', 'i', 0, PAGEB - 1)],
        'memwrite': [('page', 'i', 0, NPAGES - 1), ('off', 'i', 0, PAGEB - 1), ('b0', 'i', 0, 255)],
        # posix_spawn: prog (SPAWN_*: exec the name itself, or the child program
        # that reads from / writes b0 to its descriptor cfd); at most one file
        # action fa (FA_*) on cfd: open name (O_RDWR, or O_RDWR|O_CREAT), close, or
        # dup2(src, cfd). The call waits for the child: the result is how it ended.
        'spawn': [('prog', 'i', 0, 2), ('fa', 'i', 0, 4), ('name', 'i', 0, NNAMES - 1),
                  ('cfd', 'i', 0, FDARGS - 1), ('src', 'i', 0, FDARGS - 1), ('b0', 'i', 0, 255)],
        # madvise(page, MADV_UNMAP_ASYNC): for the calling process, munmap.
        'unmapasync': [('page', 'i', 0, NPAGES - 1)],
    }


SPAWN_EXEC, SPAWN_READ, SPAWN_WRITE = 0, 1, 2
FA_NONE, FA_OPEN, FA_CREAT, FA_CLOSE, FA_DUP2 = 0, 1, 2, 3, 4
# How the spawned child ends: a read byte is its exit status (0..255); a
# write that succeeds exits 0; otherwise it dies of a signal, reported as
# 256 + the signal number: SIGUSR1 end of file, SIGUSR2 EBADF, SIGPIPE a
# write to a pipe without readers.
ST_EOF, ST_EBADF, ST_EPIPE = 256 + 10, 256 + 12, 256 + 13
DATA_ARGS = ('b0', 'b1')


def pairs():
    """Every unordered pair of operations (a with itself too), in a fixed order."""
    names = list(ARGS)
    return [(a, b) for i, a in enumerate(names) for b in names[i:]]


configure(os.environ.get('COMMUTER_SUITE', 'page'))
