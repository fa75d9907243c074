# mtrace: the QEMU plugin that finds cache lines shared by two commuting calls
# (mode=pairs) and counts what each operation of a benchmark costs (mode=cost;
# make bench-cost, tools/mtrace/cost.mk). Included by the top-level Makefile.
# Its tests run in `make test` (tests/README.md). The plugin is built against
# our declarations of QEMU's plugin API (tools/mtrace/qemu-plugin-api.h), so no
# QEMU source is needed.
## mtrace-plugin: the QEMU plugin, $(BUILD)/mtrace/mtrace.so
## mtrace-linux: the pairwise suite in Debian's Linux 6.1 under the plugin
## mtrace: the same in our kernel (MTRACE_OURS_ARGS="-s 6": the sample; JOBS=N: N guests at once; SHARD=I/N: one shard)
## mtrace-test: one test's conflicts, with source lines (MTRACE_KERNEL=linux|ours MTRACE_TEST=ID)
## mtrace-check-api: check our plugin API declarations against QEMU's header
MTRACE_SO := $(BUILD)/mtrace/mtrace.so
MTRACE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared \
	-fvisibility=hidden

MTRACE_SRCS := tools/mtrace/mtrace.c tools/mtrace/pairs.c tools/mtrace/cost.c

$(MTRACE_SO): $(MTRACE_SRCS) tools/mtrace/mtrace.h tools/mtrace/markers.h \
		tools/mtrace/qemu-plugin-api.h | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)gcc $(MTRACE_CFLAGS) -o $@ $(MTRACE_SRCS) -lpthread

mtrace-plugin: $(MTRACE_SO)
.PHONY: mtrace-plugin

# The self-test (make test): Linux 6.1 under the plugin runs pairs of calls known
# to share a cache line or not (tests/mtrace/validate.c, static, built with
# $(MTRACE_GUEST_CC) until our own libc can build it).
MTRACE_GUEST_CC ?= musl-gcc
MTRACE_GUEST_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -static
MTRACE_VALIDATE := $(BUILD)/mtrace/validate

$(MTRACE_VALIDATE): tests/mtrace/validate.c tests/mtrace/pairs.h tools/mtrace/markers.h | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  UCC     $@"
	$(Q)$(MTRACE_GUEST_CC) $(MTRACE_GUEST_CFLAGS) -o $@ $< -lpthread

# HOST_TESTS entries are single words: a generated script carries the arguments.
MTRACE_VALIDATE_CMD := $(BUILD)/mtrace/validate-linux
$(MTRACE_VALIDATE_CMD): tools/mtrace/mtrace.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/mtrace/validate --build %s --plugin %s --program %s "$$@"\n' \
	  $(BUILD) $(MTRACE_SO) $(MTRACE_VALIDATE) > $@ && chmod +x $@

HOST_TESTS += tools/mtrace/analyze_test.py $(MTRACE_VALIDATE_CMD)
HOST_TEST_DEPS += $(MTRACE_SO) $(MTRACE_VALIDATE) $(MTRACE_VALIDATE_CMD)

# ---- the pairwise suite under the plugin -----------------------------------
# mtrace-linux runs the runner as the only program of Debian's Linux 6.1; mtrace
# runs it in our kernel (RUN=/tests/bin/commuter $(MTRACE_OURS_ARGS));
# mtrace-test reads the last run's trace again for one test. Results in $(BUILD)/mtrace/<kernel>/: trace (the plugin's records), console.log
# (the runner's output, naming each test's pair), summary.json, conflicts.json,
# pairs.txt, heatmap.svg/.png. The runner is the conformance runner's static
# binary (tests/commuter/, built by its own rule once merged; -L there skips the
# tests that rely on our O_ANYFD); any program that follows
# tools/mtrace/markers.h will do, e.g. MTRACE_RUNNER=$(MTRACE_VALIDATE). Three
# CPUs: the runner sets tests up on CPU 2 when there is one, away from the two
# calls' CPUs.
MTRACE_RUNNER ?= $(BUILD)/commuter/commuter
MTRACE_RUNNER_ARGS ?= -S $(SUITE) -L
# SUITE (tools/commuter/commuter.mk) picks the suite; the byte suite's runs go
# to $(BUILD)/mtrace/<kernel>-bytes.
# Runner options in our guest, e.g. -s 6 for the sample.
MTRACE_OURS_ARGS ?=
MTRACE_CPUS ?= 3
MTRACE_TIMEOUT ?= 3600
MTRACE_ANALYZE := /usr/bin/python3 tools/mtrace/analyze.py
LINUXGUEST := tools/linuxguest/linuxguest --build $(BUILD)

