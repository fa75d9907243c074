"""A bounded symbolic model of our POSIX subset, for the commutativity generator.

State (all of it symbolic at the start of a test, concrete where paths decide):
  - one directory of NNAMES names, each absent or naming an inode;
  - inodes (NINODES initial ones, plus one per call that creates a file: the
    id NINODES + call, so both orders name a created inode the same way; the
    spec lets the kernel pick any inode number, so nothing observes the order);
    each has a link count, a length, DATA bytes (bytes at or past the length
    are kept 0, the invariant that makes holes and truncation simple) and its
    three times, each 0 (as at the start) or 1 (marked for update by a call of
    the test: stat tells them apart, and two updates leave the same state);
  - two processes, each with its own descriptor table (slots 0..NFDS-1 may be
    open at the start), its own pipes and its own NPAGES test pages;
  - a descriptor is a file (inode, offset, access mode) or a pipe end;
  - a test page is unmapped, anonymous private (bytes), or a shared mapping of
    a file page (inode, file page, protection, whether the file was opened for
    writing).
Results carry what POSIX lets a caller observe, whether or not the C runner
checks it: stat's times (the runner cannot know their values), the descriptor
table a posix_spawn child starts with (the suite's child programs use one
descriptor, any program may look at all of them) and a fault's si_code.
Every operation takes (explorer, state, call, proc, args) and returns a result
tuple whose first item, a string, says its kind. Where Linux's behaviour
depends on something outside the model (blocking on an empty pipe, a store
past the end of file inside its last page) the path is pruned: no test asserts
it.
"""
from symex import And, Or, Not, If, Min, Max, eq, Prune
import ops
from ops import NNAMES, NINODES, NFDS, FDARGS, NPIPES, NPAGES, DATA, PIPEMAX, PAGEB, PAGE_UNITS
from ops import SPAWN_EXEC, SPAWN_READ, FA_OPEN, FA_CREAT, FA_CLOSE, FA_DUP2
from ops import ST_EOF, ST_EBADF, ST_EPIPE
import z3

ANYFD = 100       # slot key of a descriptor from O_ANYFD: ANYFD + call
ANYPAGE = NPAGES  # page key of a non-fixed mapping: ANYPAGE + call

NONE, FILE, PIPE_R, PIPE_W = 0, 1, 2, 3
RDONLY, WRONLY, RDWR = 0, 1, 2
PROT_NONE, PROT_R, PROT_RW = 0, 1, 2


class Vars:
    """The symbolic variables of a test, created in a fixed order."""

    def __init__(self):
        self.base = []
        self.names = []
        self.bools = set()

    def int(self, name, lo, hi):
        v = z3.Int(name)
        self.base.append(z3.And(v >= lo, v <= hi))
        self.names.append(name)
        return v

    def bool(self, name):
        self.names.append(name)
        self.bools.add(name)
        return z3.Bool(name)


FD_OPS = ('open', 'fstat', 'lseek', 'close', 'pipe', 'read', 'write', 'pread', 'pwrite', 'mmap',
          'spawn')
PAGE_OPS = ('mmap', 'munmap', 'mprotect', 'memread', 'memwrite', 'unmapasync')


