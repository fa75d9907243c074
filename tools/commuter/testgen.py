#!/usr/bin/python3
"""Generate the pairwise commutativity test suite from the model (model.py).

For each unordered pair of modelled operations, run both orders (A then B, B
then A) from one symbolic initial state with symbolic arguments, enumerate
every feasible path (symex.py), and split each path on SIM commutativity:
both calls return the same results in both orders and the final states are
indistinguishable (model.state_eq). Commuting paths give commuting tests (run
in both orders); non-commuting paths give sequential tests (one order, the
model's results). Each test is a concrete z3 model of the path condition;
further tests of a path block the earlier ones' values of the variables the
path depends on.

usage: testgen.py [--suite page|bytes] [-j JOBS] [--out DIR] [--pairs open/link,...]
                  [--sample N [--seed S]] [--check]
--suite picks the model's unit (ops.py): page (the default) writes
tests/commuter/data/ and summary.json, bytes data-bytes/ and summary-bytes.json.
Writes DIR/<a>_<b>.json (one test per line) and the summary beside DIR.
--check regenerates the given pairs and compares with the files in DIR.
--sample N takes N pairs drawn at random over all pairs (seed S, printed), so
that repeated checks with different seeds cover every pair in time.
"""
import argparse
import json
import multiprocessing
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import ops  # noqa: E402
from ops import pairs  # noqa: E402

# suite -> (data directory under tests/commuter, summary file beside it)
SUITE_FILES = {'page': ('data', 'summary.json'), 'bytes': ('data-bytes', 'summary-bytes.json')}

MAX_PATHS = 500              # paths explored per pair
COMMUTE_PER_PAIR = 150       # commuting tests per pair
COMMUTE_PER_PATH = 8
SEQ_PER_PAIR = 30            # sequential tests per pair
SEQ_PER_PATH = 1
SOLVE_TIMEOUT_MS = 10000
# Arguments whose values split a pair's exploration into strata of equal path
# budgets: without them the capped search of a pair with posix_spawn, whose
# tree is wide at the top (program x file action), sees only a few corners.
STRATA = {'spawn': ('prog', 'fa')}
# Initial-state variables that give a state its shape (see tests_for).
SHAPE = ('_exists', '_kind', '_mapped', '_anon', '_prot')


def const_names(terms):
    """Names of the uninterpreted constants in terms, in first-seen order."""
    import z3
    seen, out, stack = set(), [], list(reversed(terms))
    while stack:
        t = stack.pop()
        if t.get_id() in seen:
            continue
        seen.add(t.get_id())
        if z3.is_const(t) and t.decl().kind() == z3.Z3_OP_UNINTERPRETED:
            out.append(t.decl().name())
        else:
            stack.extend(reversed(t.children()))
    return out


