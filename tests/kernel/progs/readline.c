// Reads the console the way a shell does, to try the terminal line discipline by
// hand (make qemu CMDLINE=init=readline): lines in canonical mode until ^D on an
// empty line, then three bytes in raw mode without echo.
#include <stdio.h>
#include <string.h>
#include <termios.h>
#include <unistd.h>

int main(void)
{
    char buf[256];
    ssize_t n;
    printf("type lines; ^D ends\n");
    fflush(stdout);
    while ((n = read(0, buf, sizeof buf)) > 0)
        printf("line of %zd bytes: %.*s", n, (int)n, buf);
    printf("EOF (read returned %zd)\nraw mode: type 3 keys\n", n);
    fflush(stdout);
    struct termios old, raw;
    if (tcgetattr(0, &old) != 0) {
        printf("tcgetattr failed\n");
        return 1;
    }
    raw = old;
    raw.c_lflag &= ~(ICANON | ECHO);
    raw.c_cc[VMIN] = 1;
    tcsetattr(0, TCSANOW, &raw);
    size_t got = 0;
    while (got < 3 && (n = read(0, buf + got, 3 - got)) > 0)
        got += n;
    tcsetattr(0, TCSANOW, &old);
    printf("raw bytes: %02x %02x %02x\n", buf[0] & 0xff, buf[1] & 0xff, buf[2] & 0xff);
    return 0;
}
