// The hang detector (hangcheck.c): a CPU that is never preemptible, or takes no
// timer interrupt, for `hangcheck=SECONDS` (default 60; 0 turns it off) has its
// stack printed and the run ends in a panic.
#pragma once
#include "kernel.h"

struct trapframe;
// A report in place of the panic (tests): called on the hung CPU, in its timer
// interrupt (nmi false) or NMI handler (nmi true), which then returns to it.
typedef void (*hangcheck_report_fn)(int cpu, struct trapframe *tf, bool nmi);

void hangcheck_init(void);                    // boot CPU: read the command line
void hangcheck_tick(struct trapframe *tf);    // every CPU's timer interrupt
bool hangcheck_nmi(struct trapframe *tf);     // an NMI: was it ours? (then reported)
// Ask CPU c (by NMI) to print where it is and what lock it waits for.
void hangcheck_dump_cpu(int c);
// Tickless idle (tickless.c): the latest this CPU may wake once its tick has
// stopped (UINT64_MAX: no limit), and the look it takes when it starts again.
uint64_t hangcheck_tick_stopping(uint64_t now);
void hangcheck_tick_restarted(uint64_t now);
// Set the limit (0: off) and the report hook (NULL: panic), for tests.
void hangcheck_configure(uint32_t seconds, hangcheck_report_fn fn);
uint32_t hangcheck_limit(void);
