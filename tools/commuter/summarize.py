#!/usr/bin/env python3
"""Summarize a conformance runner log (its `# pair` lines and closing line) into
summary.txt and summary.json next to it, in the shape the runner's own -J
writes: {"tests", "passed", "failed", "skipped", "per_pair": {pair: {...}}}.
Used where the runner's files cannot be copied out (our guest).

    tools/commuter/summarize.py DIR      (reads DIR/log.txt)
"""
import json
import os
import re
import sys

PAIR = re.compile(r'^# pair (\S+)\s+tests\s+(\d+) passed\s+(\d+) skipped\s+(\d+)')
RESULT = re.compile(r'^(ok|not ok) \d+ - ')


def main():
    d = sys.argv[1]
    per_pair, text = {}, []
    tests = passed = failed = skipped = 0
    with open(os.path.join(d, 'log.txt'), errors='replace') as f:
        for line in f:
            line = line.rstrip('\r\n')
            m = PAIR.match(line)
            if m:
                t, p, s = (int(m.group(i)) for i in (2, 3, 4))
                per_pair[m.group(1)] = {'tests': t, 'passed': p, 'skipped': s}
                text.append(line[len('# pair '):])
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
        f.write('\n'.join(text) + '\n')
    print(f'{tests} tests, {passed - skipped} passed, {failed} failed, {skipped} skipped')
    return 0


if __name__ == '__main__':
    sys.exit(main())
