#!/usr/bin/env python3
"""Host <-> guest networking through QEMU's user network, as `make qemu
HOSTFWD=...` gives it. The guest (tests/net/hostnet.sh, run with RUN=) serves
a file with Debian's busybox httpd and listens with busybox nc; this host
fetches the file through a hostfwd port and uploads a few MiB to the nc
through another. Then the guest fetches a file from this host with busybox
wget and sends one with nc, through guestfwd: each guest connection to
10.0.2.100 runs this script again (--serve, --sink) with the connection as
its stdin and stdout. Every transfer is compared byte for byte.

usage: tests/net/hostnet_test.py [ESP]   (default build/esp.img)
Prints ok/not ok lines and `N passed, N failed`; exits 1 if any failed.
"""

import hashlib
import os
import random
import re
import select
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
RUNQEMU = os.path.join(HERE, "..", "..", "tools", "runqemu")
RUN_LIMIT = 600     # seconds for the whole guest run (TCG on a loaded host)
STEP_LIMIT = 120    # seconds for one step
SEQ = "".join(f"{i}\n" for i in range(1, 400001)).encode()   # `seq 1 400000`
UPLOAD = random.Random(20261205).randbytes(3 << 20)           # 3 MiB


def serve(root):
    """--serve ROOT: one HTTP/1.0 request on stdin, its answer on stdout."""
    request = sys.stdin.buffer.readline().decode("latin-1").split()
    while sys.stdin.buffer.readline().strip():
        pass                                 # the headers
    path = os.path.join(root, os.path.basename(request[1])) if len(request) > 1 else ""
    out = sys.stdout.buffer
    if os.path.isfile(path):
        with open(path, "rb") as f:
            body = f.read()
        out.write(b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
    else:
        out.write(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n")
    out.flush()


def sink(path):
    """--sink FILE: stdin to FILE, until the guest closes."""
    with open(path, "wb") as f:
        while chunk := sys.stdin.buffer.read1(65536):
            f.write(chunk)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Guest:
    """runqemu --run with the forwards; its console read line by line."""

    def __init__(self, esp, tmp, http_port, nc_port):
        me = shlex.quote(os.path.abspath(__file__))
        self.proc = subprocess.Popen(
            [RUNQEMU, "--esp", esp, "--cpus", "2", "--timeout", str(RUN_LIMIT),
             "--hostfwd", f"{http_port}:80", "--hostfwd", f"{nc_port}:81",
             "--guestfwd", f"80:python3 {me} --serve {shlex.quote(tmp)}",
             "--guestfwd", f"81:python3 {me} --sink {shlex.quote(tmp)}/from-guest",
             "--run", "sh /tests/hostnet.sh"],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.buf = b""
        self.lines = []

    def expect(self, pattern, limit=STEP_LIMIT):
        """The first unread "hostnet: " line matching pattern, or None."""
        deadline = time.monotonic() + limit
        while True:
            for i, line in enumerate(self.lines):
                if m := re.match(r"hostnet: " + pattern, line):
                    del self.lines[:i + 1]
                    return m
            left = deadline - time.monotonic()
            if left <= 0 or not self.read(left):
                return None

    def read(self, wait):
        ready, _, _ = select.select([self.proc.stdout], [], [], wait)
        if not ready:
            return True
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return False
        self.buf += chunk
        *done, self.buf = self.buf.split(b"\n")
        for line in done:
            line = line.decode("utf-8", "replace").strip("\r")
            print(f"# {line}", flush=True)    # the console, for the log
            self.lines.append(line)
        return True

    def finish(self):
        try:
            self.proc.wait(timeout=STEP_LIMIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        return self.proc.returncode


def fetch(url):
    """The status and body of a GET; the first tries may meet a guest not yet listening."""
    for _ in range(50):
        try:
            with urllib.request.urlopen(url, timeout=STEP_LIMIT) as r:
                return r.status, r.read()
        except urllib.error.HTTPError as e:
            return e.code, b""
        except OSError:
            time.sleep(0.5)
    return None, b""


def upload(port, data):
    """Sends data to the guest's nc and closes; whether all of it went."""
    with socket.create_connection(("127.0.0.1", port), timeout=STEP_LIMIT) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        return s.recv(1) == b""              # nc sends nothing back


def md5(data):
    return hashlib.md5(data).hexdigest()


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--serve":
        return serve(sys.argv[2])
    if len(sys.argv) == 3 and sys.argv[1] == "--sink":
        return sink(sys.argv[2])
    esp = sys.argv[1] if len(sys.argv) > 1 else "build/esp.img"
    results = []

    def check(good, what):
        results.append((bool(good), what))

    with tempfile.TemporaryDirectory(prefix="hostnet-") as tmp:
        with open(os.path.join(tmp, "big"), "wb") as f:
            f.write(SEQ)
        http_port, nc_port = free_port(), free_port()
        guest = Guest(esp, tmp, http_port, nc_port)
        ready = guest.expect("ready")
        check(ready, "the guest starts busybox httpd and nc -l")
        if ready:
            t = time.monotonic()
            status, body = fetch(f"http://127.0.0.1:{http_port}/big")
            print(f"# guest httpd -> host: {len(body):,} bytes in {time.monotonic() - t:.2f} s")
            check(status == 200 and body == SEQ,
                  f"the host fetches {len(SEQ):,} bytes from busybox httpd in the guest through "
                  f"hostfwd, all equal (status {status}, {len(body):,} bytes)")
            status, _ = fetch(f"http://127.0.0.1:{http_port}/missing")
            check(status == 404, f"a missing file is 404 from the guest's httpd ({status})")
            try:
                t = time.monotonic()
                sent = upload(nc_port, UPLOAD)
            except OSError as e:
                sent = False
                print(f"# upload: {e}")
            check(sent, f"the host sends {len(UPLOAD):,} bytes to nc in the guest through hostfwd")
            m = guest.expect(r"up (\d+) (\w+)")
            print(f"# host -> guest nc: {len(UPLOAD):,} bytes in {time.monotonic() - t:.2f} s "
                  "(until the guest's md5sum has read them)")
            check(m and int(m[1]) == len(UPLOAD) and m[2] == md5(UPLOAD),
                  "the guest received them all, equal (size and md5 "
                  f"{m[1] + ' ' + m[2] if m else '-'})")
            m = guest.expect(r"wget status (\d+)")
            check(m and m[1] == "0", f"busybox wget in the guest fetches from the host through "
                  f"guestfwd (status {m[1] if m else '-'})")
            m = guest.expect(r"down (\d+) (\w+)")
            check(m and int(m[1]) == len(SEQ) and m[2] == md5(SEQ),
                  f"the guest's copy equals the host's file ({m[1] if m else '-'} bytes)")
            m = guest.expect(r"wget missing status (\d+)")
            check(m and m[1] != "0", f"wget of a missing file fails ({m[1] if m else '-'})")
            m = guest.expect(r"nc status (\d+)")
            check(m and m[1] == "0", f"the guest's nc sends to the host through guestfwd "
                  f"(status {m[1] if m else '-'})")
            done = guest.expect("done")
            check(done, "the guest script ran to its end")
        rc = guest.finish()
        check(rc == 0, f"the guest run ends with status 0 ({rc})")
        got = b""
        if os.path.exists(os.path.join(tmp, "from-guest")):
            with open(os.path.join(tmp, "from-guest"), "rb") as f:
                got = f.read()
        check(got == SEQ, f"the host received the guest's {len(SEQ):,} bytes, all equal "
              f"({len(got):,})")

    failed = 0
    for n, (good, what) in enumerate(results, 1):
        print(f"{'ok' if good else 'not ok'} {n} - hostnet: {what}")
        failed += not good
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
