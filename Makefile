# Build everything into $(BUILD); run it in QEMU (TCG). Each makefile lists its
# targets in `## target: what it does` lines, one per target; `make help` prints
# them all (tests/README.md tells the kinds of tests apart).
## all: the kernel, loader and boot image, $(BUILD)/esp.img (the default)
## qemu: boot it (CPUS=4 MEM=512M); CMDLINE='test=NAME' runs tests, RUN='cmd' one command; NET=1 adds a NIC, HOSTFWD=8080:80 forwards a host port
## qemu-gdb: boot it stopped, waiting for gdb on this user's port (GDB_PORT); then `gdb` here (DEBUG=1: -Og)
## test: every suite (tests/README.md); ends with "N passed, N failed"
## bench: the benchmarks at BENCH_CPUS="1 2 4 8", as one table (scaling: bench-scale, tools/benchscale.mk)
## bench-net: host-to-guest TCP throughput through QEMU's user network, ours and Linux 6.1 (NET_MIB=16 per round, 3 rounds, 2 vCPUs)
## clean: remove $(BUILD)
## help: list the targets of every makefile, one line each
## $(BUILD)/kernel.elf: the kernel alone (with symbols, for gdb)
## $(BUILD)/initrd.cpio: the root file system (EXTRA=<host dir> adds a directory's files)

# DEBUG=1: the kernel at -Og, whose locals and arguments gdb can show (-O2
# keeps many only in registers: <optimized out>). It builds into its own
# directory, so that a debug build and a plain one are never mixed in one.
ifeq ($(DEBUG),1)
BUILD ?= build-debug
KOPT := -Og
else
BUILD ?= build
KOPT := -O2
endif
CPUS ?= 4
MEM ?= 512M
CMDLINE ?=
# NET=1: a virtio-net NIC on QEMU's user network, isolated from the host
# (tools/runqemu --net); make test always has it.
NET ?=
# HOSTFWD='8080:80 2222:22': host port 8080 on 127.0.0.1 reaches the guest's
# port 80 (implies NET=1).
HOSTFWD ?=

# Quiet by default; `make V=1` shows full commands.
ifeq ($(V),1)
Q :=
else
Q := @
endif

# Missing Debian packages are installed on first use (tools/deps); it is quick
# and silent when everything is there.
DEPS_OK := $(BUILD)/.deps-ok

all: $(BUILD)/esp.img

$(DEPS_OK): tools/deps
	tools/deps
	@mkdir -p $(@D) && touch $@

include boot/boot.mk
$(BOOT_OUT)/loader.o: | $(DEPS_OK)

# ---- kernel ----------------------------------------------------------------
KCC := gcc
KCFLAGS := -std=gnu11 $(KOPT) -g -Wall -Wextra -Werror \
	-ffreestanding -fno-pic -fno-pie -mcmodel=kernel -mno-red-zone \
	-mgeneral-regs-only -fno-stack-protector -fno-omit-frame-pointer \
	-fno-asynchronous-unwind-tables -fno-strict-aliasing \
	-nostdinc -isystem $(shell $(KCC) -print-file-name=include) \
	-Ikernel -Iboot -Ifs -MMD -MP
KLDFLAGS := -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack \
	-T kernel/kernel.ld

