#!/usr/bin/python3
"""make bench-cost: what each operation of the scaling benchmark costs, in
figures that do not depend on the host, on our kernel and on Linux 6.1.

    tools/mtrace/cost.py --scale build/user/scale [--guest-path /tests/bin/scale]
                         [--kernels "ours linux"] [--cpus "1 16 64 255"]
                         [--workers "2 4 8 16 32 64"] [--ops "getpid stat"]
                         [-n ITERATIONS] [--warmup N] [--out build/bench-cost]

Boots each kernel under the mtrace plugin in cost mode (tools/mtrace/cost.c)
with the benchmark as its program, `SCALE [-W N] -n ITERATIONS -w W --mark [OPS]`:
  - 1 worker with C vCPUs online, for each C in --cpus: kernel instructions
    per operation, and their growth from the fewest to the most vCPUs (a cost
    that grows with the CPU count: a loop over CPUs, a cpumask walk);
  - N workers on N vCPUs, for each N in --workers: cache-line transfers per
    operation (sharing between workers: one line every operation touches),
    and of them those that interrupt handlers' accesses alone caused (the
    tick's work: under the plugin an operation spans many ticks, where
    hardware runs many operations per tick; the guest time per operation is
    reported beside them).
One boot per (kernel, vCPUs, workers): the plugin adds up per op id, and the
benchmark names its op ids, not the worker count. The benchmark follows
user/bench/scale.c's command line; tests/mtrace/cost.c (the calibration
program) does too.

Writes --out/KERNEL-Ccpu-Ww.json per run (every op's counts, per-op figures,
the kernel functions that made its transfers and executed its instructions,
symbolized; the commit, date, host and kernel versions) with the plugin's
trace and the console log beside it, --out/results.json (all runs) and
--out/tables.md (printed too). --tables runs nothing and makes the last two
from the runs already in --out that the selection names (runs made apart, in
parts).
Runs under /usr/bin/python3; standard library only.
"""

import argparse
import collections
import json
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import analyze  # noqa: E402  (Symbols)

COST_OP = re.compile(r"cost-op (\d+) (\S+)")
SCALE = re.compile(r"scale: (\S+) (\d+) (\d+) (\d+) (\d+)")
MANY_CPUS = 64  # above this, guests get more memory (OVMF, Linux's per-CPU areas)


# ---- one run -------------------------------------------------------------------

def read_trace(path):
    """The plugin's cost-mode output: {op id: counts}, sites, blocks, total."""
    ops, sites, blocks, total = {}, collections.defaultdict(list), \
        collections.defaultdict(list), {}
    with open(path) as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "op":
                ops[int(w[1])] = {k: int(v) for k, v in (x.split("=") for x in w[2:])}
            elif w[0] in ("site", "block"):
                pc, call, vaddr = (int(x, 16) for x in w[2:5])
                by_handlers = int(w[6]) if len(w) > 6 else 0  # traces before 2026-12-07
                (sites if w[0] == "site" else blocks)[int(w[1])].append(
                    (pc, call, vaddr, int(w[5]), by_handlers))
            elif w[0] == "total":
                total = {k: int(v) for k, v in (x.split("=") for x in w[1:])}
    return ops, sites, blocks, total


def read_console(path):
    """Op names ({id: name}) and the benchmark's result lines."""
    names, results = {}, []
    with open(path, errors="replace") as f:
        for line in f:
            m = COST_OP.search(line)
            if m:
                names[int(m.group(1))] = m.group(2)
            m = SCALE.search(line)
            if m:
                results.append({"op": m.group(1), "workers": int(m.group(2)),
                                "cpus": int(m.group(3)), "total_ops": int(m.group(4)),
                                "elapsed_ns": int(m.group(5))})
    return names, results


def entries_file(kernel, build, out):
    """tools/mtrace/entries.py's list of interrupt entry points, made again
    when the kernel's symbols are newer."""
    path = os.path.join(out, f"entries-{kernel}")
    symbols = os.path.join(build, "kernel.elf") if kernel == "ours" else kallsyms(build)
    if not os.path.exists(path) or os.path.getmtime(path) < os.path.getmtime(symbols):
        source = ["--elf" if kernel == "ours" else "--kallsyms", symbols]
        with open(path + ".tmp", "w") as f:
            subprocess.run([os.path.join(HERE, "entries.py")] + source, stdout=f, check=True)
        os.replace(path + ".tmp", path)
    return path


