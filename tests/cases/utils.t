# Cases for the utilities in user/ (format: tests/cases/runcases.c).

## true and false
true; echo $?; false; echo $?
-- out
0
1

## echo and echo -n
echo a  b c; echo -n x; echo y; echo; echo end
-- out
a b c
xy

end

## cat files, stdin and -
echo 1 > a; echo 2 > b
cat a b
echo 3 | cat a - b
-- out
1
2
1
3
2

## cat of a missing file says so and fails
cat nope
echo $?
-- out
cat: nope: No such file or directory
1

## ls sorts and hides dot files; -a shows them
touch b a .h
mkdir c
ls
ls -a
-- out
a
b
c
.
..
.h
a
b
c

## ls of files and directories, with headings
mkdir d e; touch d/x f
ls f d e
-- out
f

d:
x

e:

## ls -l shows type, permissions, links and size
echo hello > f
chmod 640 f
mkdir d
ln -s f l
ls -l | grep -c '^-rw-r----- .* 6 .* f$'
ls -l | grep -c '^d'
ls -l | grep -c '^l.* l -> f$'
-- out
1
1
1

## ls of a missing file
ls /nonexistent
echo $?
-- out
ls: /nonexistent: No such file or directory
1

## mkdir, mkdir -p and errors
mkdir a
mkdir a
echo $?
mkdir -p a/b/c
mkdir -p a/b/c
echo $?
ls a/b
mkdir x/y
echo $?
-- out
mkdir: a: File exists
1
0
c
mkdir: x/y: No such file or directory
1

## rmdir removes empty directories only
mkdir -p a/b
rmdir a
echo $?
rmdir a/b a
ls
-- out
rmdir: a: Directory not empty
1

## rm files; -f ignores missing; -r removes trees
touch f g
rm f
rm nope
echo $?
rm -f nope
echo $?
mkdir -p d/e; touch d/e/x d/y
rm d
echo $?
rm -rf d g
ls
-- out
rm: nope: No such file or directory
1
0
rm: d: Is a directory
1

## ln makes hard links, ln -s symbolic ones
echo data > f
ln f g
ln -s f s
cat g s
stat f | grep -c 'Links: 2'
stat s | grep -c 'symbolic link'
mkdir d
ln f d
cat d/f
-- out
data
data
1
1
data

## mv renames, and moves into a directory
echo m > a
mv a b
cat b
mkdir d
mv b d
ls d
mv nope x
echo $?
-- out
m
b
mv: nope: No such file or directory
1

## cp copies, into a directory, and -r trees
echo c > a
cp a b
mkdir d
cp a b d
cat b d/a d/b
mkdir -p t/u; echo deep > t/u/f
cp -r t t2
cat t2/u/f
cp t t3
echo $?
-- out
c
c
c
deep
cp: t: Is a directory (use -r)
1

## wc counts lines, words, bytes; flags; totals
echo 'one two' > a
echo three >> a
wc a
wc -l a
wc -w < a
wc -c a a
-- out
2 3 14 a
2 a
3
14 a
14 a
28 total

## head and tail
echo 1 > f; echo 2 >> f; echo 3 >> f; echo 4 >> f
head -n 2 f
head -1 f
tail -n 2 f
tail -1 f
cat f | tail -n 10 | wc -l
cat f | head -n 3 | tail -n 1
-- out
1
2
1
3
4
4
4
3

## head of many files shows names
echo a > x; echo b > y
head x y
-- out
==> x <==
a

==> y <==
b

## grep literal, -v, -c, -n, -i
echo apple > f; echo Banana >> f; echo cherry >> f
grep an f
grep -v an f
grep -c a f
grep -n err f
grep -i BANANA f
grep zzz f
echo $?
-- out
Banana
apple
cherry
2
3:cherry
Banana
1

## grep regular expressions: ^ $ . * []
echo abc > f; echo aXc >> f; echo abbbc >> f; echo ac >> f; echo xabc >> f
grep '^ab*c$' f
echo --
grep 'a.c' f
echo --
grep '^[a-b][^b]c' f
echo --
grep 'c$' f | wc -l
-- out
abc
abbbc
ac
--
abc
aXc
xabc
--
aXc
--
5

## grep -l and -r, and missing files
mkdir d; echo needle > d/a; echo hay > d/b
grep -r needle d
grep -l needle d/a d/b
grep x nope
echo $?
-- out
d/a:needle
d/a
grep: nope: No such file or directory
2

## grep -F takes the pattern literally
echo 'a.*b' > f; echo axxb >> f
grep -F '.*' f
-- out
a.*b

## env prints the environment, sets variables, and runs commands
env | grep -c '^PATH='
env X=1 env | grep '^X='
env -i Y=2 env
env nosuch
echo $?
env sh -c 'exit 4'
echo $?
-- out
1
X=1
Y=2
env: nosuch: No such file or directory
127
4

## pwd
mkdir d; cd d; pwd | grep -c '/d$'
-- out
1

## touch creates files and keeps contents
echo keep > f
touch f g
cat f g
ls
-- out
keep
f
g

## stat reports size and type
echo 12345 > f
mkdir d
stat f | grep -c 'Size: 6 '
stat d | grep -c directory
stat nope
echo $?
-- out
1
1
stat: nope: No such file or directory
1

## uname
uname | wc -l
uname -a | wc -w | grep -c -v '^[0-4]$'
uname -q
echo $?
-- out
1
1
uname: unknown option -q
2

## nproc prints a positive number
nproc | grep -c '^[1-9][0-9]*$'
-- out
1

## sleep waits, and rejects bad arguments
sleep 0.1
echo $?
sleep x
echo $?
-- out
0
usage: sleep seconds
2

## kill sends signals
sleep 5 &
kill $!
wait $!
echo $?
sleep 5 &
kill -KILL $!
wait $!
echo $?
kill -9 999999999
echo $?
kill -l | grep -c TERM
-- out
143
137
kill: 999999999: No such process
1
1

## ps lists processes from /proc: a background job, with our shell as its parent; /proc as a redirection and as the cwd
sleep 5 &
ps > out
head -1 out
grep -c "^ *$! *$$ S  *0:00:00 sleep 5$" out
kill $!
wait $!
ps -x
echo $?
grep -c '^MemTotal:' < /proc/meminfo
cd /proc && grep -c '^cpu ' stat
-- out
     PID     PPID S     TIME COMMAND
1
usage: ps
2
1
1

## test and [: strings, numbers, files, ! -a -o
touch f; mkdir d
test a = a; echo $?
[ a != a ]; echo $?
[ -n "" ]; echo $?
[ -z "" ]; echo $?
[ 3 -lt 10 ]; echo $?
[ 10 -le 3 ]; echo $?
[ -f f -a -d d ]; echo $?
[ -f d -o -e nope ]; echo $?
[ ! -e nope ]; echo $?
[ -s f ]; echo $?
test; echo $?
test x; echo $?
[ 1 -eq x ]; echo $?
[ a = a; echo $?
-- out
0
1
1
0
0
1
0
1
0
1
1
0
test: integer expected
2
test: missing ]
2
