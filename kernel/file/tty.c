// The serial console as a terminal device: output to the UART, input through a
// line discipline good enough for an interactive shell. Also the capture
// "terminal" that tests give processes instead of the console.
//
// Canonical mode (ICANON, the default): input is edited a line at a time with
// echo; VERASE (DEL) or backspace erases a character, VKILL (^U) the line and,
// with IEXTEN, VWERASE (^W) the word before the cursor; a line is readable once
// it ends with newline, or with ^D, which on an empty line makes read return 0
// (end of file). With ECHOCTL, control characters are echoed as ^X (DEL as ^?),
// and erasing one takes both columns back; a tab is erased back to the column
// it started from. With ISIG, ^C, ^\ and ^Z send SIGINT, SIGQUIT and SIGTSTP to
// the foreground process group (echoed as ^C and a newline; the line being
// edited is discarded). Raw mode (TCSETS without ICANON): bytes are readable as
// they arrive, echoed only with ECHO (control characters as ^X with ECHOCTL).
// Output: with OPOST and ONLCR (the default) a newline goes out as \r\n. A kernel thread takes input from the
// UART's ring as it arrives (so ^C works while nobody reads), and readers sleep
// on tty.read_wq until a line is ready.
//
// Controlling terminal (Linux's rules, one session at a time): a session leader
// that opens the console without O_NOCTTY while no live session owns it, or that
// asks with TIOCSCTTY, makes it its session's controlling terminal with its own
// group in the foreground. TIOCGPGRP/TIOCSPGRP (tcgetpgrp/tcsetpgrp) and
// TIOCGSID work for that session's processes only (else ENOTTY). Job control:
// a process of that session outside the foreground group that reads gets its
// group stopped with SIGTTIN (EIO if it ignores or blocks SIGTTIN); one that
// changes the settings, or writes while TOSTOP is set, gets SIGTTOU (the call
// goes through if SIGTTOU is ignored or blocked). When the session's leader
// exits, the foreground group gets SIGHUP and SIGCONT, and the console belongs
// to no session. A background group that is orphaned gets EIO instead of the
// stop (pgrp.c).
//
// Scalability: there is one console; its state sits behind one sleeping lock.
#include "file/dev.h"
#include "file/file.h"
#include "file/poll.h"
#include "fs.h"
#include "mm/usercopy.h"
#include "proc/proc.h"
#include "sync/atomic.h"
#include "uapi/errno.h"
#include "x86/console.h"

#define LINE_MAX 256
#define COOKED_MAX 1024
#define CTRL(c) ((c) & 0x1f)

static struct {
    struct sleeplock lock;   // everything below; readers hold it while they edit
    bool ready;
    struct termios tio;
    struct winsize ws;
    char line[LINE_MAX];     // the line being edited (canonical mode)
    size_t linelen;
    unsigned line_col;       // the console's column where the line began (tab erase)
    unsigned col;            // the console's output column, as far as tty.c wrote it
    char cooked[COOKED_MAX]; // bytes ready for read
    size_t cooked_len;
    size_t eofs;             // ^D on an empty line: reads that return 0, pending
    struct waitq read_wq;    // readers waiting for readable()
    struct pollhead poll;    // poll/select: woken with read_wq
    int sid;                 // the session it is the controlling terminal of (0: none)
    int fg_pgid;             // its foreground process group
} tty;

// A serial line in cooked mode: ICRNL | IXON; OPOST | ONLCR; B38400 | CS8 | CREAD;
// ISIG | ICANON | ECHO | ECHOE | ECHOK | ECHOCTL | ECHOKE | IEXTEN.
static const struct termios default_tio = {
    .c_iflag = 0x500, .c_oflag = 0x5, .c_cflag = 0xbf, .c_lflag = 0x8a3b,
    .c_cc = {[VINTR] = CTRL('C'), [VQUIT] = CTRL('\\'), [VERASE] = 0x7f, [VKILL] = CTRL('U'),
             [VEOF] = CTRL('D'), [VTIME] = 0, [VMIN] = 1, [VSUSP] = CTRL('Z'),
             [VWERASE] = CTRL('W')},
};

