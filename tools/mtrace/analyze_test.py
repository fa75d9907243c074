#!/usr/bin/python3
"""Host test of tools/mtrace/analyze.py on a hand-written trace: conflict counts
at line and byte granularity, the per-pair table, the choice of PCs, the
runner-log names, and the files --out writes. Prints ok/not ok lines."""

import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import analyze  # noqa: E402

# Test 0: no shared line. Test 1: call 0 wrote bytes 0-7 of a line that call 1
# read at bytes 8-15 (false sharing: a line conflict, no byte conflict). Test 2:
# both wrote byte 0 of one line, and one read-read line that is no conflict (the
# plugin does not emit those). Test 2's first access is in beta called from
# alpha; the caller of its second access is unknown. Test 0 runs twice, both
# conflict-free; test 3 runs twice, the second run conflicts.
TRACE = """\
test 0 n0=10 n1=12 lines=0 bytes=0
test 1 n0=5 n1=5 lines=1 bytes=0
line 1 1000 ffff888000001000 ff 0 0 ff00 ffffffff81000010 0 0 ffffffff81000020
test 2 n0=7 n1=9 lines=1 bytes=1
line 2 2040 ffff888000002040 1 0 1 0 ffffffff81000030 0 ffffffff81000040 0 ffffffff81000004 0 0 0
test 0 n0=11 n1=12 lines=0 bytes=0
test 3 n0=3 n1=3 lines=0 bytes=0
test 3 n0=3 n1=3 lines=1 bytes=1
line 3 3000 ffff888000003000 1 0 1 0 ffffffff81000030 0 ffffffff81000030 0
"""
LOG = """\
noise
mtrace-test 0 getpid getpid a
mtrace-test 1 open close b
[    1.0] mtrace-test 2 close open c
mtrace-test 3 open/close d e
"""
KALLSYMS = """\
ffffffff81000000 T alpha
ffffffff81000030 T beta
ffffffff82000000 D some_global
"""


