# The user programs (user/*.c, the shell in user/sh/) and the root file system
# they live in. Included by the top-level Makefile.
#
# The programs use only the POSIX API our libc provides. To build them against
# another C library, change these three (e.g. PROG_CC=gcc PROG_CFLAGS='... -nostdinc
# -Ilibc/include' PROG_LINK='-nostdlib -static libc/crt0.o ... libc.a'):
PROG_CC ?= musl-gcc
PROG_CFLAGS ?= -std=gnu11 -O2 -g -Wall -Wextra -Werror -fno-stack-protector
PROG_LINK ?= -static
# Extra prerequisites of every program (e.g. the libc archive).
PROG_DEPS ?=

PROG_DIR := $(BUILD)/progs
PROG_NAMES := $(sort $(notdir $(basename $(wildcard user/*.c))) sh)
PROG_BINS := $(addprefix $(PROG_DIR)/,$(PROG_NAMES))
SH_SRCS := $(wildcard user/sh/*.c)

$(PROG_DIR)/%: user/%.c user/reboot.h kernel/uapi/ext.h $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $< $(PROG_LINK)

$(PROG_DIR)/sh: $(SH_SRCS) user/sh/sh.h $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $(SH_SRCS) $(PROG_LINK)

# ---- the root file system ---------------------------------------------------
# /sbin/init, the programs in /bin, the files under user/rootfs (/etc/rc),
# empty /tmp, /dev (the kernel adds device nodes) and /home; then, with
# EXTRA=<host dir>, that directory's contents on top. The initrd rule in the
# top-level Makefile runs ROOT_STAGE in an empty $(BUILD)/root.
ROOT_DEPS += $(PROG_BINS) user/progs.mk $(shell find user/rootfs -type f) $(BUILD)/extra.txt
ROOT_STAGE += mkdir -p bin sbin etc tmp dev home && chmod 1777 tmp && \
	cp $(abspath $(filter-out $(PROG_DIR)/init,$(PROG_BINS))) bin/ && \
	cp $(abspath $(PROG_DIR)/init) sbin/init && \
	cp -R $(CURDIR)/user/rootfs/. . && \
	$(if $(EXTRA),cp -R "$(abspath $(EXTRA))/." . &&) true;

# EXTRA's name is remembered, so the image is rebuilt when it changes or goes;
# while EXTRA is set the image is rebuilt every time (its files may have changed).
# (The rule runs every time; it rewrites the file only when EXTRA changes.)
$(BUILD)/extra.txt: FORCE
	@mkdir -p $(@D)
	@if [ -n "$(EXTRA)" ] && [ ! -d "$(EXTRA)" ]; then echo "EXTRA=$(EXTRA): not a directory" >&2; exit 1; fi
	@echo '$(abspath $(EXTRA))' | cmp -s - $@ || echo '$(abspath $(EXTRA))' > $@
	$(if $(EXTRA),@touch $@)

FORCE:
.PHONY: FORCE

# ---- make qemu RUN='cmd args' -------------------------------------------------
# RUN reaches the recipe through the environment (make exports command-line
# variables), so quotes and spaces in it need no shell quoting here. On the
# kernel command line it becomes one word, RUN="cmd args" (init runs it with
# sh -c). Double quotes cannot be nested there: use single quotes inside RUN.
QEMU_RUN = if printf '%s' "$$RUN" | grep -q '"'; then \
	  echo 'RUN may not contain double quotes (use single quotes)' >&2; exit 2; fi; \
	$(RUNQEMU) --cmdline "$$(printf '$(if $(CMDLINE),$(CMDLINE) )RUN="%s"' "$$RUN")"

# ---- host tests ---------------------------------------------------------------
# tests/progs/*.t: shell scripts with their expected output and status, run
# with our sh and utilities by tests/progs/runcases (built like the programs,
# so it can run in the guest as well).
PROG_CASES := $(wildcard tests/progs/*.t)
$(BUILD)/tests/runcases: tests/progs/runcases.c $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $< $(PROG_LINK)

HOST_TESTS += $(BUILD)/tests/runcases $(abspath $(PROG_DIR)) $(PROG_CASES)
HOST_TEST_DEPS += $(PROG_BINS) $(BUILD)/tests/runcases