static void input_thread(void *arg);

static void tty_init_once(void)
{
    static struct spinlock init_lock = SPINLOCK_INIT("tty init");
    if (load_acquire(&tty.ready))
        return;
    spin_lock(&init_lock);
    if (!tty.ready) {
        sleeplock_init(&tty.lock, "tty");
        tty.tio = default_tio;
        tty.ws = (struct winsize){.ws_row = 24, .ws_col = 80};
        waitq_init(&tty.read_wq, "tty read");
        pollhead_init(&tty.poll, "tty poll");
        store_release(&tty.ready, true);
    }
    spin_unlock(&init_lock);
}

void tty_init(void)
{
    tty_init_once();
    struct thread *t = thread_alloc("tty input", input_thread, NULL, false);
    if (!t)
        panic("tty: no memory for the input thread");
    thread_start(t, NULL);
}

// The column after writing s: what erasing a tab needs to know. Escape
// sequences count as printing characters; a wrong guess only misplaces a
// tab's erasure.
static void track_column(const char *s, size_t n)
{
    unsigned col = READ_ONCE(tty.col);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' || s[i] == '\r')
            col = 0;
        else if (s[i] == '\b')
            col -= col > 0;
        else if (s[i] == '\t')
            col = (col | 7) + 1;
        else
            col++;
    }
    WRITE_ONCE(tty.col, col);
}

static void echo(const char *s, size_t n)
{
    if (tty.tio.c_lflag & ECHO) {
        if ((tty.tio.c_oflag & (OPOST | ONLCR)) == (OPOST | ONLCR))
            console_write(s, n);
        else
            console_write_raw(s, n);
        track_column(s, n);
    }
}

// ECHOCTL: a control character other than tab and newline is shown as ^X.
static bool echoed_as_caret(char c)
{
    return (tty.tio.c_lflag & ECHOCTL) && ((uint8_t)c < 0x20 || c == 0x7f) && c != '\t' &&
           c != '\n';
}

static void echo_char(char c)
{
    if (echoed_as_caret(c)) {
        char e[2] = {'^', c == 0x7f ? '?' : (char)(c + '@')};
        echo(e, 2);
    } else {
        echo(&c, 1);
    }
}

// The columns the last character of the line took on the screen.
static unsigned last_char_width(void)
{
    char c = tty.line[tty.linelen - 1];
    if (c != '\t')
        return echoed_as_caret(c) ? 2 : 1;
    unsigned col = tty.line_col; // replay the line to find where the tab began
    for (size_t i = 0; i + 1 < tty.linelen; i++)
        col = tty.line[i] == '\t' ? (col | 7) + 1 : col + (echoed_as_caret(tty.line[i]) ? 2 : 1);
    return ((col | 7) + 1) - col;
}

// Erase the line's last character, on the screen too (ECHOE), or by echoing
// the erase character (without ECHOE, as Linux does).
static void erase_char(void)
{
    if (tty.linelen == 0)
        return;
    if (tty.tio.c_lflag & ECHOE)
        for (unsigned w = last_char_width(); w > 0; w--)
            echo("\b \b", 3);
    else
        echo_char(tty.tio.c_cc[VERASE]);
    tty.linelen--;
}

static bool is_blank(char c) { return c == ' ' || c == '\t'; }

// VWERASE: the blanks before the cursor, then the word before them.
static void erase_word(void)
{
    while (tty.linelen > 0 && is_blank(tty.line[tty.linelen - 1]))
        erase_char();
    while (tty.linelen > 0 && !is_blank(tty.line[tty.linelen - 1]))
        erase_char();
}

