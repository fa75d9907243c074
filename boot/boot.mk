# Make fragment: builds the UEFI loader $(BUILD)/boot/BOOTX64.EFI from
# boot/loader.c with Debian's gnu-efi (3.0.15).
## $(BUILD)/boot/BOOTX64.EFI: the UEFI loader alone (loader.so beside it keeps the symbols)
#
# Include it from a Makefile (e.g. `include boot/boot.mk` at the top level).
# Inputs:
#   BUILD        output directory (default: build). Set it before the include.
#   BOOT_CC, BOOT_LD, BOOT_OBJCOPY   tools (default gcc, ld, objcopy); separate
#                from CC/LD so the kernel's settings don't leak into the loader.
#   EFI_INC, EFI_LIB  gnu-efi headers and libraries (default /usr/include/efi, /usr/lib).
#   Q            optional: "@" for quiet output (short "  CC  file" lines).
# Defines:
#   BOOT_EFI     = $(BUILD)/boot/BOOTX64.EFI, with a rule to build it.
#   BOOT_DIR     the directory holding this file, found from MAKEFILE_LIST, so
#                the fragment works whatever directory make runs in.
#   BOOT_OUT     = $(BUILD)/boot (objects, loader.so with symbols for gdb).
# BOOT_EFI is set when this file is read: use it after the include (a
# prerequisite list is expanded at once). The fragment does not change the
# including Makefile's default goal.
# Uses only BOOT_*/EFI_* variables and explicit (non-pattern) rules, so it
# cannot clash with the including Makefile's CFLAGS or pattern rules.

BOOT_DIR := $(patsubst %/,%,$(dir $(lastword $(MAKEFILE_LIST))))
BUILD ?= build

# Our rules must not become the including Makefile's default goal.
BOOT_SAVED_GOAL := $(.DEFAULT_GOAL)

BOOT_CC ?= gcc
BOOT_LD ?= ld
BOOT_OBJCOPY ?= objcopy
EFI_INC ?= /usr/include/efi
EFI_LIB ?= /usr/lib

BOOT_OUT := $(BUILD)/boot
BOOT_EFI := $(BOOT_OUT)/BOOTX64.EFI

# gnu-efi's own conventions for x86-64: position-independent code (crt0
# relocates the image), 16-bit wchar_t for L"" strings, no red zone, and the
# ms_abi calling convention for firmware calls (Debian's libefi is built so).
BOOT_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror \
	-ffreestanding -fpic -fshort-wchar -mno-red-zone \
	-fno-stack-protector -fno-stack-check -fno-strict-aliasing \
	-maccumulate-outgoing-args -DGNU_EFI_USE_MS_ABI -DCONFIG_x86_64 \
	-I$(EFI_INC) -I$(EFI_INC)/x86_64 -I$(BOOT_DIR) -MMD -MP

BOOT_LDFLAGS := -nostdlib -znocombreloc -shared -Bsymbolic \
	-T $(EFI_LIB)/elf_x86_64_efi.lds -L$(EFI_LIB)

# Sections that make up the PE image; the rest (symbols, debug) stay in the .so.
BOOT_SECTIONS := -j .text -j .sdata -j .data -j .rodata -j .dynamic -j .dynsym \
	-j .rel -j .rela -j '.rel.*' -j '.rela.*' -j .reloc

# Follows the includer's quiet mode: with Q=@, show a short line per step.
boot_say = $(if $(Q),@echo "  $(1)")

$(BOOT_OUT)/loader.o: $(BOOT_DIR)/loader.c
	@mkdir -p $(@D)
	$(call boot_say,CC      $<)
	$(Q)$(BOOT_CC) $(BOOT_CFLAGS) -c -o $@ $<

$(BOOT_OUT)/loader.so: $(BOOT_OUT)/loader.o
	$(call boot_say,LD      $@)
	$(Q)$(BOOT_LD) $(BOOT_LDFLAGS) -o $@ $(EFI_LIB)/crt0-efi-x86_64.o $^ -lefi -lgnuefi

$(BOOT_EFI): $(BOOT_OUT)/loader.so
	$(call boot_say,EFI     $@)
	$(Q)$(BOOT_OBJCOPY) $(BOOT_SECTIONS) --target efi-app-x86_64 --subsystem=10 $< $@

-include $(BOOT_OUT)/loader.d

.DEFAULT_GOAL := $(BOOT_SAVED_GOAL)
