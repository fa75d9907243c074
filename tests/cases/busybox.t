# Debian's busybox-static, linked into /bin for the tools our own programs do
# not provide (user/busybox.mk): each runs, on the host with build/progs and in
# the guest with /bin. The editor, vi, needs a terminal: tools/runqemu_test.py
# edits a file with it on the guest's console.

## our own programs keep their names; busybox provides the rest
test -L "$PATH/sed" && test ! -L "$PATH/ls" && test ! -L "$PATH/sh" && echo ok
-- out
ok

## busybox find lists a tree, by name and type (find is our own: find.t)
mkdir -p d/e && touch d/a.c d/e/b.c d/e/c.h
busybox find d -name '*.c' | busybox sort
busybox find d -type d | busybox sort
-- out
d/a.c
d/e/b.c
d
d/e

## busybox sort: numeric, reverse, unique
printf '10\n9\n100\n9\n' | busybox sort -n
printf 'b\na\nc\na\n' | busybox sort -ru
-- out
9
9
10
100
c
b
a

## sed substitutes, deletes and prints lines; -i edits a file
printf 'one\ntwo\nthree\n' > f
sed -e 's/o/0/g' -e '2d' f
sed -n '2p' f
sed -i 's/three/3/' f && cat f
-- out
0ne
three
two
one
two
3

## busybox xargs runs a command with the words it reads
printf 'a b\nc\n' | busybox xargs echo args:
printf 'x\ny\n' | busybox xargs -n 1 echo one:
-- out
args: a b c
one: x
one: y

## tee writes to a file and to standard output
echo teed | tee t1 t2 && cat t1 t2
-- out
teed
teed
teed

## diff shows the changed lines; same files give status 0
printf 'a\nb\nc\n' > x && printf 'a\nB\nc\n' > y
diff x y; echo "status $?"
diff x x; echo "status $?"
-- out
--- x
+++ y
@@ -1,3 +1,3 @@
 a
-b
+B
 c
status 1
status 0

## date formats a given time in UTC
date -u -d @86400 '+%Y-%m-%d %H:%M:%S %a'
date -u +%Y | grep -q '^20[0-9][0-9]$' && echo this century
-- out
1970-01-02 00:00:00 Fri
this century

## printf formats numbers and strings
printf '%05d|%-4s|%x|%s\n' 42 ab 255 'with space'
-- out
00042|ab  |ff|with space

## more copies a file when its output is not a terminal
printf 'line 1\nline 2\n' > m && more m
-- out
line 1
line 2

## which finds a program on PATH, and fails for a missing one
test "$(which sort)" = "$PATH/sort" && echo found
which no-such-program; echo "status $?"
-- out
found
status 1

## time runs a command and reports its times on standard error
time -p true 2>&1 | cut -d' ' -f1
-- out
real
user
sys

## awk, cut, tr and uniq in a pipeline
printf 'b 2\na 1\nb 3\n' | awk '{s[$1] += $2} END {print s["a"], s["b"]}'
echo a:b:c | cut -d: -f2,3
echo hello | tr a-z A-Z
printf 'x\nx\ny\n' | uniq -c | tr -s ' '
-- out
1 5
b:c
HELLO
 2 x
 1 y

## ed edits a file from a script (it prints the sizes it read and wrote)
printf 'first\nsecond\n' > e
printf '2s/second/changed/\nw\nq\n' | ed e && cat e
-- out
13
14
first
changed

## expr, seq, basename, dirname
expr 6 \* 7
seq 3 | tr '\n' ' '; echo
basename /a/b/c.txt .txt
dirname /a/b/c.txt
-- out
42
1 2 3 
c
/a/b

## tar and gzip round-trip a directory
mkdir -p src && echo data > src/f
tar -czf a.tgz src && rm -r src && tar -xzf a.tgz && cat src/f
-- out
data

## id and whoami give names (/etc/passwd and /etc/group), not numbers
id -un | grep -c '[^0-9]'
id -gn | grep -c '[^0-9]'
test "$(whoami)" = "$(id -un)" && echo same
-- out
1
1
same

## /proc/self/maps: the program's code under its path, its stack as [stack]
grep -q '^[0-9a-f]*-[0-9a-f]* r-xp [0-9a-f]* [0-9a-f]*:[0-9a-f]* [1-9][0-9]* *\/.*\/grep$' /proc/self/maps && echo code
grep '\[stack\]$' /proc/self/maps | grep -c '^[0-9a-f]*-[0-9a-f]* rw-p '
-- out
code
1

## ls -l /proc/self/exe shows a link to the program; readlink reads it
ls -l /proc/self/exe | grep -c '^l.* /proc/self/exe -> /.*/ls$'
test -f "$(readlink /proc/self/exe)" && echo file
-- out
1
file

## busybox ps shows a background job with the shell as its parent, and memory
sleep 5 &
busybox ps -o pid,ppid,vsz,comm > out
kill $!
grep -c "^ *$! *$$ *[1-9][0-9]* sleep$" out
-- out
1

## nc: busybox nc sends to another nc over TCP on 127.0.0.1 and back
nc -l -p 40123 > got 2> err &
for i in $(seq 300); do echo hello over tcp | nc 127.0.0.1 40123 > back 2>/dev/null && break; usleep 20000; done
wait
cat got err back
-- out
hello over tcp