// VKILL: ECHOKE erases the line on the screen; else ECHOK echoes the kill
// character and a newline.
static void kill_line(void)
{
    if (tty.tio.c_lflag & ECHOKE) {
        while (tty.linelen > 0)
            erase_char();
        return;
    }
    if (tty.tio.c_lflag & ECHOK) {
        echo_char(tty.tio.c_cc[VKILL]);
        echo("\n", 1);
    }
    tty.linelen = 0;
}

static void cook(const char *s, size_t n)
{
    n = MIN(n, COOKED_MAX - tty.cooked_len); // overflow: drop, as a full tty would
    memcpy(tty.cooked + tty.cooked_len, s, n);
    tty.cooked_len += n;
}

// ISIG: the signal a byte stands for, or 0.
static int isig(char c)
{
    const uint8_t *cc = tty.tio.c_cc;
    if (!(tty.tio.c_lflag & ISIG) || c == 0)
        return 0;
    return c == cc[VINTR] ? SIGINT : c == cc[VQUIT] ? SIGQUIT : c == cc[VSUSP] ? SIGTSTP : 0;
}

static void signal_foreground(int sig)
{
    struct ksiginfo info = {.signo = sig, .code = SI_KERNEL};
    if (tty.fg_pgid > 0)
        signal_send_group(tty.fg_pgid, sig, &info);
}

// One input byte through the line discipline. tty.lock is held.
static void input_byte(char c)
{
    const uint8_t *cc = tty.tio.c_cc;
    if (c == '\r' && (tty.tio.c_iflag & ICRNL))
        c = '\n';
    int sig = isig(c);
    if (sig) { // as Linux: echo ^C (^\, ^Z) and a newline, flush pending input
        char e[4] = {'^', (char)(c + '@'), '\n', 0};
        echo(e, 3);
        tty.linelen = tty.cooked_len = tty.eofs = 0;
        signal_foreground(sig);
        return;
    }
    if (!(tty.tio.c_lflag & ICANON)) {
        cook(&c, 1);
        echo_char(c);
        return;
    }
    if (c == cc[VERASE] || c == '\b') {
        erase_char();
    } else if (c != 0 && c == cc[VWERASE] && (tty.tio.c_lflag & IEXTEN)) {
        erase_word();
    } else if (c != 0 && c == cc[VKILL]) {
        kill_line();
    } else if (c == cc[VEOF]) {
        if (tty.linelen == 0)
            tty.eofs++;
        cook(tty.line, tty.linelen);
        tty.linelen = 0;
    } else if (c == '\n') {
        echo("\n", 1);
        tty.line[tty.linelen++] = '\n'; // there is always room for it (below)
        cook(tty.line, tty.linelen);
        tty.linelen = 0;
    } else if (tty.linelen < LINE_MAX - 1) {
        if (tty.linelen == 0)
            tty.line_col = READ_ONCE(tty.col);
        tty.line[tty.linelen++] = c;
        echo_char(c);
    }
}

static bool readable(void) { return READ_ONCE(tty.cooked_len) > 0 || READ_ONCE(tty.eofs) > 0; }

void tty_input(const char *s, size_t n)
{
    tty_init_once();
    sleeplock_acquire(&tty.lock);
    for (size_t i = 0; i < n; i++)
        input_byte(s[i]);
    bool wake = readable();
    sleeplock_release(&tty.lock);
    if (wake) {
        waitq_wake_all(&tty.read_wq);
        pollhead_wake(&tty.poll);
    }
}

// Takes the UART's input as it arrives, a batch at a time.
static void input_thread(void *arg)
{
    (void)arg;
    for (;;) {
        wait_event(&console_input_wq, console_input_pending());
        char buf[64];
        size_t n = 0;
        int c;
        while (n < sizeof buf && (c = console_getc()) >= 0)
            buf[n++] = (char)c;
        tty_input(buf, n);
    }
}