def initial_state(V, ops_used):
    """The symbolic initial state; descriptors, pipes and pages only if one
    of ops_used can see them (smaller formulas, same tests)."""
    fds = any(o in FD_OPS for o in ops_used)
    pages = any(o in PAGE_OPS for o in ops_used)
    st = {'names': {}, 'inodes': {}, 'fds': {}, 'pipes': {}, 'pages': {}}
    for n in range(NNAMES):
        st['names'][n] = {'exists': V.bool(f'n{n}_exists'),
                          'ino': V.int(f'n{n}_ino', 0, NINODES - 1)}
    for i in range(NINODES):
        ln = V.int(f'i{i}_len', 0, 3)
        data = [V.int(f'd_i{i}_{j}', 0, 255) for j in range(DATA)]
        V.base += [z3.Implies(j >= ln, data[j] == 0) for j in range(DATA)]
        nl = V.int(f'i{i}_nlink', 0, NNAMES)
        V.base.append(nl == z3.Sum([z3.If(z3.And(st['names'][n]['exists'],
                                                 st['names'][n]['ino'] == i), 1, 0)
                                    for n in range(NNAMES)]))
        st['inodes'][i] = new_inode(nl, ln, data, 0)
    for p in range(2 if fds else 0):
        for k in range(NFDS):
            kind = V.int(f'p{p}_fd{k}_kind', 0, 3)
            st['fds'][p, k] = {'kind': kind,
                               'ino': V.int(f'p{p}_fd{k}_ino', 0, NINODES - 1),
                               'off': V.int(f'p{p}_fd{k}_off', 0, 3),
                               'mode': V.int(f'p{p}_fd{k}_mode', 0, 2),
                               'pipe': V.int(f'p{p}_fd{k}_pipe', 0, NPIPES - 1)}
        for j in range(NPIPES):
            ln = V.int(f'p{p}_pipe{j}_len', 0, 2)
            data = [V.int(f'd_p{p}_pipe{j}_{t}', 0, 255) for t in range(PIPEMAX)]
            V.base += [z3.Implies(t >= ln, data[t] == 0) for t in range(PIPEMAX)]
            st['pipes'][p, j] = {'len': ln, 'data': data}
    for p in range(2 if pages else 0):
        for k in range(NPAGES):
            pg = {'mapped': V.bool(f'p{p}_pg{k}_mapped'),
                  'anon': V.bool(f'p{p}_pg{k}_anon'),
                  'prot': V.int(f'p{p}_pg{k}_prot', 0, 2),
                  'ino': V.int(f'p{p}_pg{k}_ino', 0, NINODES - 1),
                  'fpage': V.int(f'p{p}_pg{k}_fpage', 0, 1),
                  'fw': V.bool(f'p{p}_pg{k}_fw'),
                  'data': [V.int(f'd_p{p}_pg{k}_{t}', 0, 255) for t in range(PAGEB)]}
            # A writable shared file mapping needs a descriptor open for writing.
            V.base.append(z3.Implies(z3.And(pg['mapped'], z3.Not(pg['anon']),
                                            pg['prot'] == PROT_RW), pg['fw']))
            st['pages'][p, k] = pg
    return st


def copy_state(st):
    out = {}
    for key, table in st.items():
        out[key] = {}
        for k, rec in table.items():
            r = dict(rec)
            if 'data' in r:
                r['data'] = list(r['data'])
            out[key][k] = r
    return out


# ---- helpers -------------------------------------------------------------

def new_inode(nlink, ln, data, t):
    return {'nlink': nlink, 'len': ln, 'data': data, 'atime': t, 'mtime': t, 'ctime': t}


def touch(ino, *times):
    """Marks times of ino for update, as POSIX requires of the call."""
    for t in times:
        ino[t] = 1


def sel(lst, idx):
    """lst[idx] for a symbolic idx (0 when out of range)."""
    out = 0
    for j in reversed(range(len(lst))):
        out = If(eq(idx, j), lst[j], out)
    return out


def fd_lookup(ex, st, p, k):
    """The descriptor p:k with a concrete kind (and inode or pipe), or None."""
    rec = st['fds'].get((p, k))
    if rec is None:
        return None
    kind = ex.pick(rec['kind'], [NONE, FILE, PIPE_R, PIPE_W])
    rec['kind'] = kind
    if kind == NONE:
        return None
    if kind == FILE:
        rec['ino'] = ex.pick(rec['ino'], inode_ids(st))
    else:
        rec['pipe'] = ex.pick(rec['pipe'], pipe_ids(st, p))
    return rec


def inode_ids(st):
    return sorted(st['inodes'])


def pipe_ids(st, p):
    return sorted(j for (q, j) in st['pipes'] if q == p)


def fd_arg(ex, st, p, fd):
    k = ex.pick(fd, list(range(FDARGS)))
    return k, fd_lookup(ex, st, p, k)


