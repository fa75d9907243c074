"""Symbolic execution of plain Python model code over z3 terms.

The model (model.py) is ordinary Python that computes on z3 integer and boolean
terms. Wherever it needs a Python truth value -- an `if`, picking a concrete
slot for a symbolic index -- it asks the explorer (`branch`, `pick`). The
explorer enumerates every feasible path depth-first by re-running the code
with a recorded prefix of decisions, asking z3 at each new decision which
sides are feasible under the path condition so far. Each completed path yields
its path condition (the list of decided constraints) and the code's return value.

Determinism: decisions are taken True before False, in program order; z3's
seeds are fixed; nothing iterates over a set or hashes an object.
"""
import random

import z3

z3.set_param('smt.random_seed', 0)
z3.set_param('sat.random_seed', 0)
z3.set_param('nlsat.seed', 0)

CHECK_TIMEOUT_MS = 5000


class Prune(Exception):
    """The current path is infeasible or outside the modelled bounds."""


class PathCap(Exception):
    pass


def is_sym(x):
    return isinstance(x, z3.ExprRef)


def concrete(x):
    """x as a Python bool/int if it simplifies to a constant, else None."""
    if not is_sym(x):
        return x
    s = z3.simplify(x)
    if z3.is_true(s):
        return True
    if z3.is_false(s):
        return False
    if z3.is_int_value(s):
        return s.as_long()
    return None


def eq(a, b):
    if not is_sym(a) and not is_sym(b):
        return a == b
    return a == b if is_sym(a) else b == a


def And(*xs):
    xs = [x for x in xs if x is not True]
    if any(x is False for x in xs):
        return False
    if not xs:
        return True
    return xs[0] if len(xs) == 1 else z3.And(*xs)


def Or(*xs):
    xs = [x for x in xs if x is not False]
    if any(x is True for x in xs):
        return True
    if not xs:
        return False
    return xs[0] if len(xs) == 1 else z3.Or(*xs)


def Not(x):
    return (not x) if isinstance(x, bool) else z3.Not(x)


def If(c, a, b):
    if isinstance(c, bool):
        return a if c else b
    return z3.If(c, a, b)


def Min(a, b):
    return If(a <= b, a, b) if (is_sym(a) or is_sym(b)) else min(a, b)


def Max(a, b):
    return If(a >= b, a, b) if (is_sym(a) or is_sym(b)) else max(a, b)


class Explorer:
    """Enumerates the feasible paths of a function that decides through it.

    The frontier of untaken sides is kept in a list; the next path to run is
    drawn from it by a random generator seeded by the caller, so that when a
    pair has more paths than the cap allows, the ones run are spread over the
    whole tree rather than packed in its first subtree. Each new decision
    costs at most one solver call: the side the current model satisfies is
    feasible without asking; only the other side is checked.
    """

    def __init__(self, base, max_paths, seed):
        self.base = list(base)      # constraints every path starts from
        self.max_paths = max_paths
        self.rng = random.Random(seed)
        self.unknowns = 0
        self.checks = 0

    def _check(self, extra=None):
        self.checks += 1
        if extra is not None:
            self.solver.push()
            self.solver.add(extra)
        r = self.solver.check()
        m = self.solver.model() if r == z3.sat else None
        if extra is not None:
            self.solver.pop()
        if r == z3.unknown:
            self.unknowns += 1
        return m

    def branch(self, cond):
        """Decide a condition; returns a Python bool, forking the path."""
        c = concrete(cond)
        if c is not None:
            return bool(c)
        key = cond.get_id()
        if key in self.memo:
            return self.memo[key]
        if self.pos < len(self.prefix):
            d = self.prefix[self.pos]
            self.model = None
        else:
            if self.model is None:
                self.model = self._check()
                if self.model is None:
                    raise Prune()
            d = z3.is_true(self.model.eval(cond, model_completion=True))
            other = cond if not d else z3.Not(cond)
            if self._check(other) is not None:
                self.pending.append(self.decisions + [not d])
        self.pos += 1
        self.decisions.append(d)
        self.memo[key] = d
        lit = cond if d else z3.Not(cond)
        self.path.append(lit)
        self.solver.add(lit)
        return d

    def assume(self, cond):
        """Continue only where cond holds (bounds of the model)."""
        if not self.branch(cond):
            raise Prune()

    def pick(self, x, values):
        """A concrete value of the symbolic int x among values (forks)."""
        c = concrete(x)
        if c is not None:
            if c not in values:
                raise Prune()
            return c
        for v in values[:-1]:
            if self.branch(x == v):
                return v
        self.assume(x == values[-1])
        return values[-1]

    def explore(self, fn):
        """Yields (path condition, fn's result) for every feasible path."""
        self.pending = [[]]
        npaths = 0
        self.solver = z3.Solver()
        self.solver.set('timeout', CHECK_TIMEOUT_MS)
        self.solver.add(*self.base)
        while self.pending:
            k = self.rng.randrange(len(self.pending))
            self.pending[k], self.pending[-1] = self.pending[-1], self.pending[k]
            self.prefix = self.pending.pop()
            self.pos = 0
            self.decisions = []
            self.path = []
            self.memo = {}
            self.model = None
            self.solver.push()
            try:
                out = fn(self)
            except Prune:
                continue
            finally:
                self.solver.pop()
            npaths += 1
            yield list(self.path), out
            if npaths >= self.max_paths:
                raise PathCap()