def kallsyms(build):
    """Linux's symbols (tools/linuxguest --kallsyms caches them)."""
    return subprocess.run([os.path.join(ROOT, "tools", "linuxguest", "linuxguest"),
                           "--build", build, "--kallsyms"], stdout=subprocess.PIPE,
                          text=True, check=True).stdout.strip()


def boot(kernel, cpus, host_program, guest_program, args, a, tag):
    """Runs the program on `kernel` with `cpus` vCPUs under the plugin in cost
    mode; returns (status, wall seconds, trace path, console path)."""
    trace = os.path.join(a.out, tag + ".trace")
    log = os.path.join(a.out, tag + ".console")
    for stale in (trace, log):
        if os.path.exists(stale):
            os.remove(stale)
    plugin = (f"{os.path.abspath(a.plugin)},mode=cost,out={trace},"
              f"entries={entries_file(kernel, a.build, a.out)}")
    mem = "2G" if cpus > MANY_CPUS else "512M"
    common = ["--cpus", str(cpus), "--mem", mem, "--timeout", str(a.timeout), "--log", log,
              "--plugin", plugin] + (["--deterministic"] if a.deterministic else [])
    if kernel == "ours":
        cmdline = f'RUN="{" ".join([guest_program] + args)}"'
        if a.epoch_ticks > 1:
            cmdline += f" epochticks={a.epoch_ticks}"
        if a.deterministic:
            # Under -icount, with idle CPUs stopping their tick, QEMU 7.2 left a
            # vCPU halted at the first instruction of its timer interrupt's
            # handler, interrupts off (8 workers, all operations, 11492dc): a
            # state no guest code leads to (the kernel halts only in `sti; hlt`),
            # and the guest clock then warped past the hang check. With the tick
            # kept the runs complete; the counts are per operation, so the idle
            # CPUs' ticks do not enter them.
            cmdline += " tickless=0"
        cmd = [os.path.join(ROOT, "tools", "runqemu"), "--esp",
               os.path.join(a.build, "esp.img"), "--cmdline", cmdline] + common
    else:
        cmd = [os.path.join(ROOT, "tools", "linuxguest", "linuxguest"), "--build",
               a.build] + common + [host_program] + args
    start = time.monotonic()
    rc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL).returncode
    return rc, time.monotonic() - start, trace, log


def per_op(counts, result=None):
    """The figures per operation: instructions, transfers (and of them those
    handlers alone caused), and the guest time a worker took per operation
    (from the benchmark's result line, if any)."""
    n = counts["windows"] or 1
    ms = (result["elapsed_ns"] * result["workers"] / result["total_ops"] / 1e6
          if result and result["total_ops"] else None)
    return {"kernel_insns": counts["kernel_insns"] / n,
            "user_insns": counts["user_insns"] / n,
            "xfers": (counts["kernel_xfers"] + counts["user_xfers"]) / n,
            "kernel_xfers": counts["kernel_xfers"] / n,
            "user_xfers": counts["user_xfers"] / n,
            "xfers_by_handlers": counts.get("handler_caused", 0) / n,
            "guest_ms": ms}


def functions(rows, syms, windows, with_data):
    """Sites or blocks summed per function (and caller, data object), per op."""
    by, handlers = collections.Counter(), collections.Counter()
    for pc, call, vaddr, count, by_handlers in rows:
        key = syms.site(pc, call) if with_data else syms.function(pc)
        if with_data:
            key += " @ " + syms.data(vaddr)
        by[key] += count
        handlers[key] += by_handlers
    n = windows or 1
    return [dict({"where": k, "count": c, "per_op": round(c / n, 3)},
                 **({"by_handlers_per_op": round(handlers[k] / n, 3)} if with_data else {}))
            for k, c in by.most_common()]


