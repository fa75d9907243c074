# The system-call fuzzer (tests/fuzz/, tests/README.md "Fuzzer"), built against
# our libc and put in the guest as /tests/fuzz. `make test` runs its short
# fixed-seed run (no arguments) at 2 CPUs through GUEST_RUNS (the Makefile);
# `make fuzz` boots a guest that runs it with the given settings.
# Included by the top-level Makefile.
## fuzz: random system calls in a guest: CPUS=4 SECONDS=60 SEED=1 (FUZZ_WORKERS=2*CPUS, FUZZ_ARGS=-m ...)
## $(BUILD)/tests/fuzz: the fuzzer program (tests/fuzz/*.c)

FUZZ_SRCS := $(wildcard tests/fuzz/*.c)
FUZZ_BIN := $(BUILD)/tests/fuzz
SECONDS ?= 60
SEED ?= 1
FUZZ_WORKERS ?=
FUZZ_ARGS ?=

$(FUZZ_BIN): $(FUZZ_SRCS) tests/fuzz/fuzz.h tests/stress/netpages.h tests/kernel/progs/raw.h kernel/uapi/ext.h $(LIBC_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)/fuzz.o
	@echo "  LIBCC   $@"
	$(Q)for f in $(FUZZ_SRCS); do \
	  $(LIBC_CC) $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror -c -o $(@D)/fuzz.o/$$(basename $$f).o $$f || exit 1; done
	$(Q)$(call LIBC_LINK,$@,$(patsubst tests/fuzz/%,$(@D)/fuzz.o/%.o,$(FUZZ_SRCS)))

ROOT_DEPS += $(FUZZ_BIN) tests/fuzz/fuzz.mk
ROOT_STAGE += mkdir -p tests && cp $(abspath $(FUZZ_BIN)) tests/fuzz;

fuzz: $(BUILD)/esp.img
	tools/fuzz --esp $(BUILD)/esp.img --cpus $(CPUS) --mem $(MEM) --seconds $(SECONDS) --seed $(SEED) \
	  $(if $(FUZZ_WORKERS),--workers $(FUZZ_WORKERS)) $(if $(FUZZ_ARGS),--args='$(FUZZ_ARGS)')

.PHONY: fuzz
