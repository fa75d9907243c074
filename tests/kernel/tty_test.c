// The console's line discipline sends ^C and ^\ as SIGINT and SIGQUIT to the
// foreground process group of the session it is the controlling terminal of.
#include "file/dev.h"
#include "file/file.h"
#include "ktest/ktest.h"
#include "proc/proc.h"
#include "uapi/abi.h"
#include "uapi/errno.h"

// A process pausing until a signal ends it, leading its own session and group
// (as every kernel-started process does), the console's owner and foreground.
static void keyboard_signal(char key, int sig)
{
    const struct user_program *prog = user_program_find("spawnee");
    KREQUIRE(prog != NULL);
    static struct capture cap;
    static char buf[256];
    spin_init(&cap.lock, "capture");
    cap.buf = buf;
    cap.cap = sizeof buf;
    cap.len = 0;
    const char *argv[] = {"spawnee", "pause", NULL};
    struct proc *p;
    KREQUIRE(proc_spawn("spawnee", prog->start, prog->len, argv, NULL, NULL, &cap, &p) == 0);
    KCHECK_EQ(p->sid, p->pid);
    KCHECK_EQ(p->pgid, p->pid);
    struct file *f = tty_open_console(NULL);
    KREQUIRE(f != NULL);
    tty_opened(f, O_RDWR, p->pid, p->sid, p->pgid); // as its open("/dev/console") would
    KCHECK_EQ(tty_foreground(), p->pid);
    tty_input(&key, 1);
    int st = proc_wait_kernel(p);
    KCHECK_EQ(st & 0x7f, sig); // killed by the signal
    file_put(f);
}

KTEST(tty_ctrl_c_sends_sigint_to_the_foreground_group) { keyboard_signal(0x03, SIGINT); }
KTEST(tty_ctrl_backslash_sends_sigquit) { keyboard_signal(0x1c, SIGQUIT); }