def provenance(build):
    """What a figure must name: the commit, the date, the machine, the kernels."""
    def out(cmd):
        r = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True)
        return r.stdout.strip() if r.returncode == 0 else None
    model = None
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    version = os.path.join(build, "linux", "version")
    return {"commit": out(["git", "rev-parse", "--short", "HEAD"]),
            "dirty": bool(out(["git", "status", "--porcelain", "--untracked-files=no"])),
            "date": time.strftime("%Y-%m-%d"),
            "host_cpus": os.cpu_count(), "host_cpu": model,
            "qemu": (out(["qemu-system-x86_64", "--version"]) or "").split("\n")[0],
            "linux": open(version).read().strip() if os.path.exists(version) else None}


def measure(kernel, cpus, workers, a, syms):
    """One run: returns its record (also written as JSON)."""
    tag = f"{kernel}-{cpus}cpu-{workers}w"
    args = ["-n", str(a.iterations), "-w", str(workers), "-s", str(a.settle), "--mark"] + a.ops
    if a.warmup:
        args[:0] = ["-W", str(a.warmup)]
    print(f"# {tag}: {workers} worker(s) on {cpus} vCPU(s) ...", end="", flush=True)
    rc, wall, trace, log = boot(kernel, cpus, a.scale, a.guest_path, args, a, tag)
    record = {"kernel": kernel, "cpus": cpus, "workers": workers, "status": rc,
              "wall_s": round(wall, 1), "iterations": a.iterations, "warmup": a.warmup,
              "settle_s": a.settle,
              "deterministic": a.deterministic,
              "epoch_ticks": a.epoch_ticks if kernel == "ours" else None, **provenance(a.build), "ops": {}}
    if os.path.exists(trace) and os.path.exists(log):
        ops, sites, blocks, total = read_trace(trace)
        names, results = read_console(log)
        record["total"], record["results"] = total, results
        for op, counts in sorted(ops.items()):
            name = names.get(op, f"op{op}")
            n = counts["windows"]
            result = next((r for r in results if r["op"] == name), None)
            record["ops"][name] = dict(counts, id=op, per_op=per_op(counts, result),
                                       transfer_sites=functions(sites[op], syms, n, True)[:20],
                                       kernel_functions=functions(blocks[op], syms, n, False)[:40])
    ok = rc == 0 and record["ops"]
    print(f" {'ok' if ok else f'FAILED (status {rc})'}, {wall:.0f} s", flush=True)
    with open(os.path.join(a.out, tag + ".json"), "w") as f:
        json.dump(record, f, indent=1)
    return record


def earlier(kernel, cpus, workers, a):
    """The record of an earlier run, or None."""
    path = os.path.join(a.out, f"{kernel}-{cpus}cpu-{workers}w.json")
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


# ---- tables ------------------------------------------------------------------------

def fmt(x, digits=0):
    return "-" if x is None else f"{x:,.{digits}f}"


def figure(runs, kernel, cpus, workers, op, key):
    for r in runs:
        if (r["kernel"], r["cpus"], r["workers"]) == (kernel, cpus, workers) and op in r["ops"]:
            return r["ops"][op]["per_op"].get(key)
    return None


def find(runs, kernel, cpus, workers):
    for r in runs:
        if (r["kernel"], r["cpus"], r["workers"]) == (kernel, cpus, workers):
            return r
    return None


def growth_sources(runs, kernel, lo, hi, ops, top=3, threshold=0.05):
    """Per op whose kernel instructions grew by more than threshold from lo to
    hi vCPUs: the functions that grew most (instructions per op)."""
    a, b = find(runs, kernel, lo, 1), find(runs, kernel, hi, 1)
    lines = []
    for op in ops:
        if not a or not b or op not in a["ops"] or op not in b["ops"]:
            continue
        x, y = a["ops"][op]["per_op"]["kernel_insns"], b["ops"][op]["per_op"]["kernel_insns"]
        if not x or (y - x) / x <= threshold:
            continue
        before = {f["where"]: f["per_op"] for f in a["ops"][op]["kernel_functions"]}
        after = {f["where"]: f["per_op"] for f in b["ops"][op]["kernel_functions"]}
        grew = sorted(((after.get(k, 0) - before.get(k, 0), k) for k in set(before) | set(after)),
                      reverse=True)[:top]
        lines.append(f"| {op} | {fmt(y - x)} | "
                     + ", ".join(f"{k} +{fmt(d)}" for d, k in grew if d > 0) + " |")
    return lines


