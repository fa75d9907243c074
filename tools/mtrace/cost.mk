# mtrace's cost mode: deterministic per-operation costs (tools/mtrace/README.md).
# Included by tools/mtrace/mtrace.mk.
#
# The calibration program tests/mtrace/cost.c (known answers: getpid and a
# private counter share nothing, a shared counter moves its line every
# operation), built against our libc: staged in our guest as /tests/mtrace/cost,
# and the same binary runs in Linux.
MTRACE_COST_PROG := $(BUILD)/mtrace/ours-bin/cost

ROOT_DEPS += $(MTRACE_COST_PROG)
ROOT_STAGE += mkdir -p tests/mtrace && cp $(abspath $(MTRACE_COST_PROG)) tests/mtrace/;