// Job control: 0 if the caller may go on, or -ERESTARTSYS after sending sig
// (SIGTTIN, SIGTTOU) to its group, which stops it; the call runs again when
// the group is continued. tty.lock is held.
static long background_check(int sig)
{
    struct proc *p = proc_current();
    if (!p || tty.sid == 0 || READ_ONCE(p->sid) != tty.sid)
        return 0; // not the controlling terminal of the caller
    int pgid = READ_ONCE(p->pgid);
    if (pgid == tty.fg_pgid)
        return 0;
    if (signal_ignored_or_blocked(sig))
        return sig == SIGTTIN ? -EIO : 0; // it would never be continued; writes pass
    if (pgrp_orphaned(pgid, NULL, NULL))
        return -EIO; // a stop would be discarded, and nobody could continue it
    struct ksiginfo info = {.signo = sig, .code = SI_KERNEL};
    signal_send_group(pgid, sig, &info);
    return -ERESTARTSYS;
}

static long tty_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    tty_init_once();
    sleeplock_acquire(&tty.lock);
    long bg = background_check(SIGTTIN);
    sleeplock_release(&tty.lock);
    if (bg)
        return bg;
    if (n == 0)
        return 0;
    sleeplock_acquire(&tty.lock);
    while (!readable()) {
        if ((f->flags & O_NONBLOCK) || (!(tty.tio.c_lflag & ICANON) && tty.tio.c_cc[VMIN] == 0)) {
            sleeplock_release(&tty.lock);
            return (f->flags & O_NONBLOCK) ? -EAGAIN : 0;
        }
        sleeplock_release(&tty.lock);
        struct thread *t = thread_current();
        wait_event(&tty.read_wq, readable() || signal_pending(t));
        if (!readable() && signal_pending(t))
            return -ERESTARTSYS; // restart (SA_RESTART) or EINTR
        sleeplock_acquire(&tty.lock);
    }
    long ret = 0;
    if (tty.cooked_len == 0) { // an end-of-file mark
        tty.eofs--;
    } else {
        size_t m = MIN(n, tty.cooked_len);
        if (tty.tio.c_lflag & ICANON) { // at most one line per read
            for (size_t i = 0; i < m; i++)
                if (tty.cooked[i] == '\n') {
                    m = i + 1;
                    break;
                }
        }
        if (copy_to_user(ubuf, tty.cooked, m) < 0) {
            ret = -EFAULT;
        } else {
            memmove(tty.cooked, tty.cooked + m, tty.cooked_len - m);
            tty.cooked_len -= m;
            ret = (long)m;
        }
    }
    sleeplock_release(&tty.lock);
    return ret;
}

// Copy user bytes out a chunk at a time; a fault after some bytes went out
// reports those bytes, as Linux does.
static long write_chunks(uint64_t ubuf, size_t n, struct capture *cap)
{
    char k[256];
    size_t done = 0;
    while (done < n) {
        size_t m = MIN(n - done, sizeof k);
        if (copy_from_user(k, ubuf + done, m) < 0)
            return done ? (long)done : -EFAULT;
        if (cap) {
            spin_lock(&cap->lock);
            size_t room = MIN(m, cap->cap - cap->len);
            memcpy(cap->buf + cap->len, k, room);
            cap->len += room;
            spin_unlock(&cap->lock);
        } else if ((READ_ONCE(tty.tio.c_oflag) & (OPOST | ONLCR)) == (OPOST | ONLCR)) {
            console_write(k, m);
            track_column(k, m);
        } else { // output processing off (raw programs that place the cursor themselves)
            console_write_raw(k, m);
            track_column(k, m);
        }
        done += m;
    }
    return (long)done;
}

static long tty_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)pos;
    tty_init_once();
    sleeplock_acquire(&tty.lock);
    long bg = (tty.tio.c_lflag & TOSTOP) ? background_check(SIGTTOU) : 0;
    sleeplock_release(&tty.lock);
    return bg ? bg : write_chunks(ubuf, n, NULL);
}

