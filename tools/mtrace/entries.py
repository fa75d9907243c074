#!/usr/bin/python3
"""Writes the interrupt and exception entry points of a kernel for the mtrace
plugin's entries=FILE argument (see tools/mtrace/mtrace.c): one line per entry,
"irq ADDR" for asynchronous interrupts (whose handlers are not part of the call
that was interrupted), "exc ADDR" for exceptions, "switch ADDR" for the context
switch, addresses in hex.

    entries.py --kallsyms build/linux/kallsyms > FILE    Linux: asm_common_interrupt,
                        asm_spurious_interrupt, asm_sysvec_*; asm_exc_*; __switch_to_asm
    entries.py --elf build/kernel.elf > FILE             ours (kernel/x86/trapasm.S,
                        swtch.S): vector32..vector255; vector0..vector31; swtch
"""

import argparse
import re
import subprocess
import sys

LINUX_IRQ = re.compile(r"asm_(common_interrupt|spurious_interrupt|sysvec_\w+)")
LINUX_EXC = re.compile(r"asm_exc_\w+")
LINUX_SWITCH = "__switch_to_asm"
OURS_SWITCH = "swtch"
OURS_VECTOR = re.compile(r"vector(\d+)")
FIRST_IRQ_VECTOR = 32  # x86: vectors below are exceptions


def symbols(args):
    if args.elf:
        text = subprocess.run(["nm", args.elf], stdout=subprocess.PIPE, text=True,
                              check=True).stdout
    else:
        with open(args.kallsyms) as f:
            text = f.read()
    for line in text.splitlines():
        w = line.split()
        if len(w) >= 3:
            yield int(w[0], 16), w[2]


def classify(args, name):
    if name == (OURS_SWITCH if args.elf else LINUX_SWITCH):
        return "switch"
    if args.elf:
        m = OURS_VECTOR.fullmatch(name)
        if not m:
            return None
        return "irq" if int(m.group(1)) >= FIRST_IRQ_VECTOR else "exc"
    if LINUX_IRQ.fullmatch(name):
        return "irq"
    if LINUX_EXC.fullmatch(name):
        return "exc"
    return None


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--elf")
    g.add_argument("--kallsyms")
    args = p.parse_args()
    rows = sorted(set((kind, addr) for addr, name in symbols(args)
                      for kind in [classify(args, name)] if kind))
    for kind in ("irq", "exc", "switch"):
        if not any(k == kind for k, _ in rows):
            raise SystemExit(f"entries: no {kind} entry points found")
    for kind, addr in rows:
        print(f"{kind} {addr:x}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