MTRACE_LINUX = $(BUILD)/mtrace/linux$(SUITE_TAG)
mtrace-linux: $(MTRACE_SO) $(MTRACE_RUNNER) $(BUILD)/commuter/commuter-child | $(DEPS_OK)
	tools/deps mtrace
	$(LINUXGUEST) --kallsyms >/dev/null
	@mkdir -p $(MTRACE_LINUX)
	tools/mtrace/entries.py --kallsyms $(BUILD)/linux/kallsyms > $(MTRACE_LINUX)/entries
	-$(LINUXGUEST) --cpus $(MTRACE_CPUS) --timeout $(MTRACE_TIMEOUT) \
	  --log $(MTRACE_LINUX)/console.log \
	  --plugin $(MTRACE_SO),out=$(MTRACE_LINUX)/trace,entries=$(MTRACE_LINUX)/entries \
	  --file $(BUILD)/commuter/commuter-child $(MTRACE_RUNNER) $(MTRACE_RUNNER_ARGS) >/dev/null
	$(MTRACE_ANALYZE) $(MTRACE_LINUX)/trace --log $(MTRACE_LINUX)/console.log \
	  --kallsyms $(BUILD)/linux/kallsyms --kernel linux --out $(MTRACE_LINUX)

# Sharded (tools/shards.mk): make mtrace JOBS=N runs N guests at once, each
# under its own plugin; SHARD=I/N runs one into $(MTRACE_OURS)/shards/I-of-N;
# make mtrace-merge SHARDS=N joins shards 0..N-1 (traces and console logs
# concatenated: test ids are global) and analyses them as one run.
MTRACE_OURS = $(BUILD)/mtrace/ours$(SUITE_TAG)

# $(call mtrace_ours_run,DIR,RUNNER-ARGS): the runner in our guest under the
# plugin, into DIR/{entries,trace,console.log}. A failing run still leaves a
# trace worth analysing: its status is ignored.
mtrace_ours_run = mkdir -p $(1) && \
	tools/mtrace/entries.py --elf $(BUILD)/kernel.elf > $(1)/entries && \
	{ tools/runqemu --esp $(BUILD)/esp.img --cpus $(MTRACE_CPUS) --mem $(MEM) \
	  --timeout $(MTRACE_TIMEOUT) --cmdline 'RUN="/tests/bin/commuter -S $(SUITE) $(2)"' \
	  --log $(1)/console.log --plugin $(MTRACE_SO),out=$(1)/trace,entries=$(1)/entries \
	  >/dev/null || true; }
MTRACE_OURS_ANALYZE = $(MTRACE_ANALYZE) $(MTRACE_OURS)/trace --log $(MTRACE_OURS)/console.log \
	  --elf $(BUILD)/kernel.elf --kernel ours --reasons tools/mtrace/reasons --out $(MTRACE_OURS)

mtrace-shard-%: $(MTRACE_SO) $(BUILD)/esp.img
	$(call mtrace_ours_run,$(MTRACE_OURS)/shards/$*,$(call shard_args,$*) $(MTRACE_OURS_ARGS))

ifneq ($(SHARD),)
mtrace: mtrace-shard-$(subst /,-of-,$(SHARD))
else ifneq ($(JOBS),1)
mtrace: $(MTRACE_SO) $(BUILD)/esp.img
	tools/deps mtrace
	-$(MAKE) --no-print-directory -k -j$(JOBS) $(addprefix mtrace-shard-,$(call shard_names,$(JOBS)))
	$(MAKE) --no-print-directory mtrace-merge SHARDS=$(JOBS)
