# Build everything into $(BUILD); run it in QEMU (TCG).
#   make            build the kernel, loader and boot image
#   make qemu       boot it (CPUS=4 MEM=512M by default)
#   make qemu-gdb   boot it stopped, waiting for gdb (see .gdbinit)
#   make test       run every test suite; ends with "N passed, N failed"
#   make bench      run the benchmarks at 1, 2, 4, 8 CPUs and print a table
#   make bench-scale  multicore scaling beside Linux 6.1 (tools/benchscale.mk)

BUILD ?= build
CPUS ?= 4
MEM ?= 512M
CMDLINE ?=

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
KCFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror \
	-ffreestanding -fno-pic -fno-pie -mcmodel=kernel -mno-red-zone \
	-mgeneral-regs-only -fno-stack-protector -fno-omit-frame-pointer \
	-fno-asynchronous-unwind-tables -fno-strict-aliasing \
	-nostdinc -isystem $(shell $(KCC) -print-file-name=include) \
	-Ikernel -Iboot -Ifs -MMD -MP
KLDFLAGS := -nostdlib -static -no-pie -z max-page-size=4096 -z noexecstack \
	-T kernel/kernel.ld

KSRCS := $(wildcard kernel/*.c kernel/*/*.c kernel/*/*.S fs/*.c tests/kernel/*.c)
KOBJS := $(patsubst %,$(BUILD)/%.o,$(KSRCS))
include libc/libc.mk
include user/user.mk
include user/progs.mk
include tools/shards.mk
include tools/mtrace/mtrace.mk
include tools/commuter/commuter.mk
include tools/benchscale.mk

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

RUNQEMU := tools/runqemu --esp $(BUILD)/esp.img --cpus $(CPUS) --mem $(MEM)

# RUN='cmd args' runs one command in the guest instead (user/progs.mk).
qemu: $(BUILD)/esp.img
ifeq ($(RUN),)
	$(RUNQEMU) --interactive --cmdline "$(CMDLINE)"
else
	@$(QEMU_RUN)
endif

qemu-gdb: $(BUILD)/esp.img
	@echo "QEMU waits for gdb on :1234; in another terminal run: gdb (it reads .gdbinit)"
	$(RUNQEMU) --interactive --gdb --cmdline "$(CMDLINE)"

# ---- tests -----------------------------------------------------------------
# At 64 CPUs the foundation suite plus threads and processes: ScaleFS's
# million-entry and throughput tests take minutes there under TCG.
FOUNDATION := counter,epoch,kernel,kmalloc,page,percpu,printf,refcache,seqlock,smp,spinlock,symbols,timer,tlb,trap,xcall
USER_SUITES_64 := user/badinput,user/basic,user/fds,user/fdshare,user/files,user/jobctl,user/kill,user/mmapfile,user/pgrp,user/pipes,user/pipesig,user/poll,user/proc,user/signal,user/spawn,user/thread,user/txtbsy,user/vm
TEST_CPUS ?= 1 2 8 64:$(FOUNDATION),sched,proc,uvm,usercopy,fdtable,pipe,vm_,$(USER_SUITES_64)

# Host suites: each sub-makefile adds a shell command that prints ok/not ok lines
# and a closing line to HOST_TESTS, and what it needs built to HOST_TEST_DEPS.
HOST_TESTS ?=
HOST_TEST_DEPS ?=

# User-space suites in the guest: N:PROGRAM boots N CPUs with RUN=PROGRAM.
GUEST_RUNS ?= 2:/tests/progs/run 3:/tests/commuter-sample

test: $(BUILD)/esp.img $(HOST_TEST_DEPS)
	tools/runtests --esp $(BUILD)/esp.img --cpus "$(TEST_CPUS)" \
	  $(foreach t,$(HOST_TESTS),--host '$(t)') $(foreach r,$(GUEST_RUNS),--run '$(r)')

# ---- benchmarks (figures for the README; never asserted) -------------------
BENCH_CPUS ?= 1 2 4 8

bench: $(BUILD)/esp.img $(BUILD)/user/sysbench
	tools/bench --esp $(BUILD)/esp.img --cpus "$(BENCH_CPUS)" --out $(BUILD)/bench/results.json \
	  --user $(BUILD)/user/sysbench

clean:
	rm -rf $(BUILD)

.PHONY: all qemu qemu-gdb test bench clean
-include $(KOBJS:.o=.d)
