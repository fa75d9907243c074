// 16550 UART on COM1: polled output, interrupt-driven input into a small ring.
#include "proc/sched.h"
#include "sync/percpu.h"
#include "sync/spinlock.h"
#include "x86/console.h"
#include "x86/smp.h"
#include "x86/trap.h"
#include "x86/x86.h"

#define COM1 0x3f8
#define UART_DATA 0
#define UART_IER 1
#define UART_FCR 2
#define UART_LCR 3
#define UART_MCR 4
#define UART_LSR 5
#define LSR_RX_READY 0x01
#define LSR_TX_EMPTY 0x20
#define COM1_IRQ 4

// Output from all CPUs is serialised by one lock: the console is a shared device,
// and interleaved characters would make the log unreadable.
static struct spinlock console_lock = SPINLOCK_INIT("console");
extern bool panicking;

void uart_init(void)
{
    outb(COM1 + UART_IER, 0);     // no interrupts yet
    outb(COM1 + UART_LCR, 0x80);  // divisor latch
    outb(COM1 + 0, 1);            // 115200 baud
    outb(COM1 + 1, 0);
    outb(COM1 + UART_LCR, 0x03);  // 8N1
    outb(COM1 + UART_FCR, 0x07);  // enable and clear FIFOs
    outb(COM1 + UART_MCR, 0x0b);  // DTR, RTS, OUT2 (IRQ line enable)
}

void uart_putc(char c)
{
    for (int i = 0; i < 100000 && !(inb(COM1 + UART_LSR) & LSR_TX_EMPTY); i++)
        pause();
    outb(COM1 + UART_DATA, c);
}

static void write_bytes(const char *s, size_t n, bool crlf)
{
    // A panicking CPU must not wait for a lock another (stopped) CPU may hold.
    bool lock = !panicking;
    if (lock)
        spin_lock(&console_lock);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '\n' && crlf)
            uart_putc('\r');
        uart_putc(s[i]);
    }
    if (lock)
        spin_unlock(&console_lock);
}

void console_write(const char *s, size_t n) { write_bytes(s, n, true); }

void console_write_raw(const char *s, size_t n) { write_bytes(s, n, false); }

// Input ring, filled by the interrupt handler, drained by console_getc.
static struct spinlock input_lock = SPINLOCK_INIT("console input");
static char input_buf[256];
static uint32_t input_r, input_w;
struct waitq console_input_wq; // readers waiting for input (tty.c)

static void uart_intr(struct trapframe *tf)
{
    (void)tf;
    spin_lock(&input_lock);
    while (inb(COM1 + UART_LSR) & LSR_RX_READY) {
        char c = inb(COM1 + UART_DATA);
        if (input_w - input_r < sizeof input_buf)
            input_buf[input_w++ % sizeof input_buf] = c;
    }
    spin_unlock(&input_lock);
    waitq_wake_all(&console_input_wq);
    lapic_eoi();
}

void console_input_init(void)
{
    waitq_init(&console_input_wq, "console input");
    irq_register(T_IRQ0 + COM1_IRQ, uart_intr);
    ioapic_route(COM1_IRQ, T_IRQ0 + COM1_IRQ, 0);
    outb(COM1 + UART_IER, 0x01); // interrupt on received data
}

bool console_input_pending(void) { return READ_ONCE(input_r) != READ_ONCE(input_w); }

int console_getc(void)
{
    int c = -1;
    spin_lock(&input_lock);
    if (input_r != input_w)
        c = (unsigned char)input_buf[input_r++ % sizeof input_buf];
    spin_unlock(&input_lock);
    return c;
}
