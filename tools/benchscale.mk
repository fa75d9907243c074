# The scaling benchmark (user/bench/scale.c) on our kernel and on Linux 6.1,
# side by side in one QEMU (tools/benchscale; docs/bench-scale.md).
#   make bench-scale CPUS="1 2 4 8 16"   boots each kernel at each vCPU count
#                     (SECONDS=0.5: per operation and worker count);
#                     writes build/bench-scale/{results.json,table.md,plot.png,plot.svg}
#   make bundle       build/bundle/scalebench.tar.xz: QEMU, firmware, both guests and a
#                     script that runs the same measurements on a machine without
#                     packages (tools/bundle)
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
