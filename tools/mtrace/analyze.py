#!/usr/bin/python3
"""Analyses the mtrace plugin's output: which pairs of calls share cache lines.

    analyze.py TRACE [--log RUNNER_LOG] [--elf kernel.elf | --kallsyms FILE]
               [--out DIR] [--kernel NAME] [--test ID] [--reasons FILE]

TRACE is what the plugin wrote (tools/mtrace/pairs.c: "test" and "line"
records per test id; a test run twice under one id, e.g. in both orders, is
conflict-free only if both runs are). RUNNER_LOG is the guest's console output;
its lines
    mtrace-test ID CALL0 CALL1 [NAME...]    (or mtrace-test ID CALL0/CALL1 [NAME...])
name each test's pair of calls (tests/mtrace/validate.c, the conformance
runner). PCs and data addresses are symbolized against our kernel's ELF
(nm, addr2line: source lines) or Linux's /proc/kallsyms (tools/linuxguest
--kallsyms). A conflict is grouped by code site (the two functions) and data
object (the global variable holding the line, or the kernel region).

With --out DIR it writes summary.json ({"tests", "conflict_free_lines",
"conflict_free_bytes", percentages, per-pair table, top sites, "remaining":
the conflicted tests by reason, from --reasons FILE, and "inherent_tests": those
with a conflict for a reason the file marks inherent}: commuting tests only;
"sequential_tests" counts the others, whose conflicts conflicts.json still
lists), remaining.txt (the same by reason, readable), conflicts.json
(every conflict, symbolized), pairs.txt (the per-pair table, readable) and
heatmap.svg/.png (the SOSP paper's Figure 6 style: colour = fraction of the
pair's tests that are conflict-free, number = tests with conflicts; needs
Debian's python3-matplotlib). Without --out it prints the summary; --test ID
prints one test's conflicts with source lines.
Runs under /usr/bin/python3 (Debian's matplotlib); standard library otherwise.
"""

import argparse
import bisect
import collections
import json
import os
import re
import subprocess
import sys
import textwrap

LINE = 64
KEY_VIRT = 1 << 63

# Linux x86-64 regions with nokaslr, for lines no symbol covers: 5-level paging
# (QEMU's -cpu max has LA57) and 4-level.
DIRECT = "direct map (slab, page tables, per-cpu)"
VMALLOC = "vmalloc (stacks, modules' data)"
VMEMMAP = "vmemmap (struct page)"
LINUX_REGIONS = [
    (0xff11000000000000, 0xff91000000000000, DIRECT),
    (0xffa0000000000000, 0xffd2000000000000, VMALLOC),
    (0xffd4000000000000, 0xffd6000000000000, VMEMMAP),
    (0xffff888000000000, 0xffffc88000000000, DIRECT),
    (0xffffc90000000000, 0xffffe90000000000, VMALLOC),
    (0xffffea0000000000, 0xffffeb0000000000, VMEMMAP),
    (0xfffffe0000000000, 0xfffffe8000000000, "cpu_entry_area"),
    (0xffffffff80000000, 0x10000000000000000, "kernel image"),
]
USER_TOP = 1 << 56  # the lower half, with 5-level paging
# Ours (boot/bootinfo.h, kernel/mm/mmu.h, kernel/proc/kstack.c).
OURS_REGIONS = [
    (0xffff800000000000, 0xffffc00000000000, "direct map (kmalloc, pages)"),
    (0xffffc00000000000, 0xffffd00000000000, "mmio"),
    (0xffffd00000000000, 0xffffe00000000000, "kernel stacks"),
    (0xffffffff80000000, 0x10000000000000000, "kernel image"),
]


# ---- input -------------------------------------------------------------------

