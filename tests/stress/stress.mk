# The file-system stress (tests/stress/fsstress.c, tests/README.md "File-system
# stress"), built against our libc and put in the guest as /tests/fsstress.
# `make test` runs a short run at 2 CPUs through GUEST_RUNS (the Makefile) and
# one on the Linux host;
# `make fsstress` boots a guest that runs it with the given settings.
# Included by the top-level Makefile.
## fsstress: file-system stress with exact answers: CPUS=8 SECONDS=60 SEED=1 (STRESS_WORKERS=2*CPUS, STRESS_ARGS="-m 30": net pages every 30 s)
## $(BUILD)/tests/fsstress: the stress program (tests/stress/fsstress.c)

STRESS_BIN := $(BUILD)/tests/fsstress
STRESS_WORKERS ?=
STRESS_ARGS ?=

$(STRESS_BIN): tests/stress/fsstress.c tests/stress/netpages.h kernel/uapi/ext.h $(LIBC_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  LIBCC   $@"
	$(Q)$(LIBC_CC) $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror -c -o $@.o $<
	$(Q)$(call LIBC_LINK,$@,$@.o)

# The same binary on the Linux host (the model's answers are POSIX's, not
# ours), a short run in build/.
STRESS_HOST := $(BUILD)/tests/fsstress-host
$(STRESS_HOST): tests/stress/stress.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec %s -t 5 -d %s "$$@"\n' $(abspath $(STRESS_BIN)) $(abspath $(BUILD)) > $@ && chmod +x $@
HOST_TESTS += $(STRESS_HOST)
HOST_TEST_DEPS += $(STRESS_HOST) $(STRESS_BIN)

ROOT_DEPS += $(STRESS_BIN) tests/stress/stress.mk
ROOT_STAGE += mkdir -p tests && cp $(abspath $(STRESS_BIN)) tests/fsstress;

# The guest's status is the program's (0 passed); a panic or a hang (past the
# run, the final check and the boot) fails the run too. Log in build/fsstress/.
STRESS_TIMEOUT = $$(( $(SECONDS) * 2 + 300 + 2 * $(CPUS) ))
fsstress: $(BUILD)/esp.img
	@mkdir -p $(BUILD)/fsstress
	$(RUNQEMU) --timeout $(STRESS_TIMEOUT) --log $(BUILD)/fsstress/seed-$(SEED).log --cmdline 'kpoison pagesites' \
	  --run "/tests/fsstress -s $(SEED) -t $(SECONDS) -w $(or $(STRESS_WORKERS),$$(( 2 * $(CPUS) ))) $(STRESS_ARGS)"

.PHONY: fsstress
