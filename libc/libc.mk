# libc: our C library for the kernel's (Linux x86-64) system-call ABI. Static
# binaries linked with it run unchanged on the Linux host and on our kernel.
# Included by the top-level Makefile.
#
# Outputs: $(LIBC_A) = $(BUILD)/libc/libc.a and $(LIBC_CRT1) = $(BUILD)/libc/crt1.o
# (no crti/crtn: constructors run from .init_array).
#
# Building a program against it (ET_EXEC static binary):
#
#   $(BUILD)/foo: foo.c $(LIBC_DEPS)
#   	$(LIBC_CC) $(LIBC_CFLAGS) -O2 -c -o $@.o $<
#   	$(call LIBC_LINK,$@,$@.o)
#
# or, for a self-relocating static PIE, compile with -fPIE and link with
# $(call LIBC_LINK_PIE,$@,$@.o). LIBC_CFLAGS holds only what the library needs
# (its headers, gnu11, no stack protector); add your own -O/-W flags.
#
# Tests: libc/tests/*.c, each built both ways, run on the host by `make test`
# (HOST_TESTS), or alone with `make libc-test`.

LIBC_DIR := libc
LIBC_OUT := $(BUILD)/libc
LIBC_A := $(LIBC_OUT)/libc.a
LIBC_CRT1 := $(LIBC_OUT)/crt1.o
LIBC_GCC_INC := $(shell gcc -print-file-name=include)
LIBC_LIBGCC := $(shell gcc -print-libgcc-file-name)

LIBC_CC := gcc
LIBC_CFLAGS := -std=gnu11 -nostdinc -isystem $(LIBC_DIR)/include -isystem $(LIBC_GCC_INC) \
	-fno-stack-protector
LIBC_DEPS := $(LIBC_A) $(LIBC_CRT1)
LIBC_LINK = $(LIBC_CC) -nostdlib -static -no-pie -z noexecstack -o $(1) $(LIBC_CRT1) $(2) \
	-Wl,--start-group $(LIBC_A) $(LIBC_LIBGCC) -Wl,--end-group
LIBC_LINK_PIE = $(LIBC_CC) -nostdlib -static-pie -z noexecstack -o $(1) $(LIBC_CRT1) $(2) \
	-Wl,--start-group $(LIBC_A) $(LIBC_LIBGCC) -Wl,--end-group

# The library itself: position-independent (usable in both kinds of binary).
# gcc must not turn malloc+memset into a call to calloc (inside calloc), nor
# loops into calls to memset/memcpy/strlen (inside those).
LIBC_OWN_CFLAGS := $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror -fPIE \
	-fno-builtin-malloc -fno-builtin-calloc -fno-builtin-realloc -fno-builtin-free \
	-fno-tree-loop-distribute-patterns -fno-omit-frame-pointer -MMD -MP
LIBC_SRCS := $(filter-out $(LIBC_DIR)/src/crt1.S,$(wildcard $(LIBC_DIR)/src/*.c $(LIBC_DIR)/src/*.S))
LIBC_OBJS := $(patsubst $(LIBC_DIR)/src/%,$(LIBC_OUT)/obj/%.o,$(LIBC_SRCS))

$(LIBC_OUT)/obj/%.c.o: $(LIBC_DIR)/src/%.c | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  LIBCC   $<"
	$(Q)$(LIBC_CC) $(LIBC_OWN_CFLAGS) -c -o $@ $<

$(LIBC_OUT)/obj/%.S.o: $(LIBC_DIR)/src/%.S | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  LIBAS   $<"
	$(Q)$(LIBC_CC) $(LIBC_OWN_CFLAGS) -c -o $@ $<

$(LIBC_CRT1): $(LIBC_DIR)/src/crt1.S | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  LIBAS   $<"
	$(Q)$(LIBC_CC) $(LIBC_OWN_CFLAGS) -c -o $@ $<

$(LIBC_A): $(LIBC_OBJS)
	@echo "  AR      $@"
	$(Q)rm -f $@ && ar rcs $@ $^

# ---- unit tests ------------------------------------------------------------
LIBC_TEST_NAMES := $(notdir $(basename $(wildcard $(LIBC_DIR)/tests/*.c)))
LIBC_TESTS := $(foreach n,$(LIBC_TEST_NAMES),$(LIBC_OUT)/tests/$(n) $(LIBC_OUT)/tests/$(n)-pie)
LIBC_TEST_HDRS := $(wildcard $(LIBC_DIR)/tests/*.h)
LIBC_TEST_CFLAGS := $(LIBC_CFLAGS) -O2 -g -Wall -Wextra -Werror -Wno-format-truncation -Wno-stringop-truncation

$(LIBC_OUT)/tests/%: $(LIBC_DIR)/tests/%.c $(LIBC_TEST_HDRS) $(LIBC_DEPS)
	@mkdir -p $(@D)
	@echo "  LIBCC   $@"
	$(Q)$(LIBC_CC) $(LIBC_TEST_CFLAGS) -fno-pie -c -o $@.o $<
	$(Q)$(call LIBC_LINK,$@,$@.o)

$(LIBC_OUT)/tests/%-pie: $(LIBC_DIR)/tests/%.c $(LIBC_TEST_HDRS) $(LIBC_DEPS)
	@mkdir -p $(@D)
	@echo "  LIBCC   $@"
	$(Q)$(LIBC_CC) $(LIBC_TEST_CFLAGS) -fPIE -c -o $@.o $<
	$(Q)$(call LIBC_LINK_PIE,$@,$@.o)

HOST_TESTS += $(LIBC_TESTS)
HOST_TEST_DEPS += $(LIBC_TESTS)

libc: $(LIBC_DEPS)
libc-test: $(LIBC_TESTS)
	tools/runtests --cpus '' $(foreach t,$(LIBC_TESTS),--host '$(t)')

.PHONY: libc libc-test
-include $(LIBC_OBJS:.o=.d)