// The terminal ioctls; the capture terminal answers with the defaults and
// accepts settings without effect.
static long ioctl_common(struct termios *tio, struct winsize *ws, unsigned long req, uint64_t arg)
{
    switch (req) {
    case TCGETS:
        return copy_to_user(arg, tio, sizeof *tio);
    case TCSETS:
    case TCSETSW:
    case TCSETSF: {
        struct termios t;
        if (copy_from_user(&t, arg, sizeof t) < 0)
            return -EFAULT;
        *tio = t;
        return 0;
    }
    case TIOCGWINSZ:
        return copy_to_user(arg, ws, sizeof *ws);
    case TIOCSWINSZ:
        return copy_from_user(ws, arg, sizeof *ws);
    default:
        return -ENOTTY;
    }
}

// ---- controlling terminal -------------------------------------------------------

// The session owning the console still has its leader (tty.lock held).
static bool owner_alive(void)
{
    if (tty.sid <= 0)
        return false;
    epoch_enter();
    struct proc *p = pid_lookup(tty.sid);
    bool alive = p && p->state != P_ZOMBIE && READ_ONCE(p->sid) == tty.sid;
    epoch_exit();
    return alive;
}

static void acquire(int sid, int pgid)
{
    tty.sid = sid;
    tty.fg_pgid = pgid;
}

void tty_opened(struct file *f, int flags, int pid, int sid, int pgid)
{
    if (f->ops != &tty_ops || (flags & O_NOCTTY) || pid != sid)
        return;
    tty_init_once();
    sleeplock_acquire(&tty.lock);
    if (!owner_alive())
        acquire(sid, pgid);
    sleeplock_release(&tty.lock);
}

// The job-control ioctls; tty.lock is held. -ENOIOCTLCMD if req is not one.
#define ENOIOCTLCMD 515
static long ctty_ioctl(unsigned long req, uint64_t arg)
{
    struct proc *p = proc_current();
    int sid = p ? READ_ONCE(p->sid) : 0;
    bool ours = p && sid == tty.sid && owner_alive();
    int v;
    switch (req) {
    case TIOCSCTTY:
        if (ours)
            return 0;
        if (!p || sid != p->pid)
            return -EPERM; // only a session leader
        if (owner_alive() && arg != 1)
            return -EPERM; // another session's (arg 1: steal it, as root may)
        acquire(sid, READ_ONCE(p->pgid));
        return 0;
    case TIOCNOTTY:
        if (!ours)
            return -ENOTTY;
        if (sid == p->pid)
            tty.sid = tty.fg_pgid = 0;
        return 0;
    case TIOCGPGRP:
    case TIOCGSID:
        if (!ours)
            return -ENOTTY;
        v = req == TIOCGPGRP ? tty.fg_pgid : tty.sid;
        return copy_to_user(arg, &v, sizeof v);
    case TIOCSPGRP: {
        if (!ours)
            return -ENOTTY;
        long bg = background_check(SIGTTOU);
        if (bg)
            return bg;
        if (copy_from_user(&v, arg, sizeof v) < 0)
            return -EFAULT;
        if (v < 0)
            return -EINVAL;
        int gsid = pgrp_session(v);
        if (gsid < 0)
            return -ESRCH;
        if (gsid != sid)
            return -EPERM;
        tty.fg_pgid = v;
        return 0;
    }
    }
    return -ENOIOCTLCMD;
}

