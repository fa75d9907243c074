#!/usr/bin/env python3
"""Host test of tools/runqemu. The guest console as `make qemu` gives it, on
a pseudo-terminal: ^C, ^\\ and ^Z reach the guest (each stops a foreground
`sleep` and the shell prompts again) instead of killing QEMU; the shell's
line editor, the console's canonical-mode editing and busybox's vi work;
Ctrl-A X still quits. `--run CMD` (make qemu RUN=...) exits with the command's whole
status and says it last. The guest's wall clock is the host's. gdb, with the
.gdbinit of `make qemu-gdb`, stops the kernel in a system call and shows its
backtrace, and a second gdb attaches to the running guest without waiting.

usage: tools/runqemu_test.py [ESP]   (default build/esp.img)
Prints ok/not ok lines and `N passed, N failed`; exits 1 if any failed.
"""

import calendar
import os
import pty
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
RUNQEMU = os.path.join(HERE, "runqemu")
BOOT_LIMIT = 120   # seconds for firmware, kernel and /etc/rc (TCG, a loaded host)
STEP_LIMIT = 30    # seconds for one command's answer
PROMPT = b"$ "


class Console:
    """runqemu --interactive on a pseudo-terminal, as a user's terminal runs it."""

    def __init__(self, esp):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            os.execv(RUNQEMU, [RUNQEMU, "--esp", esp, "--cpus", "1", "--interactive"])
        self.seen = b""   # everything the terminal showed
        self.pos = 0      # where the last expected text ended in it

    def expect(self, pattern, limit):
        """Reads until pattern (a bytes regex) appears after the last match;
        returns whether it did within limit seconds."""
        deadline = time.monotonic() + limit
        while not (m := re.compile(pattern).search(self.seen, self.pos)):
            left = deadline - time.monotonic()
            if left <= 0 or not self.read(left):
                return False
        self.pos = m.end()
        return True

    def read(self, wait):
        ready, _, _ = select.select([self.fd], [], [], wait)
        if not ready:
            return True   # nothing yet; the caller checks its deadline
        try:
            chunk = os.read(self.fd, 4096)
        except OSError:   # EIO: the other side closed
            return False
        self.seen += chunk
        return bool(chunk)

    def send(self, data):
        try:
            os.write(self.fd, data)
        except OSError:   # the other side is gone: what follows fails
            pass

    def wait_exit(self, limit):
        """runqemu's exit status, or None if it is still running after limit s."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            self.read(0.2)
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.pid = 0
                return os.waitstatus_to_exitcode(status)
        return None

    def close(self):
        if self.pid:
            os.kill(self.pid, signal.SIGTERM)
            os.waitpid(self.pid, 0)
        os.close(self.fd)


def console_tests(esp, check):
    con = Console(esp)
    try:
        booted = con.expect(re.escape(PROMPT), BOOT_LIMIT)
        check(booted, "runqemu: console: the shell prompts on the terminal")
        if not booted:
            return
        for key, name in ((b"\x03", "^C"), (b"\x1c", "^\\"), (b"\x1a", "^Z")):
            con.send(b"sleep 100\r")
            # The terminal turns the guest's \r\n into \r\r\n.
            started = con.expect(rb"sleep 100\r*\n", STEP_LIMIT)
            # A key that comes before the shell has started sleep stops nothing
            # (the shell ignores it): give it time, and send the key again if
            # the prompt does not come back.
            back = False
            for _ in range(3):
                if back or not started:
                    break
                time.sleep(1)
                con.send(key)
                back = con.expect(re.escape(PROMPT), STEP_LIMIT / 3)
            check(back, f"runqemu: console: {name} stops a foreground sleep and the prompt comes back")
        con.send(b"echo alive $((6*7))\r")
        check(con.expect(rb"alive 42", STEP_LIMIT), "runqemu: console: QEMU and the shell survive them")
        line_editing_tests(con, check)
        tty_canonical_tests(con, check)
        vi_test(con, check)
        con.send(b"\x01x")   # Ctrl-A X: QEMU's own quit key
        check(con.wait_exit(STEP_LIMIT) == 0, "runqemu: console: Ctrl-A X quits QEMU, status 0")
    finally:
        if not all(ok for ok, _ in check.results):
            sys.stdout.write("# terminal output:\n")
            text = con.seen.decode(errors="replace").replace("\r", "")
            for line in text.splitlines()[-30:]:
                sys.stdout.write(f"#   {line}\n")
        con.close()


def line_editing_tests(con, check):
    """The shell's line editor (user/sh/lineedit.c) on the guest's console;
    tests/pty/lineedit_test.py checks every key on the host. Output is framed
    by < and >, which the editor's drawing of the typed line cannot show."""
    cases = (
        (b"echo '<'first'>'\r", rb"<first>", "a line runs"),
        (b"\x1b[A\r", rb"<first>", "up arrow recalls the previous line"),
        (b"echo '<'ac'>'\x1b[D\x1b[D\x1b[D\x1b[Db\r", rb"<abc>",
         "left arrow and typing edit the middle of the line"),
        (b"echo '<'w'>' wrong\x17right\r", rb"<w> right", "^W erases the word before the cursor"),
        (b"ls /etc/r\t\r", rb"\n/etc/rc\r*\n", "tab completes a file name"),
    )
    for keys, want, name in cases:
        con.send(keys)
        check(con.expect(want, STEP_LIMIT) and con.expect(re.escape(PROMPT), STEP_LIMIT),
              f"runqemu: console: line editing: {name}")
    # Keys typed while a command runs (the tty's canonical mode holds them)
    # reach the editor when it takes the terminal.
    con.send(b"sleep 2\r")
    started = con.expect(rb"sleep 2\r*\n", STEP_LIMIT)
    con.send(b"echo '<'ahead'>'")
    back = started and con.expect(re.escape(PROMPT), STEP_LIMIT)
    con.send(b"\r")
    check(back and con.expect(rb"\n<ahead>", STEP_LIMIT) and con.expect(re.escape(PROMPT), STEP_LIMIT),
          "runqemu: console: line editing: keys typed ahead during a command are kept")


