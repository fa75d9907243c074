#!/usr/bin/env python3
"""Checks that the scaling benchmark (user/bench/scale.c) runs every operation
and reports in its documented format on the Linux host, in our kernel and in
Linux 6.1 under QEMU. Not a timing test: each worker runs exactly one
operation (-n 1), so every result line must count exactly W operations.

    tests/bench/scale_check.py [--build build] [--kernels host,ours,linux]

Per kernel: the run exits 0; `cost-op ID NAME` names each operation once with
its index in `scale --list` (the contract of --mark); and per operation either
`scale: OP skipped REASON` (only where the kernel lacks the interface: O_ANYFD
and MADV_UNMAP_ASYNC are ours) or one `scale: OP W CPUS TOTAL ELAPSED_NS` line
per worker count with TOTAL = W, CPUS = the guest's CPUs, ELAPSED_NS > 0.
Prints ok/not ok lines and a closing `N passed, N failed`.
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RESULT = re.compile(r"^scale: (\S+) (\d+) (\d+) (\d+) (\d+)$")
SKIPPED = re.compile(r"^scale: (\S+) skipped \S.*$")
COST_OP = re.compile(r"^cost-op (\d+) (\S+)$")
OURS_ONLY = {"open-anyfd-thread", "touch-unmap-async"}
GUEST_CPUS = 2
ARGS = ["--mark", "-n", "1"]  # and -w


class Tap:
    def __init__(self):
        self.n = self.failed = 0

    def check(self, ok, name, why=""):
        self.n += 1
        self.failed += not ok
        print(f"{'ok' if ok else 'not ok'} {self.n} - {name}" + ("" if ok else f" # {why}"),
              flush=True)


def run(kernel, workers, a):
    scale = os.path.join(a.build, "user", "scale")
    args = ARGS + ["-w", ",".join(map(str, workers))]
    if kernel == "host":
        cmd = [scale] + args
    elif kernel == "ours":
        cmd = [os.path.join(ROOT, "tools", "runqemu"), "--esp", os.path.join(a.build, "esp.img"),
               "--cpus", str(GUEST_CPUS), "--timeout", "300",
               "--cmdline", f'RUN="/tests/bin/scale {" ".join(args)}"']
    else:
        cmd = [os.path.join(ROOT, "tools", "linuxguest", "linuxguest"), "--build", a.build,
               "--cpus", str(GUEST_CPUS), "--timeout", "300", scale] + args
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       stdin=subprocess.DEVNULL, text=True, errors="replace")
    return p.returncode, [l.rstrip("\r") for l in p.stdout.splitlines()]


def check_kernel(kernel, ops, tap, a):
    cpus = len(os.sched_getaffinity(0)) if kernel == "host" else GUEST_CPUS
    workers = [1, 2] if cpus >= 2 else [1]
    status, lines = run(kernel, workers, a)
    tap.check(status == 0, f"scale on {kernel}: exit status 0", f"status {status}")
    named = [(int(m.group(1)), m.group(2)) for m in map(COST_OP.match, lines) if m]
    expected = [(i, op) for i, op in enumerate(ops)
                if kernel == "ours" or op not in OURS_ONLY]
    tap.check(named == expected, f"scale on {kernel}: cost-op lines name each op by its index",
              f"got {named[:4]}...")
    for op in ops:
        results = {}
        bad = []
        for l in lines:
            m = RESULT.match(l)
            if m and m.group(1) == op:
                w, c, total, ns = map(int, m.groups()[1:])
                if w in results:
                    bad.append(f"two lines for {w} workers")
                results[w] = (c, total, ns)
        skipped = any((m := SKIPPED.match(l)) and m.group(1) == op for l in lines)
        if op in OURS_ONLY and kernel != "ours":
            tap.check(skipped and not results, f"scale on {kernel}: {op} is skipped",
                      "no skipped line" if not skipped else "results too")
            continue
        for w in workers:
            if w not in results:
                bad.append(f"no line for {w} workers")
                continue
            c, total, ns = results[w]
            if c != cpus or total != w or ns <= 0:
                bad.append(f"W={w}: CPUS {c}, TOTAL {total}, ELAPSED {ns}")
        if skipped:
            bad.append("skipped")
        tap.check(not bad, f"scale on {kernel}: {op}", "; ".join(bad))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--kernels", default="host,ours,linux")
    a = p.parse_args()
    a.build = os.path.abspath(a.build)
    listing = subprocess.run([os.path.join(a.build, "user", "scale"), "--list"],
                             stdout=subprocess.PIPE, text=True)
    ops = [l.split()[0] for l in listing.stdout.splitlines() if l.strip()]
    tap = Tap()
    tap.check(listing.returncode == 0 and len(ops) > 10, "scale --list names the operations",
              f"status {listing.returncode}, {len(ops)} names")
    for kernel in a.kernels.split(","):
        check_kernel(kernel, ops, tap, a)
    print(f"{tap.n - tap.failed} passed, {tap.failed} failed")
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
