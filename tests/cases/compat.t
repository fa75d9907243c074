# Binaries built with other C libraries (tests/compat/abicheck.c, static musl and
# static glibc, and a dynamically linked glibc one): the same output on the Linux
# host and on our kernel.

## a static musl binary runs unmodified
abicheck-musl
-- out
uname: 0 Linux
pid positive: 1
write: 6
pread: 6 hello
fstat: 0 size 6 mode 640 nlink 1
open missing: -1 errno 2
link: 0
stat nlink: 0 2
readdir: 4 entries, a 1 b 1
pipe: 10 from child; child exit 7
signal: 10
mmap: 1 x 0
clock: 1

## a static glibc binary runs unmodified
abicheck-glibc
-- out
uname: 0 Linux
pid positive: 1
write: 6
pread: 6 hello
fstat: 0 size 6 mode 640 nlink 1
open missing: -1 errno 2
link: 0
stat nlink: 0 2
readdir: 4 entries, a 1 b 1
pipe: 10 from child; child exit 7
signal: 10
mmap: 1 x 0
clock: 1

## a dynamically linked binary is refused, not run as a script
abicheck-dynamic
echo status $?
-- out
sh: abicheck-dynamic: not a static executable
status 126
