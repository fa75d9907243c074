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
void dev_init(void); // after fs_boot: mkdir /dev and its nodes

// tty.c: the serial console as a terminal.
extern const struct file_ops tty_ops;
// A new description of the console opened read-write (fds 0, 1, 2 of processes);
// with cap, one whose output goes to that capture buffer and whose input is at EOF
// (tests). NULL if out of memory.
struct file *tty_open_console(struct capture *cap);