def tty_canonical_tests(con, check):
    """The console's canonical mode, as `cat` reads it: ECHOCTL shows a
    control character as ^X and erasing it takes both columns; ^W (VWERASE),
    ^U (VKILL) and DEL (VERASE) edit the line; a tab is erased back to where
    it began."""
    con.send(b"cat\r")
    started = con.expect(rb"cat\r*\n", STEP_LIMIT)
    time.sleep(1)   # cat reading: the tty, not the shell's editor, gets the keys
    cases = (
        (b"a\x02b\r", rb"a\^Bb\r*\na\x02b\r*\n", "ECHOCTL echoes ^B as ^B, cat reads the byte"),
        (b"x\x02\x7fy\r", rb"x\^B\x08 \x08\x08 \x08y\r*\nxy\r*\n",
         "DEL erases an echoed ^B, both columns"),
        (b"hello wor\x17there\r", rb"\nhello there\r*\n", "^W erases a word"),
        (b"junk\x15kept\r", rb"junk(\x08 \x08){4}kept\r*\nkept\r*\n", "^U erases the line"),
        (b"ab\t\x7fc\r", rb"ab\t(\x08 \x08){6}c\r*\nabc\r*\n", "DEL erases a tab back to its column"),
    )
    for keys, want, name in cases:
        con.send(keys)
        check(started and con.expect(want, STEP_LIMIT), f"runqemu: console: tty: {name}")
    con.send(b"\x04")
    con.expect(re.escape(PROMPT), STEP_LIMIT)
    # Output processing: without ONLCR a newline goes out alone (the host's
    # terminal adds one \r to each; with ONLCR there would be two).
    con.send(b"stty -onlcr; printf 'x\\ny\\n'; stty onlcr; echo '<'done'>'\r")
    check(con.expect(rb"\nx\r\ny\r\n<done>\r\r\n", STEP_LIMIT),
          "runqemu: console: tty: stty -onlcr sends a newline without \\r")
    con.expect(re.escape(PROMPT), STEP_LIMIT)


def vi_test(con, check):
    """Busybox's vi (user/busybox.mk) edits a file on the console: raw mode,
    the window size, escape keys. Keys go one group at a time, as typed: vi
    reads an ESC followed at once by more bytes as the start of a sequence."""
    con.send(b"cd /tmp && printf 'one\\ntwo\\n' > f && vi f\r")
    ok = con.expect(rb"\x1b\[24;1H\x1b\[K- f 1/2 50%", STEP_LIMIT)
    for keys in (b"jA more", b"\x1b", b"gg", b"iNEW ", b"\x1b", b":wq\r"):
        time.sleep(1)
        con.send(keys)
    ok = ok and con.expect(re.escape(PROMPT), STEP_LIMIT)
    con.send(b"cat f\r")
    check(ok and con.expect(rb"\nNEW one\r*\ntwo more\r*\n", STEP_LIMIT),
          "runqemu: console: busybox vi edits a file and writes it")
    con.expect(re.escape(PROMPT), STEP_LIMIT)


def run_status_tests(esp, check):
    for cmd, want in (("exit 200", 200), ("kill -9 $$", 128 + 9)):
        r = run(esp, cmd)
        ok = r.returncode == want and last_line(r) == f"runqemu: RUN exit status {want}"
        if not ok:
            print(f"# --run {cmd!r}: status {r.returncode}, last line {last_line(r)!r}")
        check(ok, f"runqemu: --run '{cmd}' exits with {want} and says so last")