def by_handlers(fig, digits=2):
    """ (h X): the part of a transfer figure that handlers alone caused."""
    return f" (h {fig:.{digits}f})" if fig and round(fig, digits) else ""


def transfer_sources(runs, kernel, n, ops, top=3, threshold=0.1):
    """Per op with more than threshold transfers per op with n workers: where."""
    r = find(runs, kernel, n, n)
    lines = []
    for op in ops:
        if not r or op not in r["ops"] or r["ops"][op]["per_op"]["xfers"] <= threshold:
            continue
        o = r["ops"][op]
        where = [f"{s['where']} {s['per_op']:.2f}{by_handlers(s.get('by_handlers_per_op'))}"
                 for s in o["transfer_sites"][:top]]
        if o["per_op"]["user_xfers"] > threshold:
            where.append(f"user space {o['per_op']['user_xfers']:.2f}")
        p = o["per_op"]
        lines.append(f"| {op} | {p['xfers']:.2f}{by_handlers(p.get('xfers_by_handlers'))} | "
                     f"{fmt(p.get('guest_ms'), 1)} | " + "; ".join(where) + " |")
    return lines


def op_names(runs, kernel):
    names = []
    for r in runs:
        if r["kernel"] == kernel:
            names += [n for n in r["ops"] if n not in names]
    return names