def main():
    results = []

    def check(cond, what):
        results.append((bool(cond), what))

    with tempfile.TemporaryDirectory(prefix="mtrace-analyze-") as tmp:
        paths = {}
        for name, text in (("trace", TRACE), ("log", LOG), ("kallsyms", KALLSYMS)):
            paths[name] = os.path.join(tmp, name)
            with open(paths[name], "w") as f:
                f.write(text)
        tests = analyze.read_trace(paths["trace"])
        analyze.read_runner_log(paths["log"], tests)
        check(sorted(tests) == [0, 1, 2, 3], "reads every test record")
        check([tests[i].lines() for i in range(4)] == [0, 1, 1, 1], "line conflicts per test")
        check([tests[i].bytes() for i in range(4)] == [0, 0, 1, 1],
              "byte conflicts: false sharing is a line conflict only")
        check(len(tests[3].runs) == 2 and tests[0].n0 == 10,
              "a test run twice under one id keeps both runs; it conflicts if one does")
        check(tests[1].pair == ("open", "close") and tests[2].name == "c"
              and tests[3].pair == ("open", "close") and tests[3].name == "d e",
              "runner-log lines name the pairs (CALL0 CALL1 or CALL0/CALL1), "
              "also after a console prefix")
        c = tests[1].conflicts[0]
        check(c.pcs() == (0xffffffff81000010, 0xffffffff81000020) and c.kind() == "WR",
              "a conflict's PCs: the writer's store and the other call's load")
        syms = analyze.Symbols(kallsyms=paths["kallsyms"])
        check(syms.code(0xffffffff81000034) == "beta+0x4", "symbolizes a PC")
        check(syms.data(0xffffffff82000008) == "some_global"
              and syms.data(0xffff888000001000).startswith("direct map"),
              "names data objects: globals, then kernel regions")
        summary, records = analyze.analyse(tests, syms, "linux")
        check((summary["tests"], summary["conflict_free_lines"],
               summary["conflict_free_bytes"]) == (4, 1, 2), "summary counts")
        pairs = {tuple(p["calls"]): p for p in summary["pairs"]}
        check(pairs.get(("close", "open"), {}).get("tests") == 3
              and pairs[("close", "open")]["conflict_free_lines"] == 0
              and pairs[("close", "open")]["conflict_free_bytes"] == 1,
              "per-pair table: (open, close) and (close, open) are one pair")
        check(len(records) == 3 and records[0]["site"] == "alpha / alpha",
              "conflict records grouped by code site")
        check(records[1]["site"] == "beta / beta<-alpha",
              "a site names the function's caller when the plugin knew it")
        rules_path = os.path.join(tmp, "reasons")
        with open(rules_path, "w") as f:
            f.write("# a comment\n^beta \tbeta's reason\n")
        rules = analyze.read_reasons(rules_path)
        summary, _ = analyze.analyse(tests, syms, "linux", rules)
        why = {r["reason"]: r["tests"] for r in summary["remaining"]}
        check(why == {"beta's reason": 2, "unexplained": 1},
              f"remaining conflicts by reason, the rest unexplained ({why})")
        check(summary["inherent_tests"] == 0, "no reason marked inherent, no inherent test")
        with open(rules_path, "w") as f:
            f.write("^beta \tinherent: beta\n^alpha\talpha\n")
        summary, _ = analyze.analyse(tests, syms, "linux", analyze.read_reasons(rules_path))
        check(summary["inherent_tests"] == 2 and summary["reachable_lines_pct"] == 50.0,
              "tests conflicted only for inherent reasons bound the reachable count "
              f"({summary['inherent_tests']}, {summary['reachable_lines_pct']})")
        # A test with an inherent site and an avoidable one cannot be made
        # conflict-free either: it counts against the bound.
        _, blocked = analyze.explain(
            {("alpha / alpha", "o"): {1}, ("beta / beta", "o"): {1, 2}, ("gamma / gamma", "o"): {3}},
            [(re.compile("^beta "), "inherent: beta"), (re.compile("^alpha "), "alpha")],
            {1: ("open", "close"), 2: ("open", "close"), 3: ("open", "close")})
        check(blocked == 2, f"a test with any inherent site bounds the reachable count ({blocked})")
        with open(rules_path, "w") as f:
            f.write("^beta .*\\[close open\\] @\tbeta in open/close\n")
        summary, _ = analyze.analyse(tests, syms, "linux", analyze.read_reasons(rules_path))
        why = {r["reason"]: r["tests"] for r in summary["remaining"]}
        check(why == {"beta in open/close": 2, "unexplained": 1},
              f"a rule may name the pair, in the per-pair table's order ({why})")
        # ... and the data the line belongs to, after " @ ".
        objects = {t["object"] for t in summary["top_objects"]}
        with open(rules_path, "w") as f:
            f.write("".join(f"@ {re.escape(o)}$\tdata {o}\n" for o in sorted(objects)))
        summary, _ = analyze.analyse(tests, syms, "linux", analyze.read_reasons(rules_path))
        why = {r["reason"] for r in summary["remaining"]}
        check(objects and why == {f"data {o}" for o in objects},
              f"a rule may name the data ({why})")
        out = os.path.join(tmp, "out")
        r = subprocess.run([sys.executable, os.path.join(HERE, "analyze.py"), paths["trace"],
                            "--log", paths["log"], "--kallsyms", paths["kallsyms"],
                            "--kernel", "linux", "--out", out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        wrote = sorted(os.listdir(out)) if os.path.isdir(out) else []
        check(r.returncode == 0 and {"summary.json", "conflicts.json", "pairs.txt"} <= set(wrote),
              f"--out writes summary.json, conflicts.json, pairs.txt (status {r.returncode})")
        if "summary.json" in wrote:
            with open(os.path.join(out, "summary.json")) as f:
                check(json.load(f)["conflict_free_bytes"] == 2, "summary.json holds the counts")
        # make mtrace-merge: shards (test id % 2) concatenated, shard 1 first,
        # analyse as the whole run does.
        shards = ["", ""]
        for line in TRACE.splitlines(keepends=True):
            shards[int(line.split()[1]) % 2] += line
        paths["merged"] = os.path.join(tmp, "merged")
        with open(paths["merged"], "w") as f:
            f.write(shards[1] + shards[0])
        merged = analyze.read_trace(paths["merged"])
        analyze.read_runner_log(paths["log"], merged)
        whole, _ = analyze.analyse(tests, syms, "linux")
        check(analyze.analyse(merged, syms, "linux")[0] == whole,
              "concatenated shard traces give the whole run's summary")
    failed = 0
    for n, (good, what) in enumerate(results, 1):
        print(f"{'ok' if good else 'not ok'} {n} - mtrace analysis: {what}")
        failed += not good
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
