# The user programs (user/*.c, the shell in user/sh/) and the root file system
# they live in; the shell and utility cases (tests/cases/). Included by the
# top-level Makefile.
## $(BUILD)/progs/NAME: the program user/NAME.c (sh: user/sh/), as in the guest's /bin
## $(BUILD)/tests/cases-host: a script that runs tests/cases/*.t on this host with $(BUILD)/progs
#
# The programs are built against our libc (libc/libc.mk). To build them against
# another C library, override these, e.g. for musl:
#   PROG_CC=musl-gcc PROG_CFLAGS='-std=gnu11 -O2 -g -Wall -Wextra -Werror' PROG_LINK=-static PROG_DEPS=
PROG_CC ?= $(LIBC_CC)
PROG_CFLAGS ?= $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror
PROG_LINK ?= -nostdlib -static -no-pie -z noexecstack $(LIBC_CRT1) \
	-Wl,--start-group $(LIBC_A) $(LIBC_LIBGCC) -Wl,--end-group
# Extra prerequisites of every program (the libc archive).
PROG_DEPS ?= $(LIBC_DEPS)

PROG_DIR := $(BUILD)/progs
PROG_NAMES := $(sort $(notdir $(basename $(wildcard user/*.c))) sh)
PROG_BINS := $(addprefix $(PROG_DIR)/,$(PROG_NAMES)) $(PROG_DIR)/abicheck-musl $(PROG_DIR)/abicheck-glibc \
	$(PROG_DIR)/abicheck-dynamic
SH_SRCS := $(wildcard user/sh/*.c)
PROG_CASES := $(wildcard tests/cases/*.t)

$(PROG_DIR)/%: user/%.c user/reboot.h user/slurp.h kernel/uapi/ext.h $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $< $(PROG_LINK)

# tests/compat/abicheck.c built with other C libraries (musl, and glibc's static
# libc.a): binaries made elsewhere must run unmodified (tests/cases/compat.t).
$(PROG_DIR)/abicheck-musl: tests/compat/abicheck.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  MUSLCC  $@"
	$(Q)musl-gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<
$(PROG_DIR)/abicheck-glibc: tests/compat/abicheck.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  GLIBCC  $@"
	$(Q)gcc -std=gnu11 -O2 -Wall -Wextra -Werror -static -o $@ $<
# A dynamically linked one (PT_INTERP), which our kernel refuses with ENOEXEC and
# the shell reports as such. Its interpreter's name is empty, which Linux
# refuses with ENOEXEC as well, so the case reads the same on both kernels.
$(PROG_DIR)/abicheck-dynamic: tests/compat/abicheck.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  GLIBCC  $@"
	$(Q)gcc -std=gnu11 -O2 -Wall -Wextra -Werror -Wl,--dynamic-linker= -o $@ $<

# test is also [ (a copy: the kernel's cpio reader need not know hard links).
$(PROG_DIR)/test: user/test.c $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $< $(PROG_LINK)
	$(Q)cp $@ '$(@D)/['

$(PROG_DIR)/sh: $(SH_SRCS) user/sh/sh.h $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $(SH_SRCS) $(PROG_LINK)

# ---- the root file system ---------------------------------------------------
# /sbin/init, the programs in /bin, the files under user/rootfs (/etc/rc,
# /etc/passwd, /etc/group), empty /tmp, /dev (the kernel adds device nodes),
# /home and /root (root's home); then, with
# EXTRA=<host dir>, that directory's contents on top. The initrd rule in the
# top-level Makefile runs ROOT_STAGE in an empty $(BUILD)/root.
# The shell and utility cases go in too, to run in the guest with
#   make qemu RUN='/tests/cases/run'
ROOT_DEPS += $(PROG_BINS) user/progs.mk $(shell find user/rootfs -type f) $(BUILD)/extra.txt \
	$(BUILD)/tests/runcases $(PROG_CASES)
ROOT_STAGE += mkdir -p bin sbin etc tmp dev home root tests/cases && chmod 1777 tmp && \
	cp $(abspath $(filter-out $(PROG_DIR)/init,$(PROG_BINS))) bin/ && \
	cp $(abspath $(PROG_DIR)/init) sbin/init && cp bin/test 'bin/[' && \
	cp -R $(CURDIR)/user/rootfs/. . && \
	cp $(abspath $(BUILD)/tests/runcases $(PROG_CASES)) tests/cases/ && \
	printf '\043 Runs the shell and utility cases (tests/cases/*.t) with /bin.\n/tests/cases/runcases /bin %s\n' \
	  '$(addprefix /tests/cases/,$(notdir $(PROG_CASES)))' > tests/cases/run && chmod 755 tests/cases/run && \
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
# variables), so quotes and spaces in it need no shell quoting here. runqemu
# --run puts it on the kernel command line as one word, RUN="cmd args" (init
# runs it with sh -c; double quotes cannot be nested there: use single quotes
# inside RUN), and exits with the command's status, 0..255; its last line says
# it, as make itself can only fail with 2.
QEMU_RUN = $(RUNQEMU) --cmdline "$(CMDLINE)" --run "$$RUN"

# ---- host tests ---------------------------------------------------------------
# tests/cases/*.t: shell scripts with their expected output and status, run
# with our sh and utilities by tests/cases/runcases (built like the programs,
# so it can run in the guest as well).
$(BUILD)/tests/runcases: tests/cases/runcases.c $(PROG_DEPS) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  PROG    $@"
	$(Q)$(PROG_CC) $(PROG_CFLAGS) -o $@ $< $(PROG_LINK)

# HOST_TESTS entries are single words: a generated script holds the command.
$(BUILD)/tests/cases-host: user/progs.mk $(PROG_CASES) | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  GEN     $@"
	$(Q)printf '#!/bin/sh\n# Generated by user/progs.mk.\ncd %s && exec %s %s %s\n' \
	  '$(CURDIR)' '$(abspath $(BUILD)/tests/runcases)' '$(abspath $(PROG_DIR))' \
	  '$(PROG_CASES)' > $@ && chmod +x $@

HOST_TESTS += $(BUILD)/tests/cases-host
HOST_TEST_DEPS += $(PROG_BINS) $(BUILD)/tests/runcases $(BUILD)/tests/cases-host

# tests/pty/lineedit_test.py: the shell's line editor, keys typed on a
# pseudo-terminal into our sh running on this host.
LINEEDIT_TEST := $(BUILD)/tests/lineedit-test
$(LINEEDIT_TEST): user/progs.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tests/pty/lineedit_test.py %s "$$@"\n' $(PROG_DIR) > $@ && chmod +x $@
HOST_TESTS += $(LINEEDIT_TEST)
HOST_TEST_DEPS += $(LINEEDIT_TEST)
