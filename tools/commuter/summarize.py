#!/usr/bin/env python3
"""Summarize a conformance runner log (its `# pair` lines and closing line) into
summary.txt and summary.json next to it, in the shape the runner's own -J
writes: {"tests", "passed", "failed", "skipped", "per_pair": {pair: {...}}}.
Used where the runner's files cannot be copied out (our guest).

    tools/commuter/summarize.py DIR                 (reads DIR/log.txt)
    tools/commuter/summarize.py --merge DIR SHARD-DIR...

--merge joins shards (runner -n N -p I, each run into its own directory, named
I-of-N by make conformance SHARD=I/N): it checks that the shard directories
given are shards 0..N-1 of one N, concatenates their log.txt into DIR/log.txt
and summarizes that. A log may repeat a pair (one `# pair` line per shard):
the counts add up, so the merged summary is the unsharded run's.
"""
import json
import os
import re
import sys

PAIR = re.compile(r'^# pair (\S+)\s+tests\s+(\d+) passed\s+(\d+) skipped\s+(\d+)')
RESULT = re.compile(r'^(ok|not ok) \d+ - ')
SHARD = re.compile(r'^(\d+)-of-(\d+)$')


def summarize(d):
    per_pair = {}
    tests = passed = failed = skipped = 0
    with open(os.path.join(d, 'log.txt'), errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            m = PAIR.match(line)
            if m:
                p = per_pair.setdefault(m.group(1), {'tests': 0, 'passed': 0, 'skipped': 0})
                for key, i in (('tests', 2), ('passed', 3), ('skipped', 4)):
                    p[key] += int(m.group(i))
                continue
            r = RESULT.match(line)
            if r:
                tests += 1
                if r.group(1) == 'ok':
                    passed += 1
                    skipped += '# SKIP' in line
                else:
                    failed += 1
    summary = {'tests': tests, 'passed': passed - skipped, 'failed': failed,
               'skipped': skipped, 'per_pair': per_pair}
    with open(os.path.join(d, 'summary.json'), 'w') as f:
        json.dump(summary, f, indent=1)
    with open(os.path.join(d, 'summary.txt'), 'w') as f:
        for pair, p in per_pair.items():  # the runner's own format
            f.write(f"{pair:<18} tests {p['tests']:5} passed {p['passed']:5} "
                    f"skipped {p['skipped']:4}\n")
    print(f'{tests} tests, {passed - skipped} passed, {failed} failed, {skipped} skipped')
    return 1 if failed else 0


def merge(d, shard_dirs):
    """Concatenates the shards' logs into d/log.txt, shard 0 first. Exits if
    the directories are not all the shards of one count."""
    shards = {}
    for s in shard_dirs:
        m = SHARD.match(os.path.basename(os.path.normpath(s)))
        if not m:
            raise SystemExit(f'summarize: {s}: not a shard directory (I-of-N)')
        shards[(int(m.group(2)), int(m.group(1)))] = s
    counts = {n for n, _ in shards}
    if len(counts) != 1:
        raise SystemExit(f'summarize: shards of different counts: {sorted(counts)}')
    n = counts.pop()
    missing = [i for i in range(n) if (n, i) not in shards]
    if missing:
        raise SystemExit(f'summarize: shards {missing} of {n} are missing')
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, 'log.txt'), 'w') as out:
        for i in range(n):
            with open(os.path.join(shards[(n, i)], 'log.txt'), errors='replace') as f:
                out.write(f'# shard {i} of {n}\n')
                out.write(f.read())
    print(f'merged {n} shards into {d}/log.txt')


def main():
    args = sys.argv[1:]
    if args[:1] == ['--merge'] and len(args) >= 3:
        merge(args[1], args[2:])
        return summarize(args[1])
    if len(args) != 1:
        raise SystemExit('usage: summarize.py DIR | summarize.py --merge DIR SHARD-DIR...')
    summarize(args[0])
    return 0


if __name__ == '__main__':
    sys.exit(main())
