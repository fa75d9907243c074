# The pairwise commutativity suite (tools/commuter/, tests/commuter/).
## testgen: regenerate the suite's data from the model (SUITE=page: tests/commuter/data/, SUITE=bytes: data-bytes/; python3-z3; 5-15 min)
## conformance: the whole suite in our guest (CONFORMANCE_ARGS="-f open/link": one pair; JOBS=N: N guests at once; SHARD=I/N: one shard)
## conformance-linux-host: the whole suite on this Linux host
## conformance-linux-qemu: the whole suite in Debian's Linux 6.1 under QEMU (LINUX_QEMU_ARGS="-s 6": a sample)
## conformance-linux: both Linux runs
## $(BUILD)/commuter/commuter: the runner (one static binary for Linux and ours)
# The data is committed, so building the runner needs no solver: gen_c.py turns
# it into C tables. The runner is built against our libc, so the very same
# static binary runs on the Linux host, in Linux under QEMU and in our guest.
# Results go to $(BUILD)/conformance/<ours|linux-host|linux-qemu>/.
#
# Two suites (tools/commuter/ops.py): SUITE=page (the default: a data value is
# a 4096-byte page, as in Commuter's model) and SUITE=bytes (a byte, with small
# files and unaligned offsets). The one runner holds both (-S picks one); each
# target here and in tools/mtrace/mtrace.mk runs SUITE's, and the byte suite's
# results go to directories named with -bytes (e.g. conformance/ours-bytes).
SUITE ?= page
SUITE_TAG = $(if $(filter page,$(SUITE)),,-$(SUITE))
# suite -> its data directory (testgen.py's SUITE_FILES)
COMMUTER_DATA_page := tests/commuter/data
COMMUTER_DATA_bytes := tests/commuter/data-bytes
COMMUTER_SUITES := page bytes

COMMUTER_CC := $(LIBC_CC)
COMMUTER_CFLAGS := $(LIBC_CFLAGS) -O2 -Wall -Wextra -Werror -Itests/commuter -I$(BUILD)/commuter
COMMUTER_GEN := tools/commuter/gen_c.py tools/commuter/ops.py
COMMUTER_TABLES := $(foreach s,$(COMMUTER_SUITES),$(BUILD)/commuter/tests-$(s).o)
COMMUTER_BIN := $(BUILD)/commuter/commuter
# What the posix_spawn tests start; the runner looks for it next to itself.
COMMUTER_CHILD := $(BUILD)/commuter/commuter-child
CONFORMANCE := $(BUILD)/conformance

