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

# The known-answer test (make test): tools/mtrace/costcheck boots each kernel
# under the plugin in cost mode with the calibration program, at 1 and 4 vCPUs.
# HOST_TESTS entries are single words: a generated script carries the arguments.
MTRACE_COSTCHECK := $(BUILD)/mtrace/costcheck-ours $(BUILD)/mtrace/costcheck-linux
$(BUILD)/mtrace/costcheck-ours: tools/mtrace/cost.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/mtrace/costcheck --kernel ours --build %s --plugin %s --program /tests/mtrace/cost "$$@"\n' \
	  $(BUILD) $(MTRACE_SO) > $@ && chmod +x $@
$(BUILD)/mtrace/costcheck-linux: tools/mtrace/cost.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/mtrace/costcheck --kernel linux --build %s --plugin %s --program %s "$$@"\n' \
	  $(BUILD) $(MTRACE_SO) $(MTRACE_COST_PROG) > $@ && chmod +x $@

HOST_TESTS += $(MTRACE_COSTCHECK)
HOST_TEST_DEPS += $(MTRACE_COSTCHECK) $(MTRACE_SO) $(MTRACE_COST_PROG) $(BUILD)/esp.img

# ---- make bench-cost ----------------------------------------------------------
## bench-cost: kernel instructions and cache-line transfers per operation of scale, ours and Linux 6.1 (CPUS="1 16 64 255" WORKERS="2 4 8 16 32 64" OPS=... KERNELS=ours)
## bench-cost-tables: rebuild $(BUILD)/bench-cost/tables.md from the runs there
# The scaling benchmark (user/bench/scale.c) under the plugin in cost mode, on
# our kernel and on Linux 6.1 (tools/mtrace/cost.py): kernel instructions per
# operation with 1 worker at each of CPUS vCPUs online, and cache-line
# transfers per operation with N workers on N vCPUs for each N in WORKERS.
# Tables on the terminal and in $(BUILD)/bench-cost/tables.md, JSON beside.
# Narrow it: CPUS="1 16" WORKERS="2 4" (either may be empty) OPS="getpid stat"
# KERNELS=ours ITERATIONS=100 SETTLE=0 (seconds between the workers' set-up and
# their start, default 2: the CPUs that started the run go idle meanwhile, so
# the 1-worker figures show what CPUs online cost, not what recent activity
# does) WARMUP=0 (operations per worker, all workers at once, before the
# measured ones: scale -W; the steady state without a structure's first
# contact with the load, docs/bench-cost.md); DETERMINISTIC=1 ties guest time to instructions
# (runqemu --deterministic) and boots ours with tickless=0 (QEMU 7.2 under
# -icount left a vCPU halted with interrupts off when idle CPUs stopped their
# tick, cost.py; so idle CPUs then leave the active set later); EPOCH_TICKS=N boots ours with epochticks=N (the
# epoch's work at every N-th tick, to see what the tick's dilation under the
# plugin puts on each operation; Linux has no such knob). SCALE names another program that follows scale's
# command line, e.g. the calibration program:
#   make bench-cost SCALE=$(MTRACE_COST_PROG) SCALE_GUEST=/tests/mtrace/cost
# 255 vCPUs boot slowly under the plugin (minutes per boot).
SCALE ?= $(BUILD)/user/scale
SCALE_GUEST ?= /tests/bin/$(notdir $(SCALE))
# CPUS has a default of its own (make qemu): take it only from the command line.
BENCH_COST_CPUS := $(if $(filter command line environment,$(origin CPUS)),$(CPUS),1 16 64 255)
WORKERS ?= 2 4 8 16 32 64
OPS ?=
KERNELS ?= ours linux
ITERATIONS ?= 200
SETTLE ?= 2
WARMUP ?= 0

bench-cost: $(MTRACE_SO) $(BUILD)/esp.img $(SCALE)
	/usr/bin/python3 tools/mtrace/cost.py --scale $(SCALE) --guest-path $(SCALE_GUEST) \
	  --plugin $(MTRACE_SO) --build $(BUILD) --kernels "$(KERNELS)" \
	  --cpus "$(BENCH_COST_CPUS)" --workers "$(WORKERS)" --ops "$(OPS)" -n $(ITERATIONS) --settle $(SETTLE) \
	  --warmup $(WARMUP) \
	  --out $(BUILD)/bench-cost $(if $(DETERMINISTIC),--deterministic) \
	  $(if $(EPOCH_TICKS),--epoch-ticks $(EPOCH_TICKS))
.PHONY: bench-cost

# The tables and results.json again from the runs in $(BUILD)/bench-cost that
# the same selection names (runs made in parts, e.g. one kernel at a time).
bench-cost-tables:
	/usr/bin/python3 tools/mtrace/cost.py --tables --build $(BUILD) --kernels "$(KERNELS)" \
	  --cpus "$(BENCH_COST_CPUS)" --workers "$(WORKERS)" --out $(BUILD)/bench-cost
.PHONY: bench-cost-tables
