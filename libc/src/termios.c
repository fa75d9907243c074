// Terminals: isatty and the termios calls (TCGETS/TCSETS ioctls).
#include <errno.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

int isatty(int fd)
{
    struct termios t;
    return tcgetattr(fd, &t) == 0;
}
int tcgetattr(int fd, struct termios *t) { return ioctl(fd, TCGETS, t); }
int tcsetattr(int fd, int action, const struct termios *t)
{
    if (action < 0 || action > 2) {
        errno = EINVAL;
        return -1;
    }
    return ioctl(fd, TCSETS + action, t);
}
void cfmakeraw(struct termios *t)
{
    t->c_iflag &= ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    t->c_oflag &= ~OPOST;
    t->c_lflag &= ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t->c_cflag &= ~(CSIZE | PARENB);
    t->c_cflag |= CS8;
    t->c_cc[VMIN] = 1;
    t->c_cc[VTIME] = 0;
}
speed_t cfgetospeed(const struct termios *t) { return t->c_cflag & CBAUD; }
speed_t cfgetispeed(const struct termios *t) { return cfgetospeed(t); }
int cfsetospeed(struct termios *t, speed_t s)
{
    if (s & ~CBAUD) {
        errno = EINVAL;
        return -1;
    }
    t->c_cflag = (t->c_cflag & ~CBAUD) | s;
    return 0;
}
int cfsetispeed(struct termios *t, speed_t s) { return s ? cfsetospeed(t, s) : 0; }

// Job control: the terminal's foreground process group.
pid_t tcgetpgrp(int fd)
{
    pid_t pg;
    return ioctl(fd, TIOCGPGRP, &pg) < 0 ? -1 : pg;
}
int tcsetpgrp(int fd, pid_t pgrp) { return ioctl(fd, TIOCSPGRP, &pgrp); }
pid_t tcgetsid(int fd)
{
    pid_t sid;
    return ioctl(fd, TIOCGSID, &sid) < 0 ? -1 : sid;
}