def clock_test(esp, check):
    """The guest's wall clock is the host's (QEMU's RTC starts at the host's
    time): a file made in the guest has the host's time, give or take the
    boot, to the minute."""
    before = time.time()
    r = run(esp, "touch f && stat f")
    after = time.time()
    m = re.search(r"^Modify: (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\.\d+ UTC$", r.stdout, re.M)
    mtime = calendar.timegm(time.strptime(m.group(1), "%Y-%m-%d %H:%M:%S")) if m else None
    if mtime is None or not before - 60 <= mtime <= after + 60:
        print(f"# status {r.returncode}, host time {before:.0f}..{after:.0f}, guest said:")
        for line in r.stdout.splitlines()[-5:]:
            print(f"#   {line}")
    check(r.returncode == 0 and mtime is not None and before - 60 <= mtime <= after + 60,
          "runqemu: a file made in the guest has the host's time, to the minute")


def free_port():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def gdb(gdbinit, *commands, limit=BOOT_LIMIT):
    """gdb in batch mode with .gdbinit's steps, then commands; its output, or
    None if it did not finish within limit seconds."""
    cmd = ["gdb", "-batch", "-nx", "-x", gdbinit]
    for c in commands:
        cmd += ["-ex", c]
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, errors="replace", timeout=limit)
        return r.stdout
    except subprocess.TimeoutExpired:
        return None


def gdb_tests(esp, check, tmp):
    """make qemu-gdb's pieces: runqemu --gdb PORT, and gdb with the .gdbinit
    that tools/gdbinit.in gives (what `make qemu-gdb` writes, another port)."""
    if not shutil.which("gdb"):
        check(False, "runqemu: gdb: gdb is installed (tools/deps)")
        return
    port = free_port()
    gdbinit = os.path.join(tmp, "gdbinit")
    with open(os.path.join(ROOT, "tools", "gdbinit.in")) as src, open(gdbinit, "w") as dst:
        kernel = os.path.join(os.path.dirname(os.path.abspath(esp)), "kernel.elf")
        dst.write(src.read().replace("@KERNEL@", kernel).replace("@PORT@", str(port)))
    qemu = subprocess.Popen([RUNQEMU, "--esp", esp, "--cpus", "1", "--timeout", str(2 * BOOT_LIMIT),
                             "--gdb", str(port), "--run", "uname; sleep 100"],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    try:
        # gdb retries the connection while QEMU starts (set tcp auto-retry).
        out = gdb(gdbinit, "hbreak sys_uname", "continue", "bt", "delete", "detach") or ""
        check("Temporary breakpoint 1, kmain (" in out,
              "runqemu: gdb: .gdbinit runs a guest waiting at reset to kmain")
        frames = re.findall(r"^#(\d+) +(?:0x[0-9a-f]+ in )?(\w+) ", out, re.M)
        names = [name for _, name in frames]
        ok = names[:1] == ["sys_uname"] and "syscall_entry" in names
        check(ok, "runqemu: gdb: a breakpoint on sys_uname stops `uname`, "
                  "backtrace down to syscall_entry")
        # A second gdb, the guest running: .gdbinit must not wait for kmain.
        again = gdb(gdbinit, "bt 1", "detach", limit=STEP_LIMIT)
        check(again is not None and "Temporary breakpoint" not in again and "detached" in again,
              "runqemu: gdb: attaching to a running guest stops where it is")
        if not ok or again is None:
            print("# gdb said:")
            for line in (out + (again or "(second gdb: timeout)")).splitlines()[-25:]:
                print(f"#   {line}")
    finally:
        qemu.terminate()
        qemu.wait()


def run(esp, cmd):
    return subprocess.run([RUNQEMU, "--esp", esp, "--cpus", "1", "--timeout", str(BOOT_LIMIT),
                           "--run", cmd], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, errors="replace")


def last_line(r):
    return (r.stderr.strip().splitlines() or [""])[-1]


def main():
    esp = sys.argv[1] if len(sys.argv) > 1 else "build/esp.img"
    results = []

    def check(ok, name):
        results.append((bool(ok), name))
        print(f"{'ok' if ok else 'not ok'} {len(results)} - {name}", flush=True)
    check.results = results

    console_tests(esp, check)
    run_status_tests(esp, check)
    clock_test(esp, check)
    with tempfile.TemporaryDirectory(prefix="runqemu-test-") as tmp:
        gdb_tests(esp, check, tmp)
    failed = sum(not ok for ok, _ in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