def alloc_fd(ex, st, p):
    """The lowest free descriptor slot of process p."""
    k = 0
    while True:
        rec = st['fds'].get((p, k))
        if rec is None or ex.branch(eq(rec['kind'], NONE)):
            return k
        k += 1


def has_end(st, p, j, kind):
    return Or(*[And(eq(r['kind'], kind), eq(r['pipe'], j))
                for (q, k), r in st['fds'].items() if q == p])


def name_ino(ex, st, n):
    nm = st['names'][n]
    if not ex.branch(nm['exists']):
        return None
    nm['ino'] = ex.pick(nm['ino'], inode_ids(st))
    return nm['ino']


def pick_name(ex, x):
    return ex.pick(x, list(range(NNAMES)))


def file_read(st, i, off, cnt):
    ino = st['inodes'][i]
    n = Max(0, Min(cnt, ino['len'] - off))
    return ('data', n) + tuple(If(t < n, sel(ino['data'], off + t), 0) for t in range(2))


def file_write(ex, st, i, off, cnt, b):
    ino = st['inodes'][i]
    ex.assume(off + cnt <= DATA)
    ino['data'] = [If(eq(off, j), b[0], If(And(eq(cnt, 2), eq(off + 1, j)), b[1], ino['data'][j]))
                   for j in range(DATA)]
    ino['len'] = Max(ino['len'], off + cnt)
    return ('ret', cnt)


# ---- file system calls ---------------------------------------------------

def op_open(ex, st, c, p, a):
    n = pick_name(ex, a['name'])
    anyfd = ex.branch(a['anyfd'])
    i = name_ino(ex, st, n)
    if i is not None:
        if ex.branch(a['creat']) and ex.branch(a['excl']):
            return ('err', 'EEXIST')
        if ex.branch(a['trunc']):
            if ex.branch(eq(a['mode'], RDONLY)):
                raise Prune()       # O_TRUNC with O_RDONLY: unspecified
            ino = st['inodes'][i]
            ino['len'] = 0
            ino['data'] = [0] * DATA
            touch(ino, 'mtime', 'ctime')
    else:
        if not ex.branch(a['creat']):
            return ('err', 'ENOENT')
        i = NINODES + c
        st['inodes'][i] = new_inode(1, 0, [0] * DATA, 1)
        st['names'][n] = {'exists': True, 'ino': i}
    k = ANYFD + c if anyfd else alloc_fd(ex, st, p)
    st['fds'][p, k] = {'kind': FILE, 'ino': i, 'off': 0, 'mode': a['mode'], 'pipe': 0}
    return ('anyfd', c) if anyfd else ('fd', k)


def op_link(ex, st, c, p, a):
    n1, n2 = pick_name(ex, a['old']), pick_name(ex, a['new'])
    i = name_ino(ex, st, n1)
    if i is None:
        return ('err', 'ENOENT')
    if name_ino(ex, st, n2) is not None:
        return ('err', 'EEXIST')
    st['names'][n2] = {'exists': True, 'ino': i}
    st['inodes'][i]['nlink'] = st['inodes'][i]['nlink'] + 1
    touch(st['inodes'][i], 'ctime')
    return ('ret', 0)


def op_unlink(ex, st, c, p, a):
    n = pick_name(ex, a['name'])
    i = name_ino(ex, st, n)
    if i is None:
        return ('err', 'ENOENT')
    st['names'][n] = {'exists': False, 'ino': 0}
    st['inodes'][i]['nlink'] = st['inodes'][i]['nlink'] - 1
    touch(st['inodes'][i], 'ctime')
    return ('ret', 0)


