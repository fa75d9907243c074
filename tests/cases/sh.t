# Cases for user/sh (format: tests/cases/runcases.c).

## echo and a simple pipeline
echo hello world | wc -w
-- out
2

## three-stage pipeline
echo b a c | wc -c | cat
-- out
6

## exit status of a pipeline is the last command's
false | true
echo $?
true | false
-- out
0
-- status 1

## ! negates a pipeline
! false && echo negated
-- out
negated

## $? after success and failure
true; echo $?; false; echo $?
-- out
0
1

## && and || short-circuit, left to right
true && echo a; false && echo b; false || echo c; true || echo d
false && echo x || echo y
true || echo x && echo z
-- out
a
c
y
z

## && and || continue on the next line
true &&
echo next
false ||
echo other
-- out
next
other

## semicolons and newlines separate commands
echo 1; echo 2
echo 3
-- out
1
2
3

## > creates and truncates, >> appends, < reads
echo one > f
echo two > f
echo three >> f
cat < f
-- out
two
three

## redirection before the command name
> g echo hi
cat g
-- out
hi

## 2> sends errors to a file
ls /nonexistent 2> err
echo status $?
cat err
-- out
status 1
ls: /nonexistent: No such file or directory

## >f 2>&1 sends both to the file
ls . /nonexistent > both 2>&1
cat both
-- out
ls: /nonexistent: No such file or directory
.:
both

## 2>&1 >f: errors to the old stdout, output to the file
ls . /nonexistent 2>&1 > out | wc -l
cat out
-- out
1
.:
out

## 2>&1 into a pipe
ls /nonexistent 2>&1 | wc -l
-- out
1

## redirection to a missing directory fails the command
echo x > /nonexistent/dir/file
echo $?
-- out
sh: /nonexistent/dir/file: No such file or directory
1

## single quotes keep everything
X=1
echo '$X "a"  b\n'
-- out
$X "a"  b\n

## double quotes expand variables, keep spaces
X='a  b'
echo "[$X]" [$X]
-- out
[a  b] [a b]

## backslash escapes
echo a\ b \$X \\ "q\"q" "\$"
-- out
a b $X \ q"q $

## quotes join with text into one word
X=mid
echo pre"$X"'post'
echo ""x'' "" | wc -w
-- out
premidpost
1

## empty quoted argument is an argument
sh -c 'echo $#' zero "" ""
-- out
2

## unset variable expands to nothing
echo "[$NOPE]" [$NOPE]
-- out
[] []

## ${NAME} braces
V=abc
echo ${V}def
-- out
abcdef

## a lone dollar is literal
echo $ a$ "$"
-- out
$ a$ $

## comments
echo a # not this
# nor this
echo b#c
-- out
a
b#c

## assignments stay in the shell unless exported
A=1
env | grep '^A='
echo status $?
export A
env | grep '^A='
export B=2
env | grep '^B='
-- out
status 1
A=1
B=2

## assignment before a command sets its environment only
C=3 env | grep '^C='
echo "[$C]"
-- out
C=3
[]

## unset removes a variable
D=4
unset D
echo "[$D]"
-- out
[]

## cd changes directory, pwd shows it
mkdir sub
cd sub
pwd | grep -c '/sub$'
cd ..
ls
-- out
1
sub

## cd with no argument goes home
mkdir d
cd d
cd
ls
-- out
d

## cd to a missing directory fails
cd /nonexistent
echo $?
-- out
sh: cd: /nonexistent: No such file or directory
1

## exit with a status
echo before
exit 3
echo after
-- out
before
-- status 3

## exit without a status uses the last one
false
exit
-- out
-- status 1

## script end status is the last command's
true
false
-- out
-- status 1

## command not found gives 127
nosuchcommand
echo $?
-- out
sh: nosuchcommand: not found
127

