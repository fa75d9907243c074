# The scaling benchmark (user/bench/scale.c) on our kernel and on Linux 6.1,
# side by side in one QEMU (tools/benchscale; docs/bench-scale.md).
## bench-scale: scale at CPUS="1 2 4 8 16" on ours and Linux 6.1, multi-threaded TCG (SECONDS=0.5 per op); table, JSON, plot in $(BUILD)/bench-scale
## bundle: $(BUILD)/bundle/scalebench.tar.xz: QEMU, firmware, both guests and a script that runs bench-scale on a machine without packages
# CPUS is the vCPU list only when given on the command line (its default, 4,
# is make qemu's); SECONDS only there too (bash has a variable of that name).
ifeq ($(origin CPUS),command line)
BENCH_SCALE_CPUS ?= $(CPUS)
endif
BENCH_SCALE_CPUS ?= 1 2 4 8 16
ifeq ($(origin SECONDS),command line)
BENCH_SCALE_SECONDS ?= $(SECONDS)
endif
BENCH_SCALE_SECONDS ?= 0.5

bench-scale: $(BUILD)/esp.img $(BUILD)/user/scale
	tools/deps bench
	tools/benchscale run --cpus "$(BENCH_SCALE_CPUS)" --seconds $(BENCH_SCALE_SECONDS) \
	  --build $(BUILD) --esp $(BUILD)/esp.img --scale $(BUILD)/user/scale \
	  --out $(BUILD)/bench-scale

bundle: $(BUILD)/esp.img $(BUILD)/user/scale
	tools/bundle --build $(BUILD) --seconds $(BENCH_SCALE_SECONDS) --out $(BUILD)/bundle/scalebench.tar.xz

.PHONY: bench-scale bundle

# make test: scale runs every operation once with 1 and 2 workers and prints
# well-formed lines, on the host, in our kernel and in Linux 6.1
# (tests/bench/scale_check.py; HOST_TESTS entries are single words).
SCALE_CHECK := $(BUILD)/tests/scale-check
$(SCALE_CHECK): tools/benchscale.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tests/bench/scale_check.py --build %s "$$@"\n' $(BUILD) > $@ && chmod +x $@
HOST_TESTS += $(SCALE_CHECK)
HOST_TEST_DEPS += $(SCALE_CHECK) $(BUILD)/user/scale $(BUILD)/esp.img