class Conflict:
    """One line touched by both calls of a test, written by at least one."""

    def __init__(self, fields):
        v = [int(f, 16) for f in fields] + [0] * (15 - len(fields))
        (self.key, self.vaddr, self.w0, self.r0, self.w1, self.r1,
         self.wpc0, self.rpc0, self.wpc1, self.rpc1,
         self.wcall0, self.rcall0, self.wcall1, self.rcall1, self.vaddr1) = v
        self.vaddr1 = self.vaddr1 or self.vaddr

    def byte_overlap(self):
        """Bytes one call wrote and the other touched."""
        return (self.w0 & (self.r1 | self.w1)) | (self.w1 & (self.r0 | self.w0))

    def hot_vaddr(self):
        """The first byte one call wrote and the other touched (else the first
        both touched): what the line's object is named after, not the line's
        start, which may hold the end of a neighbour."""
        m = self.byte_overlap() or ((self.w0 | self.r0) & (self.w1 | self.r1))
        return self.vaddr + ((m & -m).bit_length() - 1 if m else 0)

    def pcs(self):
        """The two instructions behind the conflict: a writer's store and the
        other call's access (its store if it wrote, else its load)."""
        if self.w0:
            return self.wpc0, (self.wpc1 or self.rpc1)
        return (self.wpc0 or self.rpc0), self.wpc1

    def calls(self):
        """The call instructions that entered the functions of pcs()."""
        if self.w0:
            return self.wcall0, (self.wcall1 if self.wpc1 else self.rcall1)
        return (self.wcall0 if self.wpc0 else self.rcall0), self.wcall1

    def kind(self):
        return ("W" if self.w0 else "R") + ("W" if self.w1 else "R")


class Test:
    """One test id. A runner may run a test more than once under the same id
    (the conformance runner runs a commuting pair in both orders): each run is
    kept, and the test is conflict-free only if every run is."""

    def __init__(self, tid):
        self.id = tid
        self.runs = []                  # per run: [n0, n1, [Conflict...]]
        self.pair = ("?", "?")
        self.name = ""

    @property
    def conflicts(self):
        return [c for run in self.runs for c in run[2]]

    @property
    def n0(self):
        return min((run[0] for run in self.runs), default=0)

    @property
    def n1(self):
        return min((run[1] for run in self.runs), default=0)

    def lines(self):
        """Shared lines in the worst run."""
        return max((len(run[2]) for run in self.runs), default=0)

    def bytes(self):
        """Lines with shared bytes in the worst run."""
        return max((sum(1 for c in run[2] if c.byte_overlap()) for run in self.runs),
                   default=0)


def read_trace(path):
    """Tests keyed by id, each with its runs in order."""
    tests = {}
    current = None
    with open(path) as f:
        for raw in f:
            w = raw.split()
            if not w:
                continue
            if w[0] == "test":
                kv = dict(x.split("=") for x in w[2:])
                current = tests.setdefault(int(w[1]), Test(int(w[1])))
                current.runs.append([int(kv["n0"]), int(kv["n1"]), []])
            elif w[0] == "line" and current and int(w[1]) == current.id:
                current.runs[-1][2].append(Conflict(w[2:17]))
    return tests


# "mtrace-test ID CALL0 CALL1 [NAME...]", or "mtrace-test ID CALL0/CALL1 [NAME...]".
RUNNER_LINE = re.compile(r"mtrace-test (\d+) (?:(\S+)/(\S+)|(\S+) (\S+))(?: (.*))?")


def read_runner_log(path, tests):
    with open(path, errors="replace") as f:
        for raw in f:
            m = RUNNER_LINE.search(raw)
            if m and int(m.group(1)) in tests:
                t = tests[int(m.group(1))]
                t.pair = (m.group(2), m.group(3)) if m.group(2) else (m.group(4), m.group(5))
                t.name = (m.group(6) or "").strip()


# ---- symbols -----------------------------------------------------------------