class Pair:
    def __init__(self, a, b):
        import z3
        import model
        from symex import And
        self.a, self.b = a, b
        V = model.Vars()
        self.V = V
        st0 = model.initial_state(V, (a, b))
        argsA = model.make_args(V, 0, a)
        argsB = model.make_args(V, 1, b)
        procB = V.int('a1_proc', 0, 1)
        V.base += model.symmetry(argsA)
        if a in model.FS_ONLY or b in model.FS_ONLY:
            V.base.append(procB == 1)
        fA, fB = model.OPS[a][0], model.OPS[b][0]

        def run(ex):
            pB = ex.pick(procB, [0, 1])
            s = model.copy_state(st0)
            rA = fA(ex, s, 0, 0, argsA)
            rB = fB(ex, s, 1, pB, argsB)
            t = model.copy_state(st0)
            rB2 = fB(ex, t, 1, pB, argsB)
            rA2 = fA(ex, t, 0, 0, argsA)
            same = And(model.result_eq(rA, rA2), model.result_eq(rB, rB2),
                       model.state_eq(s, t))
            return {'commute': ex.branch(same), 'procB': pB, 'res': (rA, rB)}
        self.run = run
        self.z3 = z3

    def strata(self):
        """The constraints that split the pair's paths into strata explored
        with equal budgets: each combination of the STRATA arguments' values."""
        import itertools
        import model
        out = [[]]
        for c, op in enumerate((self.a, self.b)):
            for name in STRATA.get(op, ()):
                lo, hi = next((s[2], s[3]) for s in model.OPS[op][1] if s[0] == name)
                v = self.z3.Int(f'a{c}_{name}')
                out = [cs + [v == x] for cs, x in itertools.product(out, range(lo, hi + 1))]
        return out

    def explore(self):
        from symex import Explorer, PathCap
        strata = self.strata()
        paths, capped, unknowns = [], False, 0
        for k, cs in enumerate(strata):
            seed = f'{self.a}/{self.b}' + (f'/{k}' if len(strata) > 1 else '')
            ex = Explorer(self.V.base + cs, max(1, MAX_PATHS // len(strata)), seed)
            try:
                for pc, out in ex.explore(self.run):
                    paths.append((pc, out))
            except PathCap:
                capped = True
            unknowns += ex.unknowns
        return paths, capped, unknowns

    # ---- concrete tests ----------------------------------------------------
    def solver(self):
        """One solver per pair for all its tests: the base and the preferred
        data values (each behind an assumption literal) are added once."""
        if hasattr(self, '_solver'):
            return self._solver
        import model
        z3 = self.z3
        s = z3.Solver()
        s.set('timeout', SOLVE_TIMEOUT_MS)
        s.add(*self.V.base)
        data = [n for n in self.V.names if n.startswith('d_')]
        prefs = [(n, self.pref(n, 0x41 + k % 58)) for k, n in enumerate(data)]
        # Non-empty files and pipes where the path allows: reads then see data.
        prefs += [(f'i{i}_len', z3.IntVal(3 - i)) for i in range(model.NINODES)]
        prefs += [(n, z3.IntVal(2)) for n in self.V.names if n.endswith('_len') and 'pipe' in n]
        # Where the path leaves them free, open descriptors (files read-write,
        # a pipe's read end), mapped pages, existing names and two-byte
        # transfers: a test then exercises more than EBADF and SIGSEGV.
        rich = {'_fd0_kind': 1, '_fd1_kind': 1, '_fd2_kind': 2, '_fd0_mode': 2, '_fd1_mode': 0,
                '_fd0_off': 1, '_pg0_mapped': True, '_pg1_mapped': True, '_pg0_anon': True,
                '_pg0_prot': 2, '_pg1_prot': 2, '_pg1_fw': True, '_exists': True, '_count': 2}
        for n in self.V.names:
            for suffix, v in rich.items():
                if n.endswith(suffix) and not n.startswith('n2'):
                    prefs.append((n, z3.BoolVal(v) if isinstance(v, bool) else z3.IntVal(v)))
        self.lits = []
        for k, (name, val) in enumerate(prefs):
            lit = z3.Bool(f'pref{k}')
            s.add(z3.Implies(lit, self.var(name) == val))
            self.lits.append(lit)
        self._solver = s
        return s

    def solve(self, pc, blocks):
        """A model of base + pc + blocks, preferring the data values."""
        z3 = self.z3
        s = self.solver()
        s.push()
        try:
            s.add(*pc)
            s.add(*blocks)
            lits = list(self.lits)
            for _ in range(8):
                r = s.check(*lits)
                if r == z3.sat:
                    return s.model(), 'sat'
                if r == z3.unknown:
                    return None, 'unknown'
                core = {c.get_id() for c in s.unsat_core()}
                if not core:
                    return None, 'unsat'
                lits = [x for x in lits if x.get_id() not in core]
            r = s.check()
            return (s.model(), 'sat') if r == z3.sat else (None, str(r))
        finally:
            s.pop()

    def tests_for(self, pc, out, limit):
        z3 = self.z3
        # Block on what the path depends on, and on the shape of the state the
        # pair's calls look at: a pair with few paths then also gets tests
        # from differently shaped states (munmap of an anonymous page, a file
        # page, nothing), which a kernel handles on different code paths.
        keys = [n for n in const_names(pc) if not n.startswith('d_')]
        keys += [n for n in self.V.names if n.endswith(SHAPE) and n not in keys]
        blocks, tests, unknown = [], [], 0
        for _ in range(limit):
            m, status = self.solve(pc, blocks)
            if status == 'unknown':
                unknown += 1
            if m is None:
                break
            tests.append(self.concrete(m, out))
            vals = [self.var(k) == m.eval(self.var(k), model_completion=True) for k in keys]
            if not vals:
                break
            blocks.append(z3.Not(z3.And(*vals)))
        return tests, unknown

    def pref(self, name, val):
        """The value a data byte should take: distinct ones make tests sharper
        (a read that sees the other call's write, or not, returns different
        bytes); bytes past the end of a file or pipe stay 0."""
        z3 = self.z3
        parts = name.split('_')
        if parts[1].startswith('i'):            # d_i<i>_<j>: file data
            return z3.If(int(parts[2]) < z3.Int(f'{parts[1]}_len'), val, 0)
        if len(parts) == 4 and parts[2].startswith('pipe'):   # d_p<p>_pipe<j>_<t>
            return z3.If(int(parts[3]) < z3.Int(f'{parts[1]}_{parts[2]}_len'), val, 0)
        return z3.IntVal(val)

    def var(self, name):
        z3 = self.z3
        return z3.Bool(name) if name in self.V.bools else z3.Int(name)

    def concrete(self, m, out):
        import model
        z3 = self.z3

        def val(x):
            if isinstance(x, z3.ExprRef):
                v = m.eval(x, model_completion=True)
                return z3.is_true(v) if z3.is_bool(v) else v.as_long()
            return x

        def named(name):
            return val(self.var(name))

        procs = sorted({0, out['procB']})
        setup = {'names': [], 'inodes': [], 'procs': []}
        used_inodes = set()
        for n in range(model.NNAMES):
            if named(f'n{n}_exists'):
                i = named(f'n{n}_ino')
                setup['names'].append({'name': n, 'ino': i})
                used_inodes.add(i)
        for p in procs:
            fds, pipes, pages = [], [], []
            used_pipes = set()
            for k in range(model.NFDS):
                kind = named(f'p{p}_fd{k}_kind')
                if kind == model.FILE:
                    i = named(f'p{p}_fd{k}_ino')
                    used_inodes.add(i)
                    fds.append({'fd': k, 'kind': 'file', 'ino': i,
                                'off': named(f'p{p}_fd{k}_off'),
                                'mode': named(f'p{p}_fd{k}_mode')})
                elif kind in (model.PIPE_R, model.PIPE_W):
                    j = named(f'p{p}_fd{k}_pipe')
                    used_pipes.add(j)
                    fds.append({'fd': k, 'kind': 'pipe_r' if kind == model.PIPE_R else 'pipe_w',
                                'pipe': j})
            for j in sorted(used_pipes):
                ln = named(f'p{p}_pipe{j}_len')
                pipes.append({'pipe': j, 'data': [named(f'd_p{p}_pipe{j}_{t}') for t in range(ln)]})
            for k in range(model.NPAGES):
                if not named(f'p{p}_pg{k}_mapped'):
                    continue
                pg = {'page': k, 'prot': named(f'p{p}_pg{k}_prot')}
                if named(f'p{p}_pg{k}_anon'):
                    pg['anon'] = True
                    pg['data'] = [named(f'd_p{p}_pg{k}_{t}') for t in range(model.PAGEB)]
                else:
                    i = named(f'p{p}_pg{k}_ino')
                    used_inodes.add(i)
                    pg.update(anon=False, ino=i, fpage=named(f'p{p}_pg{k}_fpage'),
                              fw=named(f'p{p}_pg{k}_fw'))
                pages.append(pg)
            setup['procs'].append({'proc': p, 'fds': fds, 'pipes': pipes, 'pages': pages})
        for i in sorted(used_inodes):
            ln = named(f'i{i}_len')
            setup['inodes'].append({'ino': i, 'data': [named(f'd_i{i}_{j}') for j in range(ln)]})

        calls = []
        for c, op in enumerate((self.a, self.b)):
            args = {}
            for name, kind, lo, hi in model.OPS[op][1]:
                vname = f'a{c}_{name}' if name not in model.DATA_ARGS else f'd_a{c}_{name}'
                args[name] = named(vname)
            calls.append({'op': op, 'proc': 0 if c == 0 else out['procB'], 'args': args})
        expect = [self.result(r, val) for r in out['res']]
        return {'setup': setup, 'calls': calls, 'expect': expect}

    @staticmethod
    def result(r, val):
        import model
        kind = r[0]
        if kind == 'err':
            return {'err': r[1]}
        if kind in ('ret', 'fd'):
            return {'ret': val(r[1])}
        if kind == 'anyfd':
            return {'anyfd': True}
        if kind == 'data':
            n = val(r[1])
            return {'ret': n, 'data': [val(x) for x in r[2:2 + n]]}
        if kind == 'stat':
            i = r[1]
            ino = f'i{i}' if i < model.NINODES else f'c{i - model.NINODES}'
            return {'stat': {'ino': ino, 'nlink': val(r[2]), 'size': val(r[3])}}
        if kind == 'fifo':
            return {'fifo': True}
        if kind == 'pipe':
            return {'ret': 0, 'fds': [r[1], r[2]]}
        if kind == 'addr':
            return {'addr': r[1]}
        if kind == 'val':
            return {'val': val(r[1])}
        if kind == 'sig':
            return {'sig': r[1], 'code': r[2]}
        if kind == 'ok':
            return {'ret': 0}
        if kind == 'status':
            return {'status': val(r[1])}
        raise ValueError(kind)


def spread(items, n):
    """n items spread evenly over the list (all of them if it is short)."""
    if len(items) <= n:
        return list(items)
    return [items[(k * len(items)) // n] for k in range(n)]


def gen_pair(ab):
    a, b = ab
    t0 = time.monotonic()
    P = Pair(a, b)
    paths, capped, unknowns = P.explore()
    com = [(k, p) for k, p in enumerate(paths) if p[1]['commute']]
    seq = [(k, p) for k, p in enumerate(paths) if not p[1]['commute']]
    tests = []
    for kind, plist, per_pair, per_path in (('c', com, COMMUTE_PER_PAIR, COMMUTE_PER_PATH),
                                            ('s', seq, SEQ_PER_PAIR, SEQ_PER_PATH)):
        chosen = spread(plist, per_pair)
        # Round-robin: every chosen path gets a test before any gets a second.
        per = max(1, min(per_path, per_pair // max(1, len(chosen))))
        got = 0
        for k, (pc, out) in chosen:
            ts, unk = P.tests_for(pc, out, per)
            unknowns += unk
            for j, t in enumerate(ts):
                if got >= per_pair:
                    break
                t['name'] = f'{a}_{b}_{kind}{k}_{j}'
                t['commute'] = kind == 'c'
                tests.append(t)
                got += 1
    info = {'paths': len(paths), 'commuting_paths': len(com), 'capped': capped,
            'unknown': unknowns,
            'commuting': sum(t['commute'] for t in tests),
            'sequential': sum(not t['commute'] for t in tests)}
    return a, b, info, tests, time.monotonic() - t0


def dump_pair(a, b, info, tests):
    lines = [json.dumps(t, sort_keys=True, separators=(',', ':')) for t in tests]
    head = json.dumps({'pair': f'{a}/{b}', **info}, sort_keys=True, separators=(',', ':'))
    return head[:-1] + ',"tests":[\n' + ',\n'.join(lines) + '\n]}\n'


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--suite', choices=sorted(SUITE_FILES), default='page')
    ap.add_argument('-j', type=int, default=2)
    ap.add_argument('--out', help='data directory (default: the suite\'s)')
    ap.add_argument('--pairs', default='', help='comma-separated a/b (default: all)')
    ap.add_argument('--sample', type=int, default=0)
    ap.add_argument('--seed', type=int, default=0)
    ap.add_argument('--check', action='store_true')
    args = ap.parse_args()
    ops.configure(args.suite)       # before the workers start: they inherit it
    data_dir, summary_name = SUITE_FILES[args.suite]
    if not args.out:
        args.out = os.path.join(HERE, '..', '..', 'tests', 'commuter', data_dir)
    todo = pairs()
    if args.pairs:
        want = args.pairs.split(',')
        todo = [p for p in todo if f'{p[0]}/{p[1]}' in want]
    if args.sample:
        import random
        todo = sorted(random.Random(args.seed).sample(todo, min(args.sample, len(todo))),
                      key=todo.index)
        print(f'# sample of {len(todo)} pairs, seed {args.seed}: '
              + ','.join(f'{a}/{b}' for a, b in todo), flush=True)
    os.makedirs(args.out, exist_ok=True)
    t0 = time.monotonic()
    results = {}
    with multiprocessing.Pool(args.j, maxtasksperchild=1) as pool:
        for a, b, info, tests, secs in pool.imap_unordered(gen_pair, todo):
            results[a, b] = (info, tests)
            print(f'# {a}/{b}: {info["paths"]} paths ({info["commuting_paths"]} commuting), '
                  f'{info["commuting"]} commuting + {info["sequential"]} sequential tests, '
                  f'{secs:.1f} s', flush=True)
    failed = 0
    for n, (a, b) in enumerate(todo, 1):
        info, tests = results[a, b]
        text = dump_pair(a, b, info, tests)
        path = os.path.join(args.out, f'{a}_{b}.json')
        if args.check:
            with open(path) as f:
                same = f.read() == text
            failed += not same
            print(f'{"ok" if same else "not ok"} {n} - regenerate {a}/{b} identically', flush=True)
        else:
            with open(path, 'w') as f:
                f.write(text)
    if args.check:
        print(f'{len(todo) - failed} passed, {failed} failed')
        return 1 if failed else 0
    if not args.pairs and not args.sample:
        per_pair = {f'{a}/{b}': results[a, b][0] for a, b in todo}
        summary = {'suite': args.suite, 'unit': ops.UNIT, 'pairs': len(todo),
                   'commuting': sum(i['commuting'] for i in per_pair.values()),
                   'sequential': sum(i['sequential'] for i in per_pair.values()),
                   'per_pair': per_pair}
        with open(os.path.join(args.out, '..', summary_name), 'w') as f:
            json.dump(summary, f, indent=1, sort_keys=True)
            f.write('\n')
        print(f'# {summary["pairs"]} pairs, {summary["commuting"]} commuting and '
              f'{summary["sequential"]} sequential tests')
    print(f'# generation took {time.monotonic() - t0:.1f} s with {args.j} workers')
    return 0


if __name__ == '__main__':
    sys.exit(main())
