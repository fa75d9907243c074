#!/usr/bin/env python3
"""Host test of the shell's line editor (user/sh/lineedit.c): our sh, built
for the guest, runs unchanged on this Linux host; here it runs interactively
on a pseudo-terminal and keys are typed into it, as a user would. Each case
types keys and checks what the command line ran (by its output), and some of
what the editor drew.

usage: tests/pty/lineedit_test.py [PROGS]   (default build/progs: sh and its utilities)
Prints ok/not ok lines and `N passed, N failed`; exits 1 if any failed.
"""

import os
import pty
import re
import select
import sys
import tempfile
import time

LIMIT = 10   # seconds for one answer
PROMPT = b"$ "


class Shell:
    """sh -i on a pseudo-terminal, in a scratch directory, PATH = progs."""

    def __init__(self, progs, cwd):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.chdir(cwd)
            env = {"PATH": progs, "HOME": cwd, "TERM": "vt100"}
            os.execve(os.path.join(progs, "sh"), ["sh", "-i"], env)
        self.seen = b""
        self.pos = 0

    def expect(self, pattern, limit=LIMIT):
        """Reads until the bytes regex appears after the last match."""
        deadline = time.monotonic() + limit
        rx = re.compile(pattern)
        while not (m := rx.search(self.seen, self.pos)):
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            ready, _, _ = select.select([self.fd], [], [], left)
            if ready:
                try:
                    chunk = os.read(self.fd, 4096)
                except OSError:
                    return False
                if not chunk:
                    return False
                self.seen += chunk
        self.pos = m.end()
        return True

    def prompt(self):
        return self.expect(re.escape(PROMPT))

    def send(self, data):
        os.write(self.fd, data)

    def close(self):
        if self.pid:
            os.kill(self.pid, 9)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


UP, DOWN, LEFT, RIGHT = b"\x1b[A", b"\x1b[B", b"\x1b[D", b"\x1b[C"
HOME, END, DELETE = b"\x1b[H", b"\x1b[F", b"\x1b[3~"


def C(ch):
    return bytes([ord(ch) & 0x1f])


# (name, keys typed after a prompt, regex the output must then show). Each
# line's output is framed by "<" and ">" so that the editor's own drawing,
# which shows the typed text, cannot match it.
CASES = [
    ("a plain line runs", b"echo '<'plain'>'\r", rb"<plain>"),
    ("up arrow recalls the previous line", UP + b"\r", rb"<plain>"),
    ("^P recalls, ^N comes back to the new line",
     C("P") + C("N") + b"echo '<'new'>'\r", rb"<new>"),
    ("up twice goes further back, down comes forward",
     UP + UP + DOWN + b"\r", rb"<new>"),
    ("left arrow, then typing inserts in the middle",
     b"echo '<'ac'>'" + LEFT * 4 + b"b\r", rb"<abc>"),
    ("^A and ^E move to the ends",
     b"'<'mid'>'" + C("A") + b"echo " + C("E") + b" end\r", rb"<mid> end"),
    ("Home and End keys move to the ends",
     b"'<'x'>'" + HOME + b"echo " + END + b"y\r", rb"<x>y"),
    ("backspace erases across the line",
     b"echo '<'abXY" + b"\x7f\x7f" + b"'>'\r", rb"<ab>"),
    ("backspace in the middle of the line",
     b"echo '<'aXb'>'" + LEFT * 4 + b"\x7f\r", rb"<ab>"),
    ("Delete and ^D erase at the cursor",
     b"echo '<'aXYb'>'" + LEFT * 6 + DELETE + C("D") + b"\r", rb"<ab>"),
    ("^K erases to the end of the line",
     b"echo '<'k'>' junk junk" + LEFT * 10 + C("K") + b"\r", rb"<k>\r*\n"),
    ("^U erases to the start of the line",
     b"junk junk echo '<'u'>'" + LEFT * 12 + C("U") + b"\r", rb"<u>"),
    ("^W erases the word before the cursor",
     b"echo '<'w'>' wrong  " + C("W") + b"right\r", rb"<w> right"),
    ("^C cancels the line and prompts again",
     b"echo '<'cancelled'>'" + C("C") + b"echo '<'after'>'\r", rb"\^C\r*\n\$ echo '<'after'>'\r*\n<after>"),
    ("tab completes a file name",
     b"cat uni\t\r", rb"unique-file-contents"),
    ("tab completes a directory, then a file in it",
     b"cat sub\tin\t\r", rb"inner-contents"),
    ("tab completes a command name from PATH",
     b"ech\t'<'cmd'>'\r", rb"<cmd>"),
    ("a second tab lists the choices",
     b"cat amb\t\t" + C("U") + b"\r", rb"ambiguous-1  ambiguous-2"),
    ("tab after a whole name adds the space",
     b"cat unique\t" + b"sub/inner\r", rb"unique-file-contents\r*\ninner-contents"),
    ("a name with a space is completed quoted",
     b"cat spa\t\r", rb"spaced-contents"),
    ("the terminal is back to canonical mode while a command runs",
     b"read v; echo '<'$v'>'\r", None),
]


def main():
    progs = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "build/progs")
    results = []

    def check(ok, name):
        results.append(ok)
        print(f"{'ok' if ok else 'not ok'} {len(results)} - lineedit: {name}", flush=True)

    with tempfile.TemporaryDirectory(prefix="lineedit-") as tmp:
        files = {"unique": "unique-file-contents", "sub/inner": "inner-contents",
                 "ambiguous-1": "", "ambiguous-2": "", "spaced name": "spaced-contents"}
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(tmp, name)), exist_ok=True)
            with open(os.path.join(tmp, name), "w") as f:
                f.write(text + "\n")
        sh = Shell(progs, tmp)
        try:
            ok = sh.prompt()
            check(ok, "the shell prompts on a terminal")
            for name, keys, want in CASES:
                if not ok:   # start the next case on a fresh line
                    sh.send(C("C"))
                    sh.prompt()
                sh.send(keys)
                if want is None:   # the read case: a line typed to `read`, edited by the tty
                    time.sleep(0.5)
                    sh.send(b"ab\x17cd\r")
                    want = rb"<cd>"
                ok = sh.expect(want) and sh.prompt()
                check(ok, name)
            sh.send(C("D"))
            check(sh.expect(rb"\n") and wait_exit(sh), "^D on an empty line ends the shell")
        finally:
            if not all(results):
                print("# terminal output (last 40 lines):")
                text = sh.seen.decode(errors="replace").replace("\r", "")
                for line in text.splitlines()[-40:]:
                    print(f"#   {line!r}")
            sh.close()
    failed = results.count(False)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def wait_exit(sh):
    deadline = time.monotonic() + LIMIT
    while time.monotonic() < deadline:
        done, _ = os.waitpid(sh.pid, os.WNOHANG)
        if done:
            sh.pid = 0
            return True
        time.sleep(0.05)
    return False


if __name__ == "__main__":
    sys.exit(main())