else
mtrace: $(MTRACE_SO) $(BUILD)/esp.img
	tools/deps mtrace
	$(call mtrace_ours_run,$(MTRACE_OURS),$(MTRACE_OURS_ARGS))
	$(MTRACE_OURS_ANALYZE)
endif

MTRACE_SHARD_DIRS = $(addprefix $(MTRACE_OURS)/shards/,$(call shard_names,$(SHARDS)))
mtrace-merge:
	@for d in $(MTRACE_SHARD_DIRS); do grep -qs '^[0-9]* passed, [0-9]* failed' $$d/console.log || \
	  echo "mtrace-merge: warning: $$d: the runner did not finish" >&2; done
	cat $(addsuffix /trace,$(MTRACE_SHARD_DIRS)) > $(MTRACE_OURS)/trace
	cat $(addsuffix /console.log,$(MTRACE_SHARD_DIRS)) > $(MTRACE_OURS)/console.log
	cp $(MTRACE_OURS)/shards/0-of-$(SHARDS)/entries $(MTRACE_OURS)/entries
	$(MTRACE_OURS_ANALYZE)

MTRACE_KERNEL ?= linux
mtrace-test:
	@test -n "$(MTRACE_TEST)" || { echo "usage: make mtrace-test MTRACE_KERNEL=linux|ours MTRACE_TEST=ID"; exit 1; }
	$(MTRACE_ANALYZE) $(BUILD)/mtrace/$(MTRACE_KERNEL)$(SUITE_TAG)/trace \
	  --log $(BUILD)/mtrace/$(MTRACE_KERNEL)$(SUITE_TAG)/console.log \
	  $(if $(filter ours,$(MTRACE_KERNEL)),--elf $(BUILD)/kernel.elf,--kallsyms $(BUILD)/linux/kallsyms) \
	  --test $(MTRACE_TEST)

.PHONY: mtrace mtrace-merge mtrace-linux mtrace-test

# Our plugin API declarations against QEMU's own header (downloads Debian's qemu
# source package once into $(BUILD)/qemu-src; run after a QEMU upgrade).
mtrace-check-api:
	tools/mtrace/check-api $(BUILD)
.PHONY: mtrace-check-api

# ---- the sharing tests on our kernel (make test) ----------------------------
# tests/mtrace/scalefs.c (ScaleFS: lookups, creates and unlinks of different
# names in one directory share no line), tests/mtrace/fds.c (descriptors, file
# data, pipes, memory), tests/mtrace/sockets.c (AF_UNIX private, lwIP shared)
# and tests/mtrace/validate.c (the Linux self-test's
# pairs), built against our libc and staged in the guest's
# /tests/mtrace; tools/mtrace/validate --kernel ours boots our kernel under the
# plugin with RUN=/tests/mtrace/NAME and checks each pair's verdict.
MTRACE_OURS_NAMES := scalefs fds sockets validate
MTRACE_OURS_BINS := $(addprefix $(BUILD)/mtrace/ours-bin/,$(MTRACE_OURS_NAMES))

$(BUILD)/mtrace/ours-bin/%: tests/mtrace/%.c tests/mtrace/pairs.h tools/mtrace/markers.h $(LIBC_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  LIBCC   $@"
	$(Q)$(LIBC_CC) $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror -c -o $@.o $<
	$(Q)$(call LIBC_LINK,$@,$@.o)

ROOT_DEPS += $(MTRACE_OURS_BINS)
ROOT_STAGE += mkdir -p tests/mtrace && cp $(abspath $(MTRACE_OURS_BINS)) tests/mtrace/;

MTRACE_OURS_CMDS := $(addprefix $(BUILD)/mtrace/ours-,$(MTRACE_OURS_NAMES))
$(BUILD)/mtrace/ours-%: tools/mtrace/mtrace.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/mtrace/validate --kernel ours --build %s --plugin %s --program /tests/mtrace/%s "$$@"\n' \
	  $(BUILD) $(MTRACE_SO) $* > $@ && chmod +x $@

HOST_TESTS += $(MTRACE_OURS_CMDS)
HOST_TEST_DEPS += $(MTRACE_OURS_CMDS) $(BUILD)/esp.img

include tools/mtrace/cost.mk