KSRCS := $(wildcard kernel/*.c kernel/*/*.c kernel/*/*.S fs/*.c tests/kernel/*.c)
KOBJS := $(patsubst %,$(BUILD)/%.o,$(KSRCS))
include kernel/net/net.mk
include libc/libc.mk
include user/user.mk
include user/progs.mk
include user/busybox.mk
include tools/shards.mk
include tools/mtrace/mtrace.mk
include tools/commuter/commuter.mk
include tools/benchscale.mk
include tests/fuzz/fuzz.mk
include tests/stress/stress.mk
include tests/net/net.mk
include labs/labs.mk

$(BUILD)/%.c.o: %.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $<"
	$(Q)$(KCC) $(KCFLAGS) -c -o $@ $<

$(BUILD)/%.S.o: %.S | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  AS      $<"
	$(Q)$(KCC) $(KCFLAGS) -c -o $@ $<

$(BUILD)/kernel.elf: $(KOBJS) kernel/kernel.ld
	@echo "  LD      $@"
	$(Q)ld $(KLDFLAGS) -o $@ $(KOBJS)

# ---- initial file system (cpio newc from a staging tree) -------------------
# Sub-makefiles add what the tree needs to ROOT_DEPS and the shell commands that
# fill it (run inside $(BUILD)/root, each ending in ';') to ROOT_STAGE.
$(BUILD)/initrd.cpio: $(ROOT_DEPS) | $(DEPS_OK)
	@echo "  CPIO    $@"
	@rm -rf $(BUILD)/root && mkdir -p $(BUILD)/root
	$(Q)cd $(BUILD)/root && $(ROOT_STAGE) true
	$(Q)cd $(BUILD)/root && find . -mindepth 1 | LC_ALL=C sort | cpio -o -H newc --quiet > ../initrd.cpio

# ---- boot image ------------------------------------------------------------
$(BUILD)/esp.img: $(BOOT_EFI) $(BUILD)/kernel.elf $(BUILD)/initrd.cpio tools/mkesp
	@echo "  ESP     $@"
	$(Q)tools/mkesp $@ $(BOOT_EFI) $(BUILD)/kernel.elf $(BUILD)/initrd.cpio

RUNQEMU := tools/runqemu --esp $(BUILD)/esp.img --cpus $(CPUS) --mem $(MEM) $(if $(filter 1,$(NET)),--net) \
	$(foreach f,$(HOSTFWD),--hostfwd $(f))

# RUN='cmd args' runs one command in the guest instead (user/progs.mk).
qemu: $(BUILD)/esp.img
ifeq ($(RUN),)
	$(RUNQEMU) --interactive --cmdline "$(CMDLINE)"
else
	@$(QEMU_RUN)
endif

# gdb's port: one per user, so that users of one machine do not take each
# other's (QEMU listens on 127.0.0.1 only).
GDB_PORT ?= $(shell echo $$((26000 + $$(id -u) % 6000)))

qemu-gdb: $(BUILD)/esp.img .gdbinit
	@echo "QEMU waits for gdb on 127.0.0.1:$(GDB_PORT). In another terminal, in this"
	@echo "directory, run gdb; it reads .gdbinit if ~/.gdbinit has the line"
	@echo "  add-auto-load-safe-path $(CURDIR)/.gdbinit"
	$(RUNQEMU) --interactive --gdb $(GDB_PORT) --cmdline "$(CMDLINE)"

# .gdbinit: tools/gdbinit.in with this build's kernel and this user's port,
# rewritten only when they change.
.gdbinit: tools/gdbinit.in FORCE
	@sed -e 's|@KERNEL@|$(BUILD)/kernel.elf|' -e 's|@PORT@|$(GDB_PORT)|' $< | cmp -s - $@ || \
	  sed -e 's|@KERNEL@|$(BUILD)/kernel.elf|' -e 's|@PORT@|$(GDB_PORT)|' $< > $@

# ---- tests -----------------------------------------------------------------
# At 64 CPUs the foundation suite plus threads and processes: ScaleFS's
# million-entry and throughput tests take minutes there under TCG.
FOUNDATION := counter,epoch,kernel,kmalloc,page,percpu,printf,refcache,seqlock,smp,spinlock,symbols,timer,tlb,trap,xcall
USER_SUITES_64 := user/badinput,user/basic,user/fds,user/fdshare,user/files,user/jobctl,user/kill,user/mmapfile,user/pgrp,user/pipes,user/pipesig,user/poll,user/proc,user/procfs,user/signal,user/spawn,user/thread,user/txtbsy,user/vm
TEST_CPUS ?= 1 2 8 64:$(FOUNDATION),sched,proc,uvm,usercopy,fdtable,pipe,vm_,$(USER_SUITES_64)

# Host suites: each sub-makefile adds a shell command that prints ok/not ok lines
# and a closing line to HOST_TESTS, and what it needs built to HOST_TEST_DEPS.
# tools/check-test-names keeps the rule that a test's name starts with its
# file's name (tests/README.md).
HOST_TESTS ?=
HOST_TEST_DEPS ?=
HOST_TESTS += tools/check-test-names

# tools/runqemu_test.py: the console on a pseudo-terminal, RUN's status.
RUNQEMU_TEST := $(BUILD)/tests/runqemu-test
$(RUNQEMU_TEST): Makefile
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tools/runqemu_test.py %s "$$@"\n' $(BUILD)/esp.img > $@ && chmod +x $@
HOST_TESTS += $(RUNQEMU_TEST)
HOST_TEST_DEPS += $(RUNQEMU_TEST)

# User-space suites in the guest: N:PROGRAM boots N CPUs with RUN=PROGRAM.
GUEST_RUNS ?= 2:/tests/cases/run 3:/tests/commuter-sample 2:/tests/fuzz 2:/tests/fsstress

test: $(BUILD)/esp.img $(HOST_TEST_DEPS)
	tools/runtests --esp $(BUILD)/esp.img --net --cmdline kpoison --cpus "$(TEST_CPUS)" \
	  $(foreach t,$(HOST_TESTS),--host '$(t)') $(foreach r,$(GUEST_RUNS),--run '$(r)')

# ---- benchmarks (figures for the README; never asserted) -------------------
BENCH_CPUS ?= 1 2 4 8

bench: $(BUILD)/esp.img $(BUILD)/user/sysbench
	tools/bench --esp $(BUILD)/esp.img --cpus "$(BENCH_CPUS)" --out $(BUILD)/bench/results.json \
	  --user $(BUILD)/user/sysbench

NET_MIB ?= 16
bench-net: $(BUILD)/esp.img $(BUILD)/user/netsink
	tools/bench-net --esp $(BUILD)/esp.img --netsink $(BUILD)/user/netsink --mib $(NET_MIB) \
	  --out $(BUILD)/bench-net

clean:
	rm -rf $(BUILD)

# The `## target: text` lines of every makefile read, grouped by file; $(BUILD)
# in them is shown as its value.
help:
	@awk -v build='$(BUILD)' ' \
	  /^## [^ ]+: / { \
	    if (FILENAME != shown) { printf "%s%s:\n", shown ? "\n" : "", FILENAME; shown = FILENAME } \
	    line = substr($$0, 4); gsub(/\$$\(BUILD\)/, build, line); i = index(line, ": "); \
	    printf "  %-24s %s\n", substr(line, 1, i - 1), substr(line, i + 2) }' \
	  $(filter Makefile %.mk,$(MAKEFILE_LIST))

.PHONY: all qemu qemu-gdb test bench bench-net clean help
-include $(KOBJS:.o=.d)