def op_rename(ex, st, c, p, a):
    n1, n2 = pick_name(ex, a['old']), pick_name(ex, a['new'])
    i = name_ino(ex, st, n1)
    if i is None:
        return ('err', 'ENOENT')
    if n1 == n2:
        return ('ret', 0)
    j = name_ino(ex, st, n2)
    if j == i:
        return ('ret', 0)           # two links to one inode: nothing happens
    if j is not None:
        st['inodes'][j]['nlink'] = st['inodes'][j]['nlink'] - 1
        touch(st['inodes'][j], 'ctime')
    # POSIX leaves open whether the renamed file's ctime changes (Linux and we
    # mark it): a stat of it may not tell the orders apart, so the model does not.
    st['names'][n2] = {'exists': True, 'ino': i}
    st['names'][n1] = {'exists': False, 'ino': 0}
    return ('ret', 0)


def stat_result(st, i):
    ino = st['inodes'][i]
    return ('stat', i, ino['nlink'], ino['len'], ino['atime'], ino['mtime'], ino['ctime'])


def op_stat(ex, st, c, p, a):
    i = name_ino(ex, st, pick_name(ex, a['name']))
    if i is None:
        return ('err', 'ENOENT')
    return stat_result(st, i)


def op_fstat(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    if fd['kind'] != FILE:
        return ('fifo', fd['pipe'])
    return stat_result(st, fd['ino'])


def op_lseek(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    if fd['kind'] != FILE:
        return ('err', 'ESPIPE')
    whence = ex.pick(a['whence'], [0, 1, 2])
    base = [0, fd['off'], st['inodes'][fd['ino']]['len']][whence]
    new = base + a['off']
    if ex.branch(new < 0):
        return ('err', 'EINVAL')
    ex.assume(new <= 5)
    fd['off'] = new
    return ('ret', new)


def op_close(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    st['fds'][p, k] = {'kind': NONE, 'ino': 0, 'off': 0, 'mode': 0, 'pipe': 0}
    return ('ret', 0)


def op_pipe(ex, st, c, p, a):
    j = NPIPES + c
    st['pipes'][p, j] = {'len': 0, 'data': [0] * PIPEMAX}
    ks = []
    for kind in (PIPE_R, PIPE_W):
        k = alloc_fd(ex, st, p)
        st['fds'][p, k] = {'kind': kind, 'ino': 0, 'off': 0, 'mode': 0, 'pipe': j}
        ks.append(k)
    return ('pipe', ks[0], ks[1])


def readable(fd):
    return fd['kind'] == PIPE_R or (fd['kind'] == FILE and fd['mode'] != WRONLY)


def writable(fd):
    return fd['kind'] == PIPE_W or (fd['kind'] == FILE and fd['mode'] != RDONLY)


def do_read(ex, st, p, fd, cnt, off):
    if fd['kind'] == FILE:
        fd['mode'] = ex.pick(fd['mode'], [RDONLY, WRONLY, RDWR])
    if not readable(fd):
        return ('err', 'EBADF')
    if fd['kind'] == FILE:
        r = file_read(st, fd['ino'], fd['off'] if off is None else off, cnt)
        touch(st['inodes'][fd['ino']], 'atime')    # even at the end of the file
        if off is None:
            fd['off'] = fd['off'] + r[1]
        return r
    pp = st['pipes'][p, fd['pipe']]
    if ex.branch(pp['len'] == 0):
        if ex.branch(has_end(st, p, fd['pipe'], PIPE_W)):
            raise Prune()           # would block
        return ('data', 0, 0, 0)
    n = Min(cnt, pp['len'])
    r = ('data', n) + tuple(If(t < n, pp['data'][t], 0) for t in range(2))
    pp['data'] = [sel(pp['data'], n + t) for t in range(PIPEMAX)]
    pp['len'] = pp['len'] - n
    return r


def do_write(ex, st, p, fd, cnt, off, b):
    if fd['kind'] == FILE:
        fd['mode'] = ex.pick(fd['mode'], [RDONLY, WRONLY, RDWR])
    if not writable(fd):
        return ('err', 'EBADF')
    if fd['kind'] == FILE:
        r = file_write(ex, st, fd['ino'], fd['off'] if off is None else off, cnt, b)
        touch(st['inodes'][fd['ino']], 'mtime', 'ctime')
        if off is None:
            fd['off'] = fd['off'] + cnt
        return r
    if not ex.branch(has_end(st, p, fd['pipe'], PIPE_R)):
        return ('err', 'EPIPE')
    pp = st['pipes'][p, fd['pipe']]
    ex.assume(pp['len'] + cnt <= PIPEMAX)
    ln = pp['len']
    pp['data'] = [If(eq(ln, t), b[0], If(And(eq(cnt, 2), eq(ln + 1, t)), b[1], pp['data'][t]))
                  for t in range(PIPEMAX)]
    pp['len'] = ln + cnt
    return ('ret', cnt)


def op_read(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    return do_read(ex, st, p, fd, a['count'], None)


def op_write(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    return do_write(ex, st, p, fd, a['count'], None, (a['b0'], a['b1']))


def op_pread(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    if fd['kind'] != FILE:
        return ('err', 'ESPIPE')
    return do_read(ex, st, p, fd, a['count'], a['off'])


def op_pwrite(ex, st, c, p, a):
    k, fd = fd_arg(ex, st, p, a['fd'])
    if fd is None:
        return ('err', 'EBADF')
    if fd['kind'] != FILE:
        return ('err', 'ESPIPE')
    return do_write(ex, st, p, fd, a['count'], a['off'], (a['b0'], a['b1']))


# ---- posix_spawn -------------------------------------------------------------

def op_spawn(ex, st, c, p, a):
    """posix_spawn with at most one file action, waiting for the child.

    The child's descriptor table is a copy of the caller's: its slots hold the
    caller's very records, since a descriptor's offset belongs to the open
    file description parent and child share (a file action's open makes a new
    one). The child's read or write then moves the caller's offset, drains or
    fills the caller's pipe, or writes the file. Pipe ends: the child holds no
    end the caller does not, and the caller keeps all of its own while it
    waits, so "a writer/reader exists" is the caller's has_end. The result
    also holds the table the child starts with (fd_table): which descriptors
    it has is the child's to observe, even if the suite's programs look at one."""
    prog = ex.pick(a['prog'], [0, 1, 2])
    fa = ex.pick(a['fa'], [0, 1, 2, 3, 4])
    child = {k: r for (q, k), r in st['fds'].items() if q == p}
    if fa in (FA_OPEN, FA_CREAT):
        cfd = ex.pick(a['cfd'], list(range(FDARGS)))
        n = pick_name(ex, a['name'])
        i = name_ino(ex, st, n)
        if i is None:
            if fa == FA_OPEN:
                return ('err', 'ENOENT')
            i = NINODES + c
            st['inodes'][i] = new_inode(1, 0, [0] * DATA, 1)
            st['names'][n] = {'exists': True, 'ino': i}
        child[cfd] = {'kind': FILE, 'ino': i, 'off': 0, 'mode': RDWR, 'pipe': 0}
    elif fa == FA_CLOSE:
        cfd = ex.pick(a['cfd'], list(range(FDARGS)))
        if fd_lookup(ex, st, p, cfd) is None:
            return ('err', 'EBADF')
        child[cfd] = None
    elif fa == FA_DUP2:
        cfd = ex.pick(a['cfd'], list(range(FDARGS)))
        src = ex.pick(a['src'], list(range(FDARGS)))
        rec = fd_lookup(ex, st, p, src)
        if rec is None:
            return ('err', 'EBADF')
        child[cfd] = rec
    if prog == SPAWN_EXEC:
        # The name itself as the program: a plain file without execute
        # permission, if it exists.
        n = pick_name(ex, a['name'])
        return ('err', 'ENOENT' if name_ino(ex, st, n) is None else 'EACCES')
    return child_status(ex, st, p, a, prog, child) + fd_table(child)


# Every slot key a process's table may hold in a test (see alloc_fd, ANYFD).
FD_KEYS = tuple(range(FDARGS + 2)) + (ANYFD, ANYFD + 1)


def fd_table(child):
    """The child's descriptors as terms: for each slot, what it refers to
    (the offset is the shared description's, not the child's own)."""
    assert set(child) <= set(FD_KEYS)
    out = ()
    for k in FD_KEYS:
        r = child.get(k)
        if r is None:
            out += (NONE, 0, 0)
            continue
        isfile = eq(r['kind'], FILE)
        out += (r['kind'], If(isfile, r['ino'], If(eq(r['kind'], NONE), 0, r['pipe'])),
                If(isfile, r['mode'], 0))
    return out


def child_status(ex, st, p, a, prog, child):
    """How the child program ends: its read or write of its descriptor cfd."""
    cfd = ex.pick(a['cfd'], list(range(FDARGS)))
    fd = child.get(cfd)
    if fd is not None and fd is st['fds'].get((p, cfd)):
        fd = fd_lookup(ex, st, p, cfd)      # still the caller's slot, kind not yet decided
    if fd is None:
        return ('status', ST_EBADF)
    if prog == SPAWN_READ:
        r = do_read(ex, st, p, fd, 1, None)
        if r[0] == 'err':
            return ('status', ST_EBADF)
        return ('status', If(eq(r[1], 0), ST_EOF, r[2]))
    r = do_write(ex, st, p, fd, 1, None, (a['b0'], 0))
    if r[0] == 'err':
        return ('status', ST_EPIPE if r[1] == 'EPIPE' else ST_EBADF)
    return ('status', 0)


# ---- memory ----------------------------------------------------------------

def page_lookup(ex, st, p, k):
    """Page p:k with concrete mapped/anon (and inode), or None if unmapped."""
    pg = st['pages'][p, k]
    if not ex.branch(pg['mapped']):
        pg['mapped'] = False
        return None
    pg['mapped'] = True
    pg['anon'] = ex.branch(pg['anon'])
    if not pg['anon']:
        pg['ino'] = ex.pick(pg['ino'], inode_ids(st))
    return pg


def op_mmap(ex, st, c, p, a):
    anon = ex.branch(a['anon'])
    fixed = ex.branch(a['fixed'])
    w = ex.branch(a['writable'])
    k = ex.pick(a['page'], list(range(NPAGES))) if fixed else ANYPAGE + c
    prot = PROT_RW if w else PROT_R
    if anon:
        pg = {'mapped': True, 'anon': True, 'prot': prot, 'ino': 0, 'fpage': 0,
              'fw': False, 'data': [0] * PAGEB}
    else:
        _, fd = fd_arg(ex, st, p, a['fd'])
        if fd is None:
            return ('err', 'EBADF')
        if fd['kind'] == PIPE_W:
            return ('err', 'EACCES')
        if fd['kind'] == PIPE_R:
            return ('err', 'EACCES') if w else ('err', 'ENODEV')
        mode = ex.pick(fd['mode'], [RDONLY, WRONLY, RDWR])
        fd['mode'] = mode
        if w and mode != RDWR:
            return ('err', 'EACCES')
        if mode == WRONLY:
            return ('err', 'EACCES')
        pg = {'mapped': True, 'anon': False, 'prot': prot, 'ino': fd['ino'],
              'fpage': a['fpage'], 'fw': mode == RDWR, 'data': [0] * PAGEB}
    st['pages'][p, k] = pg
    return ('addr', k if fixed else 'any')


def op_munmap(ex, st, c, p, a):
    k = ex.pick(a['page'], list(range(NPAGES)))
    st['pages'][p, k] = {'mapped': False, 'anon': False, 'prot': 0, 'ino': 0, 'fpage': 0,
                         'fw': False, 'data': [0] * PAGEB}
    return ('ret', 0)


def op_unmapasync(ex, st, c, p, a):
    # MADV_UNMAP_ASYNC differs from munmap only for other threads that still
    # hold translations on other CPUs; when the call returns, every later
    # operation (and the caller's accesses) sees the range unmapped.
    return op_munmap(ex, st, c, p, a)


def op_mprotect(ex, st, c, p, a):
    k = ex.pick(a['page'], list(range(NPAGES)))
    pg = page_lookup(ex, st, p, k)
    if pg is None:
        return ('err', 'ENOMEM')
    prot = ex.pick(a['prot'], [PROT_NONE, PROT_R, PROT_RW])
    if not pg['anon'] and prot == PROT_RW and not ex.branch(pg['fw']):
        return ('err', 'EACCES')
    pg['prot'] = prot
    return ('ret', 0)


def file_page_ok(ex, st, pg):
    """Whether a file page is inside the file (else an access gets SIGBUS)."""
    ln = st['inodes'][pg['ino']]['len']
    if PAGE_UNITS >= DATA:          # bytes: page 1 lies past any modelled file
        return ex.branch(And(eq(pg['fpage'], 0), ln > 0))
    return ex.branch(pg['fpage'] * PAGE_UNITS < ln)


def file_unit(pg, off):
    """The file unit that unit off of a mapped file page shows."""
    if PAGE_UNITS >= DATA:          # bytes: only page 0 can be inside the file
        return off
    return pg['fpage'] * PAGE_UNITS + off


def op_memread(ex, st, c, p, a):
    k = ex.pick(a['page'], list(range(NPAGES)))
    pg = page_lookup(ex, st, p, k)
    if pg is None:
        return ('sig', 'SIGSEGV', 'SEGV_MAPERR')
    if ex.branch(eq(pg['prot'], PROT_NONE)):
        return ('sig', 'SIGSEGV', 'SEGV_ACCERR')
    if pg['anon']:
        return ('val', sel(pg['data'], a['off']))
    if not file_page_ok(ex, st, pg):
        return ('sig', 'SIGBUS', 'BUS_ADRERR')
    return ('val', sel(st['inodes'][pg['ino']]['data'], file_unit(pg, a['off'])))


def op_memwrite(ex, st, c, p, a):
    k = ex.pick(a['page'], list(range(NPAGES)))
    pg = page_lookup(ex, st, p, k)
    if pg is None:
        return ('sig', 'SIGSEGV', 'SEGV_MAPERR')
    if not ex.branch(eq(pg['prot'], PROT_RW)):
        return ('sig', 'SIGSEGV', 'SEGV_ACCERR')
    off, b = a['off'], a['b0']
    if pg['anon']:
        pg['data'] = [If(eq(off, t), b, pg['data'][t]) for t in range(PAGEB)]
        return ('ok',)
    if not file_page_ok(ex, st, pg):
        return ('sig', 'SIGBUS', 'BUS_ADRERR')
    ino = st['inodes'][pg['ino']]
    pos = file_unit(pg, off)
    ex.assume(pos < ino['len'])     # a store past EOF in the last page: unspecified
    ino['data'] = [If(eq(pos, j), b, ino['data'][j]) for j in range(DATA)]
    return ('ok',)


# ---- operations ------------------------------------------------------------
# name -> (function, argument specs from ops.py)
OPS = {name: (globals()['op_' + name], spec) for name, spec in ops.ARGS.items()}
DATA_ARGS = ops.DATA_ARGS
# Operations that touch only the file system: which process runs them does not
# matter, so a pair with one of them runs its calls in different processes.
FS_ONLY = ('link', 'unlink', 'rename', 'stat')


def symmetry(args):
    """Constraints that fix call 0's choice among interchangeable names/pages."""
    out = []
    for key in ('name', 'old', 'page'):
        if key in args:
            out.append(args[key] == 0)
    if 'new' in args:
        out.append(args['new'] <= 1)
    return out


def make_args(V, c, op):
    args = {}
    for name, kind, lo, hi in OPS[op][1]:
        vname = f'a{c}_{name}' if name not in DATA_ARGS else f'd_a{c}_{name}'
        args[name] = V.bool(vname) if kind == 'b' else V.int(vname, lo, hi)
    return args


# ---- equivalence -----------------------------------------------------------
TIMES = ('atime', 'mtime', 'ctime')


def result_eq(r1, r2):
    if r1[0] != r2[0] or len(r1) != len(r2):
        return False
    return And(*[eq(x, y) for x, y in zip(r1[1:], r2[1:])])


def reachable_inode(st, i):
    return Or(*([And(nm['exists'], eq(nm['ino'], i)) for nm in st['names'].values()] +
                [And(eq(r['kind'], FILE), eq(r['ino'], i)) for r in st['fds'].values()] +
                [And(pg['mapped'], Not(pg['anon']), eq(pg['ino'], i))
                 for pg in st['pages'].values()]))


def same(x, y):
    """x == y, short-cutting the common case of the very same term."""
    if x is y:
        return True
    if isinstance(x, z3.ExprRef) and isinstance(y, z3.ExprRef) and x.get_id() == y.get_id():
        return True
    return eq(x, y)


def all_same(xs, ys):
    return And(*[same(x, y) for x, y in zip(xs, ys)])


def state_eq(s, t):
    """s and t are indistinguishable by any later sequence of operations."""
    cs = []
    for n in range(NNAMES):
        a, b = s['names'][n], t['names'][n]
        cs += [same(a['exists'], b['exists']), Or(Not(a['exists']), same(a['ino'], b['ino']))]
    for i in sorted(set(s['inodes']) | set(t['inodes'])):
        a, b = s['inodes'].get(i), t['inodes'].get(i)
        if a is None or b is None:
            cs.append(Not(reachable_inode(s if a else t, i)))
            continue
        eqs = And(same(a['nlink'], b['nlink']), same(a['len'], b['len']),
                  all_same(a['data'], b['data']),
                  all_same([a[t] for t in TIMES], [b[t] for t in TIMES]))
        if eqs is not True:
            cs.append(Or(And(Not(reachable_inode(s, i)), Not(reachable_inode(t, i))), eqs))
    free = {'kind': NONE, 'ino': 0, 'off': 0, 'mode': 0, 'pipe': 0}
    for key in sorted(set(s['fds']) | set(t['fds'])):
        a, b = s['fds'].get(key, free), t['fds'].get(key, free)
        cs += [same(a['kind'], b['kind']),
               Or(Not(eq(a['kind'], FILE)),
                  And(same(a['ino'], b['ino']), same(a['off'], b['off']),
                      same(a['mode'], b['mode']))),
               Or(Not(Or(eq(a['kind'], PIPE_R), eq(a['kind'], PIPE_W))),
                  same(a['pipe'], b['pipe']))]
    for key in sorted(set(s['pipes']) | set(t['pipes'])):
        a, b = s['pipes'].get(key), t['pipes'].get(key)
        p, j = key
        if a is None or b is None:
            x = s if a else t
            cs.append(Not(Or(has_end(x, p, j, PIPE_R), has_end(x, p, j, PIPE_W))))
            continue
        eqs = And(same(a['len'], b['len']), all_same(a['data'], b['data']))
        if eqs is not True:
            live = Or(has_end(s, p, j, PIPE_R), has_end(s, p, j, PIPE_W),
                      has_end(t, p, j, PIPE_R), has_end(t, p, j, PIPE_W))
            cs.append(Or(Not(live), eqs))
    unmapped = {'mapped': False}
    for key in sorted(set(s['pages']) | set(t['pages'])):
        a, b = s['pages'].get(key, unmapped), t['pages'].get(key, unmapped)
        if a is unmapped or b is unmapped:
            cs.append(And(Not(a['mapped']), Not(b['mapped'])))
            continue
        if all(same(a[f], b[f]) is True for f in ('mapped', 'anon', 'prot', 'ino', 'fpage', 'fw')) \
                and all_same(a['data'], b['data']) is True:
            continue
        cs += [same(a['mapped'], b['mapped']),
               Or(Not(a['mapped']),
                  And(same(a['anon'], b['anon']), same(a['prot'], b['prot']),
                      If(a['anon'], all_same(a['data'], b['data']),
                         And(same(a['ino'], b['ino']), same(a['fpage'], b['fpage']),
                             same(a['fw'], b['fw'])))))]
    return And(*cs)
