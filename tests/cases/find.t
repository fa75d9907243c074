# find, xargs and sort: our own (user/find.c, user/xargs.c, user/sort.c; the
# find lab, labs/find). The find cases sort with busybox's sort, so that each
# program is graded apart from the others.

## find walks a tree: names, types, depths
mkdir -p d/e/f && touch d/a.c d/e/b.c d/e/c.h d/e/f/.hid.c && ln -s a.c d/l
find d | busybox sort
echo --
find d -name '*.c' | busybox sort
echo --
find d -type d | busybox sort
echo --
find d -type l
find d -maxdepth 1 -type f
find d -mindepth 3
find d/e/f -name '.h?d.[abc]'
cd d && find | busybox sort
-- out
d
d/a.c
d/e
d/e/b.c
d/e/c.h
d/e/f
d/e/f/.hid.c
d/l
--
d/a.c
d/e/b.c
d/e/f/.hid.c
--
d
d/e
d/e/f
--
d/l
d/a.c
d/e/f/.hid.c
d/e/f/.hid.c
.
./a.c
./e
./e/b.c
./e/c.h
./e/f
./e/f/.hid.c
./l

## find expressions: ! -o ( ) -path -iname -empty -prune
mkdir -p d/skip d/keep d/none && touch d/skip/x d/keep/x d/keep/Y.TXT d/keep/y.txt
echo data > d/keep/full
find d -type f ! -name x | busybox sort
echo --
find d \( -name x -o -iname 'y.*' \) -path '*keep*' | busybox sort
echo --
find d -name skip -prune -o -type f -name x -print
echo --
find d -empty | busybox sort
echo --
find d -name '[!a-x]*' -type f | busybox sort
-- out
d/keep/Y.TXT
d/keep/full
d/keep/y.txt
--
d/keep/Y.TXT
d/keep/x
d/keep/y.txt
--
d/keep/x
--
d/keep/Y.TXT
d/keep/x
d/keep/y.txt
d/none
d/skip/x
--
d/keep/Y.TXT
d/keep/y.txt

## find -exec, -print0, and files it cannot find
mkdir d && echo one > d/a && echo two > d/b
find d -type f -exec cat {} \; | busybox sort
find d -name a -print0 | busybox tr '\0' :; echo
find d -name a -exec false {} \; -print
find d -name b -exec test -s {} \; -print
find nope; echo "status $?"
find d -bogus; echo "status $?"
-- out
one
two
d/a:
d/b
find: nope: No such file or directory
status 1
find: unknown primary: -bogus
status 1

## xargs: words, quotes, -n, -0
printf 'a b\n  c\n' | xargs echo args:
printf 'x\ny z\n' | xargs -n 2 echo two:
printf '"a b" c\\ d '"'e f'"' ""\n' | xargs -n 1 printf 'one: [%s]\n'
printf 'p q\0r\0' | xargs -0 -n 1 echo nul:
printf 'w1 w2' | xargs
echo '"open' | xargs echo; echo "status $?"
-- out
args: a b c
two: x y
two: z
one: [a b]
one: [c d]
one: [e f]
one: []
nul: p q
nul: r
w1 w2
xargs: unmatched double quote
status 1

## xargs: -I, -t, -r, its input, and exit statuses
printf 'one\n  two words\n' | xargs -I % echo [%] [%]
echo a | xargs -t echo
printf '' | xargs echo empty
printf '' | xargs -r echo never
echo x | xargs sh -c 'cat; echo stdin is empty'
echo x | xargs false; echo "status $?"
echo x y | xargs -n 1 sh -c 'echo $0; exit 255'; echo "status $?"
echo x | xargs no-such-cmd; echo "status $?"
-- out
[one] [one]
[two words] [two words]
echo a
a
empty
stdin is empty
status 123
x
xargs: sh: exited with status 255; aborting
status 124
xargs: no-such-cmd: No such file or directory
status 127

## sort: lines, -r, -u, files, -o
printf 'b\na\nc\na\n' > f
sort f
echo --
sort -r f
echo --
sort -u f
echo --
printf 'B\ny\nx' | sort f -
echo --
sort -o f f && cat f
sort nope; echo "status $?"
-- out
a
a
b
c
--
c
b
a
a
--
a
b
c
--
B
a
a
b
c
x
y
--
a
a
b
c
sort: nope: No such file or directory
status 2

## sort: -n, -k, -t, -f, -b, and keys with -u
printf '10\n9\n-3\n1.5\nabc\n100\n-0\n1.25\n' | sort -n
echo --
printf 'b 2\na 10\nc 1\n' | sort -k2n
echo --
printf 'x:3:b\ny:1:c\nz:2:a\n' | sort -t: -k3
echo --
printf 'b\nB\na\nA\n' | sort -f
echo --
printf 'x  b\ny a\n' | sort -k2b
printf 'x  b\ny a\n' | sort -k2
echo --
printf '1 b\n2 a\n1 a\n' | sort -k1,1n -k2r
echo --
printf 'a 2\nb 1\na 1\n' | sort -u -k1,1
echo --
printf 'ab 3\naa 1\nac 2\n' | sort -k1.2,1.2
-- out
-3
-0
abc
1.25
1.5
9
10
100
--
c 1
b 2
a 10
--
z:2:a
x:3:b
y:1:c
--
A
a
B
b
--
y a
x  b
x  b
y a
--
1 b
1 a
2 a
--
a 2
b 1
--
aa 1
ab 3
ac 2