class Symbols:
    """Address -> symbol+offset, from `nm -n` of an ELF or a kallsyms file."""

    def __init__(self, elf=None, kallsyms=None):
        self.elf = elf
        self.addrs, self.names, self.types = [], [], []
        if elf:
            text = subprocess.run(["nm", "-n", elf], stdout=subprocess.PIPE, text=True,
                                  check=True).stdout
        elif kallsyms:
            with open(kallsyms) as f:
                text = f.read()
        else:
            text = ""
        rows = []
        for line in text.splitlines():
            w = line.split()
            if len(w) >= 3 and w[1] not in "aAUwWvV":
                rows.append((int(w[0], 16), w[1], w[2]))
        rows.sort()
        for a, t, n in rows:
            self.addrs.append(a)
            self.types.append(t)
            self.names.append(n)
        self.sources = {}

    def lookup(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        if i < 0 or addr - self.addrs[i] > 1 << 20:
            return None, 0, None
        return self.names[i], addr - self.addrs[i], self.types[i]

    def function(self, pc):
        name, _, _ = self.lookup(pc)
        return name or f"{pc:#x}"

    def site(self, pc, call):
        """pc's function and, if known, its caller: "memset<-vma_expand"."""
        fn = self.function(pc)
        return f"{fn}<-{self.function(call)}" if call else fn

    def code(self, pc):
        name, off, _ = self.lookup(pc)
        return f"{name}+{off:#x}" if name else f"{pc:#x}"

    def data(self, vaddr):
        """The global variable holding vaddr, or the kernel region."""
        name, off, typ = self.lookup(vaddr)
        if name and typ and typ.lower() in "dbr":
            return name
        for lo, hi, what in OURS_REGIONS if self.elf else LINUX_REGIONS:
            if lo <= vaddr < hi:
                return what
        if vaddr < USER_TOP:
            return "user memory"
        return "other"

    def load_sources(self, pcs):
        """file:line (with inlining) for each PC, through addr2line (ELF only)."""
        pcs = sorted(set(p for p in pcs if p and p not in self.sources))
        if not self.elf or not pcs:
            return
        out = subprocess.run(["addr2line", "-f", "-i", "-a", "-C", "-e", self.elf]
                             + [f"{p:#x}" for p in pcs], stdout=subprocess.PIPE,
                             text=True).stdout.splitlines()
        pc, frames = None, []
        for line in out + ["0x0"]:
            if line.startswith("0x"):
                if pc is not None:
                    self.sources[pc] = " <- ".join(frames)
                pc, frames, fn = int(line, 16), [], None
            elif fn is None:
                fn = line
            else:
                frames.append(f"{fn} {os.path.relpath(line) if line[0] == '/' else line}")
                fn = None

    def source(self, pc):
        return self.sources.get(pc) or self.code(pc)


# ---- analysis ----------------------------------------------------------------

def pct(n, d):
    return round(100.0 * n / d, 2) if d else 100.0


def pair_key(t):
    return tuple(sorted(t.pair))


def sequential(t):
    """A conformance test of a pair that does not commute (the generator names
    them NAME_sN_K, commuting ones NAME_cN_K): its calls may have to share, so
    the conflict-free figures count commuting tests only, as the SOSP paper's
    do."""
    return re.search(r"_s\d+_\d+$", t.name) is not None


INHERENT = "inherent: "


def read_reasons(path):
    """The reasons file: `PATTERN<tab>REASON` lines (# comments), PATTERN a
    regular expression searched for in a conflict's site followed by the test's
    pair ("fn<-caller / fn<-caller [call0 call1]", the calls in the per-pair
    table's order). A REASON that starts with "inherent: " claims that any
    kernel would share a line there (see explain)."""
    rules = []
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            pattern, _, reason = line.partition("\t")
            rules.append((re.compile(pattern.strip()), reason.strip()))
    return rules


def explain(site_tests, rules, pair_of):
    """The remaining conflicts by reason: each site goes to the first rule whose
    pattern it matches (in "SITE [CALL0 CALL1] @ OBJECT"), or to "unexplained";
    a test counts once per reason.
    Also the tests with a site whose reason is inherent: a kernel built as the
    reason assumes shares a line in them whatever else it removes, so its
    conflict-free count can be at most the rest."""
    by_reason = collections.OrderedDict((r, {"tests": set(), "sites": collections.Counter()})
                                        for _, r in rules)
    by_reason["unexplained"] = {"tests": set(), "sites": collections.Counter()}
    blocked = set()  # tests with a site whose reason is inherent
    for (site, obj), ids in site_tests.items():
        for i in ids:
            key = f"{site} [{' '.join(pair_of[i])}] @ {obj}"
            reason = next((r for pat, r in rules if pat.search(key)), "unexplained")
            by_reason[reason]["tests"].add(i)
            by_reason[reason]["sites"][site] += 1
            if reason.startswith(INHERENT):
                blocked.add(i)
    return ([{"reason": r, "tests": len(v["tests"]),
              "sites": [{"site": s, "tests": k} for s, k in v["sites"].most_common()]}
             for r, v in by_reason.items() if v["tests"]],
            len(blocked))


def remaining_text(summary):
    rows = [f"{summary['kernel']}: {summary['tests'] - summary['conflict_free_lines']} of "
            f"{summary['tests']} commuting tests share a cache line; by reason (a test "
            f"may have several).",
            f"{summary['inherent_tests']} of them share for a reason marked inherent, "
            f"so a kernel built as those reasons assume is conflict-free in at most "
            f"{summary['tests'] - summary['inherent_tests']} of these tests "
            f"({summary['reachable_lines_pct']}%)."]
    for r in summary["remaining"]:
        rows.append("\n" + textwrap.fill(r["reason"], 96, initial_indent=f"{r['tests']:6} tests  ",
                                           subsequent_indent=" " * 14))
        for s in r["sites"]:
            rows.append(f"        {s['tests']:5}  {s['site']}")
    return "\n".join(rows) + "\n"


def analyse(tests, syms, kernel, reasons=None):
    everything = sorted(tests.values(), key=lambda t: t.id)
    seq = [t for t in everything if sequential(t)]
    ts = [t for t in everything if not sequential(t)]
    n = len(ts)
    free_lines = sum(1 for t in ts if t.lines() == 0)
    free_bytes = sum(1 for t in ts if t.bytes() == 0)
    pairs = collections.OrderedDict()
    for t in sorted(ts, key=pair_key):
        p = pairs.setdefault(pair_key(t), {"tests": 0, "conflict_free_lines": 0,
                                           "conflict_free_bytes": 0})
        p["tests"] += 1
        p["conflict_free_lines"] += t.lines() == 0
        p["conflict_free_bytes"] += t.bytes() == 0
    sites = collections.Counter()
    site_tests = collections.defaultdict(set)
    objects = collections.Counter()
    records = []
    for t in everything:
        commute = not sequential(t)
        for c in t.conflicts:
            pc0, pc1 = c.pcs()
            call0, call1 = c.calls()
            site = " / ".join(sorted((syms.site(pc0, call0), syms.site(pc1, call1))))
            obj = syms.data(c.hot_vaddr())
            if commute:
                sites[(site, obj)] += 1
                site_tests[(site, obj)].add(t.id)
                objects[obj] += 1
            records.append({
                "test": t.id, "pair": list(t.pair), "name": t.name, "commute": commute,
                "line": f"{c.key & ~KEY_VIRT:#x}", "physical": not c.key & KEY_VIRT,
                "vaddr": f"{c.vaddr:#x}", "vaddr1": f"{c.vaddr1:#x}", "object": obj, "kind": c.kind(),
                "bytes": f"{c.byte_overlap():#018x}",
                "pc0": syms.code(pc0), "pc1": syms.code(pc1),
                "call0": syms.code(call0) if call0 else None,
                "call1": syms.code(call1) if call1 else None, "site": site})
    top = [{"site": s, "object": o, "conflicts": k, "tests": len(site_tests[(s, o)])}
           for (s, o), k in sites.most_common(30)]
    remaining, inherent = explain(site_tests, reasons or [], {t.id: pair_key(t) for t in ts})
    summary = {
        "kernel": kernel, "tests": n,
        "conflict_free_lines": free_lines, "conflict_free_bytes": free_bytes,
        "conflict_free_lines_pct": pct(free_lines, n),
        "conflict_free_bytes_pct": pct(free_bytes, n),
        "sequential_tests": len(seq),
        "sequential_conflict_free_lines": sum(1 for t in seq if t.lines() == 0),
        # A test where a call recorded nothing did not run as meant (marker
        # stores missing, or the call ran on a vCPU other than its window's).
        "empty_windows": [t.id for t in everything if t.n0 == 0 or t.n1 == 0],
        "pairs": [{"calls": list(k), **v} for k, v in pairs.items()],
        "top_sites": top,
        "top_objects": [{"object": o, "conflicts": k} for o, k in objects.most_common(20)],
        "remaining": remaining,
        "inherent_tests": inherent,
        "reachable_lines_pct": round(100.0 * (n - inherent) / n, 3) if n else 100.0,
    }
    return summary, records


def pairs_text(summary):
    rows = [f"{'pair':40} {'tests':>6} {'free(line)':>10} {'free(byte)':>10}"]
    for p in summary["pairs"]:
        rows.append(f"{' '.join(p['calls']):40} {p['tests']:6} "
                    f"{p['conflict_free_lines']:10} {p['conflict_free_bytes']:10}")
    return "\n".join(rows) + "\n"


def heatmap(summary, base):
    """Figure 6 style: lower triangle of calls x calls."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    calls = sorted({c for p in summary["pairs"] for c in p["calls"]})
    idx = {c: i for i, c in enumerate(calls)}
    n = len(calls)
    grid = [[float("nan")] * n for _ in range(n)]
    fig, ax = plt.subplots(figsize=(max(4, 0.45 * n + 2), max(3.5, 0.45 * n + 1.5)))
    for p in summary["pairs"]:
        a, b = sorted((idx[p["calls"][0]], idx[p["calls"][1]]), reverse=True)
        grid[a][b] = p["conflict_free_lines"] / p["tests"]
        conflicted = p["tests"] - p["conflict_free_lines"]
        if conflicted:
            ax.text(b, a, str(conflicted), ha="center", va="center", fontsize=7)
    im = ax.imshow(grid, cmap="RdYlGn", vmin=0, vmax=1)
    ax.set_xticks(range(n), calls, rotation=90, fontsize=8)
    ax.set_yticks(range(n), calls, fontsize=8)
    ax.set_title(f"{summary['kernel']}: {summary['conflict_free_lines']} of "
                 f"{summary['tests']} tests conflict-free "
                 f"({summary['conflict_free_lines_pct']}%)", fontsize=9)
    fig.colorbar(im, ax=ax, label="fraction of tests conflict-free")
    fig.tight_layout()
    fig.savefig(base + ".svg")
    fig.savefig(base + ".png", dpi=120)
    plt.close(fig)


def print_test(t, syms):
    pcs = [p for c in t.conflicts for p in c.pcs() + c.calls()]
    syms.load_sources(pcs)
    runs = f" (worst of {len(t.runs)} runs)" if len(t.runs) > 1 else ""
    print(f"test {t.id} {' '.join(t.pair)} {t.name}: {t.n0} + {t.n1} kernel accesses, "
          f"{t.lines()} shared lines, {t.bytes()} with shared bytes{runs}")
    for c in t.conflicts:
        alias = f" and {c.vaddr1:#x}" if c.vaddr1 != c.vaddr else ""
        print(f"  line {c.key & ~KEY_VIRT:#x} (vaddr {c.vaddr:#x}{alias}, {syms.data(c.hot_vaddr())}) "
              f"{c.kind()} bytes {c.byte_overlap():#018x}")
        for n, (pc, call) in enumerate(zip(c.pcs(), c.calls())):
            caller = f"\n              called from {syms.source(call)}" if call else ""
            print(f"    call {n}: {syms.source(pc)}{caller}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[1])
    p.add_argument("trace")
    p.add_argument("--log", help="runner log with 'mtrace-test ID CALL0 CALL1' lines")
    p.add_argument("--elf", help="kernel ELF with symbols (our kernel)")
    p.add_argument("--kallsyms", help="kallsyms file (Linux)")
    p.add_argument("--kernel", default="kernel", help="name for titles (ours, linux)")
    p.add_argument("--out", help="directory for summary.json, conflicts.json, heat map")
    p.add_argument("--test", type=int, help="print this test's conflicts with sources")
    p.add_argument("--reasons", help="known reasons for conflicts (tools/mtrace/reasons)")
    a = p.parse_args()
    tests = read_trace(a.trace)
    if not tests:
        raise SystemExit(f"analyze: no tests in {a.trace} (did the runner store the markers?)")
    if a.log:
        read_runner_log(a.log, tests)
    syms = Symbols(a.elf, a.kallsyms)
    if a.test is not None:
        if a.test not in tests:
            raise SystemExit(f"analyze: no test {a.test} in {a.trace}")
        print_test(tests[a.test], syms)
        return 0
    summary, records = analyse(tests, syms, a.kernel,
                               read_reasons(a.reasons) if a.reasons else None)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "summary.json"), "w") as f:
            json.dump(summary, f, indent=1)
        with open(os.path.join(a.out, "conflicts.json"), "w") as f:
            json.dump(records, f, indent=1)
        with open(os.path.join(a.out, "pairs.txt"), "w") as f:
            f.write(pairs_text(summary))
        with open(os.path.join(a.out, "remaining.txt"), "w") as f:
            f.write(remaining_text(summary))
        try:
            heatmap(summary, os.path.join(a.out, "heatmap"))
        except ImportError:
            print("analyze: no heat map without Debian's python3-matplotlib "
                  "(tools/deps mtrace installs it)", file=sys.stderr)
    print(f"{a.kernel}: {summary['tests']} commuting tests, conflict-free: "
          f"{summary['conflict_free_lines']} ({summary['conflict_free_lines_pct']}%) "
          f"at cache-line granularity, {summary['conflict_free_bytes']} "
          f"({summary['conflict_free_bytes_pct']}%) at byte granularity")
    if summary["empty_windows"]:
        print(f"warning: {len(summary['empty_windows'])} tests with an empty window "
              f"(first: {summary['empty_windows'][:5]})")
    for s in summary["top_sites"][:10]:
        print(f"  {s['conflicts']:5} conflicts in {s['tests']:4} tests: {s['site']} "
              f"[{s['object']}]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