def tables(runs, a):
    lines = []
    for kernel in a.kernels:
        ops = op_names(runs, kernel)
        if not ops:
            continue
        title = "ours" if kernel == "ours" else "Linux 6.1"
        ticks = sorted({r.get("epoch_ticks") or 1 for r in runs if r["kernel"] == kernel})
        if ticks != [1]:
            title += " (booted with epochticks=" + ",".join(map(str, ticks)) + ")"
        warm = sorted({r.get("warmup") or 0 for r in runs if r["kernel"] == kernel})
        if warm != [0]:
            title += " (after " + ",".join(map(str, warm)) + " unmeasured operations per worker)"
        if a.cpus:
            lo, hi = min(a.cpus), max(a.cpus)
            lines += [f"### {title}: kernel instructions per operation, 1 worker, by vCPUs online",
                      "",
                      "| operation | " + " | ".join(f"{c} vCPU" for c in a.cpus)
                      + (f" | growth {lo} → {hi} |" if len(a.cpus) > 1 else " |"),
                      "| --- |" + " ---: |" * (len(a.cpus) + (len(a.cpus) > 1))]
            for op in ops:
                row = [figure(runs, kernel, c, 1, op, "kernel_insns") for c in a.cpus]
                cells = [fmt(x) for x in row]
                if len(a.cpus) > 1:
                    first, last = row[0], row[-1]
                    cells.append(f"{100 * (last - first) / first:+.1f} %"
                                 if first and last is not None else "-")
                lines.append(f"| {op} | " + " | ".join(cells) + " |")
            lines.append("")
        if a.workers:
            lines += [f"### {title}: cache-line transfers per operation, N workers on N vCPUs",
                      "",
                      "(h X): of them, X caused by interrupt handlers' accesses alone "
                      "(tools/mtrace/cost.c).", "",
                      "| operation | " + " | ".join(f"N={n}" for n in a.workers) + " |",
                      "| --- |" + " ---: |" * len(a.workers)]
            for op in ops:
                cells = [fmt(figure(runs, kernel, n, n, op, "xfers"), 2)
                         + by_handlers(figure(runs, kernel, n, n, op, "xfers_by_handlers"))
                         for n in a.workers]
                lines.append(f"| {op} | " + " | ".join(cells) + " |")
            lines.append("")
        if len(a.cpus) > 1:
            rows = growth_sources(runs, kernel, min(a.cpus), max(a.cpus), ops)
            if rows:
                lines += [f"### {title}: where the kernel instructions grew, "
                          f"{min(a.cpus)} → {max(a.cpus)} vCPUs (growth > 5 %)", "",
                          "| operation | more per op | functions that grew most (per op) |",
                          "| --- | ---: | --- |"] + rows + [""]
        if a.workers:
            rows = transfer_sources(runs, kernel, max(a.workers), ops)
            if rows:
                lines += [f"### {title}: where the transfers are, N={max(a.workers)} "
                          f"(more than 0.1 per op)", "",
                          "| operation | per op | guest ms per op | "
                          "kernel function<-caller @ data (per op) |",
                          "| --- | ---: | ---: | --- |"] + rows + [""]
    failed = [f"{r['kernel']}-{r['cpus']}cpu-{r['workers']}w (status {r['status']})"
              for r in runs if r["status"] != 0 or not r["ops"]]
    if failed:
        lines += ["Runs that failed: " + ", ".join(failed), ""]
    return "\n".join(lines)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--scale", default="build/user/scale", help="the benchmark, on the host")
    p.add_argument("--guest-path", help="its path in our guest (default /tests/bin/NAME)")
    p.add_argument("--plugin", default="build/mtrace/mtrace.so")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--kernels", default="ours linux")
    p.add_argument("--cpus", default="1 16 64 255", help="vCPUs online for the 1-worker runs")
    p.add_argument("--workers", default="2 4 8 16 32 64", help="N for the N-worker runs")
    p.add_argument("--ops", default="", help="operations (default: all the benchmark has)")
    p.add_argument("-n", "--iterations", type=int, default=200)
    p.add_argument("--settle", type=float, default=2,
                   help="seconds between the workers' set-up and their start (scale -s): "
                        "the CPUs that started the benchmark go idle meanwhile")
    p.add_argument("--warmup", type=int, default=0,
                   help="unmeasured operations per worker before the measured ones, all "
                        "workers at once (scale -W): leaves out a structure's first contact "
                        "with the load, which the plugin's slow vCPUs stretch")
    p.add_argument("--timeout", type=float, default=3600, help="per boot, wall seconds")
    p.add_argument("--deterministic", action="store_true",
                   help="guest clocks follow the instruction count (runqemu --deterministic)")
    p.add_argument("--epoch-ticks", type=int, default=1,
                   help="ours: the epoch's work at every N-th timer tick (boot option "
                        "epochticks=N), to see what the tick's dilation under the plugin "
                        "puts on each operation")
    p.add_argument("--out", default=os.path.join(ROOT, "build", "bench-cost"))
    p.add_argument("--tables", action="store_true",
                   help="run nothing: the tables and results.json from the runs in --out "
                        "(KERNEL-Ccpu-Ww.json) that the selection names")
    a = p.parse_args()
    a.kernels = a.kernels.split()
    a.cpus = [int(c) for c in a.cpus.split()]
    a.workers = [int(n) for n in a.workers.split()]
    a.ops = a.ops.split()
    a.guest_path = a.guest_path or "/tests/bin/" + os.path.basename(a.scale)
    a.build = os.path.abspath(a.build)
    os.makedirs(a.out, exist_ok=True)
    runs = []
    for kernel in a.kernels:
        configs = [(c, 1) for c in a.cpus] + [(n, n) for n in a.workers]
        if a.tables:
            runs += [r for r in (earlier(kernel, c, w, a) for c, w in configs) if r]
            continue
        if not os.path.exists(a.scale):
            raise SystemExit(f"cost.py: {a.scale}: no such benchmark (build it first)")
        syms = (analyze.Symbols(elf=os.path.join(a.build, "kernel.elf")) if kernel == "ours"
                else analyze.Symbols(kallsyms=kallsyms(a.build)))
        runs += [measure(kernel, c, w, a, syms) for c, w in configs]
    text = tables(runs, a)
    print(text)
    with open(os.path.join(a.out, "tables.md"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"iterations": a.iterations, "runs": runs}, f, indent=1)
    return 0 if all(r["status"] == 0 and r["ops"] for r in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
