# mtrace: the QEMU plugin that finds cache lines shared by two commuting calls.
# Included by the top-level Makefile.
#   $(MTRACE_SO)  the plugin, built against our declarations of QEMU's plugin API
#                 (tools/mtrace/qemu-plugin-api.h), so no QEMU source is needed
MTRACE_SO := $(BUILD)/mtrace/mtrace.so
MTRACE_CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared \
	-fvisibility=hidden

$(MTRACE_SO): tools/mtrace/mtrace.c tools/mtrace/markers.h tools/mtrace/qemu-plugin-api.h \
		| $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  CC      $@"
	$(Q)gcc $(MTRACE_CFLAGS) -o $@ tools/mtrace/mtrace.c -lpthread

mtrace-plugin: $(MTRACE_SO)
.PHONY: mtrace-plugin