static long tty_ioctl(struct file *f, unsigned long req, uint64_t arg)
{
    (void)f;
    tty_init_once();
    sleeplock_acquire(&tty.lock);
    long r = ctty_ioctl(req, arg);
    if (r != -ENOIOCTLCMD) {
        sleeplock_release(&tty.lock);
        return r;
    }
    if (req == TCSETS || req == TCSETSW || req == TCSETSF) {
        r = background_check(SIGTTOU); // settings are the foreground's
        if (r) {
            sleeplock_release(&tty.lock);
            return r;
        }
    }
    if (req == TCSETSF) // flush pending input, then set
        tty.cooked_len = tty.linelen = tty.eofs = 0;
    if (req == FIONREAD) {
        int n = (int)tty.cooked_len;
        r = copy_to_user(arg, &n, sizeof n);
    } else {
        r = ioctl_common(&tty.tio, &tty.ws, req, arg);
    }
    if (r == 0 && !(tty.tio.c_lflag & ICANON) && tty.linelen > 0) {
        // Leaving canonical mode: a line typed ahead, not yet ended, becomes
        // readable as it is (as on Linux), so that a line editor starting up
        // gets the keys typed while the last command ran.
        cook(tty.line, tty.linelen);
        tty.linelen = 0;
        sleeplock_release(&tty.lock);
        waitq_wake_all(&tty.read_wq);
        pollhead_wake(&tty.poll);
        return 0;
    }
    sleeplock_release(&tty.lock);
    return r;
}

static int tty_stat(struct file *f, uint32_t mask, struct fs_stat *st)
{
    (void)f;
    memset(st, 0, sizeof *st);
    st->mask = mask & STATX_BASIC_STATS;
    st->mode = S_IFCHR | 0620;
    st->rdev = MKDEV(5, 1);
    st->nlink = 1;
    return 0;
}

// Output never waits; input is ready as read would find it.
static unsigned tty_poll(struct file *f, struct poller *pl)
{
    (void)f;
    tty_init_once();
    poll_register(pl, &tty.poll);
    fence(); // registered before looking: see pollhead_wake
    return POLLOUT | POLLWRNORM | (readable() ? POLLIN | POLLRDNORM : 0);
}

const struct file_ops tty_ops = {
    .poll = tty_poll,
    .read = tty_read,
    .write = tty_write,
    .ioctl = tty_ioctl,
    .stat = tty_stat,
};

// ---- the capture terminal (tests) ----------------------------------------------------

static long capture_read(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)f, (void)ubuf, (void)n, (void)pos;
    return 0; // no input: end of file
}

static long capture_write(struct file *f, uint64_t ubuf, size_t n, uint64_t *pos)
{
    (void)pos;
    return write_chunks(ubuf, n, f->priv);
}

static long capture_ioctl(struct file *f, unsigned long req, uint64_t arg)
{
    (void)f;
    struct termios tio = default_tio;
    struct winsize ws = {.ws_row = 24, .ws_col = 80};
    return ioctl_common(&tio, &ws, req, arg);
}

static const struct file_ops capture_ops = {
    .read = capture_read,
    .write = capture_write,
    .ioctl = capture_ioctl,
    .stat = tty_stat,
};

// The leader of session sid exits: if the console is its controlling terminal,
// the foreground group gets SIGHUP, then SIGCONT (stopped members would never
// see the SIGHUP), and the console is free for the next session.
void tty_session_exit(int sid)
{
    if (!load_acquire(&tty.ready))
        return;
    sleeplock_acquire(&tty.lock);
    int fg = 0;
    if (tty.sid == sid) {
        fg = tty.fg_pgid;
        tty.sid = tty.fg_pgid = 0;
    }
    sleeplock_release(&tty.lock);
    if (fg > 0) {
        struct ksiginfo hup = {.signo = SIGHUP, .code = SI_KERNEL};
        struct ksiginfo cont = {.signo = SIGCONT, .code = SI_KERNEL};
        signal_send_group(fg, SIGHUP, &hup);
        signal_send_group(fg, SIGCONT, &cont);
    }
}

int tty_foreground(void)
{
    tty_init_once();
    return READ_ONCE(tty.fg_pgid);
}

struct file *tty_open_console(struct capture *cap)
{
    return file_alloc(cap ? &capture_ops : &tty_ops, O_RDWR | O_LARGEFILE, NULL, cap);
}