define commuter_tables
$(BUILD)/commuter/tests-$(1).c: $(wildcard $(COMMUTER_DATA_$(1))/*.json) $(COMMUTER_GEN) | $(DEPS_OK)
	@mkdir -p $$(@D)
	@echo "  GEN     $$@"
	$(Q)python3 tools/commuter/gen_c.py --suite $(1) $(COMMUTER_DATA_$(1)) $$@
endef
$(foreach s,$(COMMUTER_SUITES),$(eval $(call commuter_tables,$(s))))

# The tables are large and flat: compile them without optimisation.
$(BUILD)/commuter/tests-%.o: $(BUILD)/commuter/tests-%.c tests/commuter/suite.h $(LIBC_DEPS)
	@echo "  LIBCC   $@"
	$(Q)$(COMMUTER_CC) $(filter-out -O2,$(COMMUTER_CFLAGS)) -O0 -c -o $@ $<

$(COMMUTER_BIN): tests/commuter/runner.c tests/commuter/suite.h tests/commuter/pattern.h \
		$(COMMUTER_TABLES) tools/mtrace/markers.h kernel/uapi/ext.h $(LIBC_DEPS)
	@echo "  LIBCC   $@"
	$(Q)$(COMMUTER_CC) $(COMMUTER_CFLAGS) -c -o $@.o tests/commuter/runner.c
	$(Q)$(call LIBC_LINK,$@,$@.o $(COMMUTER_TABLES))

$(COMMUTER_CHILD): tests/commuter/child.c tests/commuter/pattern.h $(LIBC_DEPS)
	@echo "  LIBCC   $@"
	$(Q)$(COMMUTER_CC) $(COMMUTER_CFLAGS) -c -o $@.o $<
	$(Q)$(call LIBC_LINK,$@,$@.o)

testgen: | $(DEPS_OK)
	/usr/bin/python3 tools/commuter/testgen.py --suite $(SUITE) -j 2

# -L: Linux ignores O_ANYFD, so tests whose results depend on it are skipped.
# Writes log.txt (every result), summary.txt (per pair: tests, passed) and
# summary.json; prints the failures, the per-pair summary and the closing line.
conformance-linux-host: $(COMMUTER_BIN) $(COMMUTER_CHILD)
	@mkdir -p $(CONFORMANCE)/linux-host$(SUITE_TAG)
	$(Q)d=$(CONFORMANCE)/linux-host$(SUITE_TAG); status=0; \
	  $(COMMUTER_BIN) -S $(SUITE) -L -J $$d/summary.json > $$d/log.txt || status=$$?; \
	  grep '^# pair' $$d/log.txt | sed 's/^# pair //' > $$d/summary.txt; \
	  grep -v '^ok ' $$d/log.txt; exit $$status

# The same runner in Debian's Linux 6.1 under QEMU (TCG, 2 vCPUs): the whole
# suite takes long there; LINUX_QEMU_ARGS="-s 6" runs the sample.
LINUX_QEMU_ARGS ?=
# /init runs only under Linux and mounts file systems (our libc has no
# sys/mount.h): build it with the host's C library, static.
$(BUILD)/commuter/linux_init: tests/commuter/linux_init.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)gcc -static -O2 -Wall -Wextra -Werror -o $@ $<

conformance-linux-qemu: $(COMMUTER_BIN) $(COMMUTER_CHILD) $(BUILD)/commuter/linux_init
	tools/commuter/linux-qemu --runner $(COMMUTER_BIN) --child $(COMMUTER_CHILD) \
	  --init $(BUILD)/commuter/linux_init \
	  --work $(BUILD)/linux --out $(CONFORMANCE)/linux-qemu$(SUITE_TAG) -- -S $(SUITE) -L $(LINUX_QEMU_ARGS)

conformance-linux: conformance-linux-host conformance-linux-qemu

# The whole suite in our guest (3 CPUs: setup on the third), booted with
# RUN=; CONFORMANCE_ARGS passes runner options (e.g. "-f open/link" for one
# pair, "-s 6" for the sample). Writes log.txt, summary.txt and summary.json.
#   make conformance JOBS=N     N guests at once, guest I running shard I (the
#                               tests whose id % N == I: every pair in each),
#                               then the merge below
#   make conformance SHARD=I/N  shard I only, into $(CONFORMANCE)/ours/shards/I-of-N
#                               (to spread shards over machines: tools/commuter/README.md)
#   make conformance-merge SHARDS=N   merges shards 0..N-1 found there into
#                               $(CONFORMANCE)/ours (the same summary as one run)
# (JOBS, SHARD, SHARDS: tools/shards.mk.)
CONFORMANCE_ARGS ?=
CONF_OURS = $(CONFORMANCE)/ours$(SUITE_TAG)

# $(call conformance_run,DIR,RUNNER-ARGS): the suite in our guest into DIR/log.txt;
# prints what is not an ok line, exits with the runner's status.
conformance_run = d=$(1); mkdir -p $$d; status=0; \
	  tools/runqemu --esp $(BUILD)/esp.img --cpus 3 --mem 1G --timeout 14400 \
	    --cmdline 'RUN="/tests/bin/commuter -S $(SUITE) $(2)"' > $$d/log.txt 2>&1 || status=$$?; \
	  tools/commuter/summarize.py $$d; grep -v '^ok ' $$d/log.txt | grep -v '^\# progress\|^\# mtrace-test'; exit $$status

conformance-shard-%: $(BUILD)/esp.img
	$(Q)$(call conformance_run,$(CONF_OURS)/shards/$*,$(call shard_args,$*) $(CONFORMANCE_ARGS))

ifneq ($(SHARD),)
conformance: conformance-shard-$(subst /,-of-,$(SHARD))
else ifneq ($(JOBS),1)
# -k and -: every shard runs and the merge reports; -O keeps each shard's lines together.
conformance: $(BUILD)/esp.img
	-$(Q)$(MAKE) --no-print-directory -k -O -j$(JOBS) \
	  $(addprefix conformance-shard-,$(call shard_names,$(JOBS)))
	$(Q)$(MAKE) --no-print-directory conformance-merge SHARDS=$(JOBS)
else
conformance: $(BUILD)/esp.img
	$(Q)$(call conformance_run,$(CONF_OURS),$(CONFORMANCE_ARGS))
endif

conformance-merge:
	$(Q)tools/commuter/summarize.py --merge $(CONF_OURS) \
	  $(addprefix $(CONF_OURS)/shards/,$(call shard_names,$(SHARDS)))

# make test: a sample of about 1,000 tests spread over all pairs, and a check
# that a few pairs regenerate byte for byte (python3-z3). HOST_TESTS holds one
# word per suite, so each is a small script.
COMMUTER_SAMPLE := $(BUILD)/commuter/sample-host
COMMUTER_REGEN := $(BUILD)/commuter/regen-check
$(COMMUTER_SAMPLE): tools/commuter/commuter.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec %s -L -s 6\n' $(COMMUTER_BIN) > $@ && chmod +x $@
# The regeneration check draws 4 pairs at random over all pairs, seeded by the
# date (printed: testgen.py --check --sample 4 --seed S repeats it), so that
# the runs of a few weeks cover every pair.
$(COMMUTER_REGEN): tools/commuter/commuter.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec /usr/bin/python3 tools/commuter/testgen.py --check -j 2 --sample 4 --seed $$(date +%%Y%%m%%d)\n' \
	  > $@ && chmod +x $@
HOST_TESTS += $(COMMUTER_SAMPLE) $(COMMUTER_REGEN)
HOST_TEST_DEPS += $(COMMUTER_BIN) $(COMMUTER_CHILD) $(COMMUTER_SAMPLE) $(COMMUTER_REGEN)

# In our guest: the runner is /tests/bin/commuter, and /tests/commuter-sample
# runs the same sample (make test boots it with RUN=, see GUEST_RUNS).
ROOT_DEPS += $(COMMUTER_BIN) $(COMMUTER_CHILD) tools/commuter/commuter.mk
ROOT_STAGE += mkdir -p tests/bin && cp $(abspath $(COMMUTER_BIN) $(COMMUTER_CHILD)) tests/bin/ && \
	printf '\043!/bin/sh\n\043 The pairwise suite sample, as make test runs it on the host.\n/tests/bin/commuter -s 6\n' \
	  > tests/commuter-sample && chmod 755 tests/commuter-sample;

.PHONY: testgen conformance conformance-merge conformance-linux-host conformance-linux-qemu \
	conformance-linux