## script with arguments: $0 $1 $# $@
echo 'echo "$0" $1 $2 $#' > s.sh
echo 'echo all: $@' >> s.sh
echo 'shift; echo after shift: $1 $#' >> s.sh
sh s.sh one two three
-- out
s.sh one two 3
all: one two three
after shift: two 2

## "$@" keeps arguments apart
echo 'for_each() { :; }' > /dev/null
echo 'sh -c "echo \$#" x "$@"' > count.sh
sh count.sh 'a b' c
-- out
2

## exit status of a script
echo 'exit 7' > e.sh
sh e.sh
echo $?
-- out
7

## a script run by name (no #! line) runs in sh
echo 'echo in script $1' > run.sh
chmod 755 run.sh
./run.sh arg
-- out
in script arg

## background job and wait
sleep 0.2 > /dev/null &
echo started
wait
echo done
-- out
started
done

## background and-or list runs in another shell
false || echo bg > bgout &
wait
cat bgout
-- out
bg

## $! is the background process
true &
test_pid=$!
wait
echo "$test_pid" | grep -c '^[0-9][0-9]*$'
-- out
1

## line continuation with backslash
echo a \
b
-- out
a b

## unterminated quote is a syntax error
echo 'abc
-- out
sh: syntax error: unexpected end of input
-- status 2

## syntax error for a stray operator
echo a | | cat
-- out
sh: syntax error near '|'
-- status 2

## ~ is HOME
cd /
cd ~
ls ~
echo ~ | grep -c /tmp
-- out
1

## sh -c with $0
sh -c 'echo $0 $1' name arg
-- out
name arg

## many pipes do not leak descriptors (cat would wait forever)
echo x | cat | cat | cat | cat | cat | wc -l
-- out
1

## builtins honour redirections
export E=5
export > exports
grep -c 'E=5' exports
cd /nonexistent 2> cderr
cat cderr
-- out
1
sh: cd: /nonexistent: No such file or directory

## $(...) substitutes a command's output, trailing newlines cut
echo "[$(echo a; echo b)]"
echo [$(echo a   b)]
N=$(echo x | wc -c)
echo $N
-- out
[a
b]
[a b]
2

## $(...) nests, and sees unexported variables and arguments
V="it's"
sh -c 'echo "$(echo "$V" $1 $(echo deep))"' zero one
echo "$(echo "$V")"
-- out
 one deep
it's

## an assignment's status is its $(...)'s
X=$(false)
echo $?
X=$(true)
echo $?
-- out
1
0

## interactive shell prompts on stderr and keeps going after errors
echo 'echo hi; nosuch; exit 3' | sh -i 2>&1
echo $?
-- out
$ hi
sh: nosuch: not found
3

## interactive shell asks for more with an open quote
echo "echo 'a" > in
echo "b'" >> in
sh -i < in 2>&1
echo end
-- out
$ > a
b
$ end

## other descriptors: 3>f then >&3
echo via3 3>f >&3
cat f
echo x 12>f
echo $?
-- out
via3
sh: 12: bad file descriptor
1

## builtin redirection is undone afterwards
cd / > f
echo still here
-- out
still here

## a shell started through PATH runs $(...) with itself
sh -c 'echo "$(nosuch 2>&1)"'
-- out
sh: nosuch: not found

## "not found" goes where the command's stderr goes
nosuch 2> err
echo $?
cat err
-- out
127
sh: nosuch: not found

