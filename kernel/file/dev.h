// Character devices (dev.c): the table from device number to file operations,
// and the /dev nodes made in ScaleFS at boot. Devices: /dev/null (1,3),
// /dev/zero (1,5), /dev/tty (5,0) and /dev/console (5,1), the last two being the
// serial console (tty.c).
#pragma once
#include "kernel.h"

struct file_ops;
struct capture;
struct file;

const struct file_ops *dev_lookup(uint32_t rdev); // NULL: no such device (ENXIO)
const char *dev_name(uint32_t rdev);             // its path in /dev, or NULL
void dev_init(void); // after fs_boot: mkdir /dev and its nodes

// tty.c: the serial console as a terminal.
extern const struct file_ops tty_ops;
// A new description of the console opened read-write (fds 0, 1, 2 of processes);
// with cap, one whose output goes to that capture buffer and whose input is at EOF
// (tests). NULL if out of memory.
struct file *tty_open_console(struct capture *cap);
void tty_init(void);                      // at boot: the console's input thread
void tty_input(const char *s, size_t n);  // bytes as if typed (input thread; tests)
// f was just opened with flags by process pid of session sid, group pgid: a
// session leader opening the console without O_NOCTTY while no live session
// owns it makes it its controlling terminal.
void tty_opened(struct file *f, int flags, int pid, int sid, int pgid);
void tty_session_exit(int sid);           // its leader exits (proc.c): SIGHUP the foreground
int tty_foreground(void);                 // the console's foreground group (0: none)
