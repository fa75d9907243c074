// The serial console (COM1, 16550 UART).
#pragma once
#include "kernel.h"

struct waitq;

void uart_init(void);
void uart_putc(char c);
void console_write(const char *s, size_t n); // whole lines stay together across CPUs
void console_write_raw(const char *s, size_t n); // the same, without \n -> \r\n (a tty's -onlcr)
void console_input_init(void);               // route COM1's IRQ once the IOAPIC is up
int console_getc(void);                      // next input byte, or -1 if none
bool console_input_pending(void);            // a byte is waiting (no lock; a hint)
extern struct waitq console_input_wq;        // woken when input arrives