## * ? and [...] match file names, sorted; no match keeps the word
touch b.c a.c c.h .hidden
mkdir d; touch d/x.c d/y.h
echo *.c
echo ?.h
echo [ab].c [!a].c
echo *.none
echo */*.c
echo * | wc -w
-- out
a.c b.c
c.h
a.c b.c b.c
*.none
d/x.c
4

## quoted or escaped pattern characters are literal
touch a.c
X='*.c'
echo '*.c' "*.c" \*.c
echo $X "$X"
-- out
*.c *.c *.c
a.c *.c

## .* matches dot files; absolute patterns work
touch .a
echo .[a-z]*
echo /tm? | grep -c /tmp
-- out
.a
1

## if, elif, else
for n in 1 2 3; do
    if [ $n = 2 ]; then echo two; fi
done
if true; then echo yes; else echo no; fi
if false; then echo yes; else echo no; fi
if false; then echo a; elif true; then echo b; else echo c; fi
if false; then echo a; elif false; then echo b; else echo c; fi
if false; then echo a; fi
echo status $?
-- out
two
yes
no
b
c
status 0

## if over several lines, with a pipeline as condition
if echo abc | grep -q b
then
    echo found
fi
-- out
found

## for over words, patterns and "$@"
for x in a 'b c' d; do echo "[$x]"; done
touch f1 f2
for f in f*; do echo $f; done
sh -c 'for a; do echo "<$a>"; done' zero 'x y' z
-- out
[a]
[b c]
[d]
f1
f2
<x y>
<z>

## while and until loops
i=
while test "$i" != xxx; do i=x$i; echo $i; done
echo > count
until grep -q 3 count; do wc -l < count >> count; done
cat count | wc -l
-- out
x
xx
xxx
4

## break and continue
for i in 1 2 3 4 5; do
    if echo $i | grep -q 2; then continue; fi
    if echo $i | grep -q 4; then break; fi
    echo $i
done
for a in x y; do for b in 1 2; do echo $a$b; break 2; done; done
for a in x y; do for b in 1 2; do continue 2; echo no; done; echo no; done
echo end
-- out
1
3
x1
end

## a loop in a pipeline, and redirected
for i in 1 2 3; do echo $i; done | wc -l
for i in a b; do echo $i; done > out
cat out
while false; do :; done < out
echo $?
-- out
3
a
b
0

## nested compound commands and status
for i in 1 2; do
    for j in a b; do
        if [ $j = b ]; then continue; fi
        echo $i$j
    done
done
false
for i in; do :; done
echo $?
-- out
1a
2a
0

## a long loop does not grow without bound
i=0
for a in 0 1 2 3 4 5 6 7 8 9; do for b in 0 1 2 3 4 5 6 7 8 9; do for c in 0 1 2 3 4 5 6 7 8 9; do X="$a$b$c"; done; done; done
echo $X
-- out
999

## syntax errors in compound commands
if true; then echo x; done
-- out
sh: syntax error near 'done'
-- status 2

## reserved words are ordinary words elsewhere
echo if then fi do done
-- out
if then fi do done

## $((...)) arithmetic
i=3
echo $((i+1)) $(( (2+3)*4 )) $((7/2)) $((7%3)) $((-i)) $((i*i-1>7&&1))
echo $((1<2)) $((2<=1)) $((2==3||1)) $((1<<4)) $((6&3)) $((6|3)) $((6^3)) $((!0)) $((~0))
echo "$((i * 2))" $(($i+$i))
n=0; while [ $n -lt 5 ]; do n=$((n+1)); done; echo $n
-- out
4 20 3 1 -3 1
1 0 1 16 2 7 5 1 -1
6 6
5

## bad arithmetic fails the command
echo $((1/0))
echo $?
echo $((2+))
echo $?
-- out
sh: arithmetic: division by zero
2
sh: arithmetic: bad expression: (2+)
2

## read splits a line into variables
echo 'a b  c d' > in
read x y < in
echo "[$x][$y]"
while read line; do echo "<$line>"; done < in
echo 'one\ two three' | while read p q; do echo "[$p][$q]"; done
echo 'keep\ back' | while read -r p q; do echo "[$p][$q]"; done
read z < /dev/null
echo $? "[$z]"
-- out
[a][b  c d]
<a b  c d>
[one two][three]
[keep\][back]
1 []

## arithmetic overflow wraps instead of failing
echo $((9223372036854775807+1)) $(( (-9223372036854775807-1) / -1 ))
-- out
-9223372036854775808 -9223372036854775808
