# lwIP 2.1.3 in the kernel (kernel/net/): tools/fetch-lwip fetches and unpacks
# its source into $(BUILD)/lwip once; its files are compiled with the kernel's
# flags and linked into kernel.elf. Our port (kernel/net/port/) gives lwIP its
# configuration and platform headers; kernel/net/*.c and the tests that use
# lwIP (tests/kernel/net_*) see lwIP's headers too.
LWIP_VERSION := 2.1.3
LWIP_DIR := $(BUILD)/lwip/lwip-$(LWIP_VERSION)/src
LWIP_STAMP := $(BUILD)/lwip/.fetched-$(LWIP_VERSION)
LWIP_INC := -Ikernel/net/port -I$(LWIP_DIR)/include

# Core, IPv4, the netconn API and Ethernet; the rest of lwIP is left out
# (port/lwipopts.h turns off what these files could still use).
LWIP_SRCS := core/init.c core/def.c core/inet_chksum.c core/ip.c core/mem.c \
	core/memp.c core/netif.c core/pbuf.c core/raw.c core/sys.c core/tcp.c \
	core/tcp_in.c core/tcp_out.c core/timeouts.c core/udp.c \
	core/ipv4/etharp.c core/ipv4/icmp.c core/ipv4/ip4.c core/ipv4/ip4_addr.c \
	core/ipv4/ip4_frag.c \
	api/api_lib.c api/api_msg.c api/err.c api/netbuf.c api/tcpip.c \
	netif/ethernet.c
LWIP_OBJS := $(patsubst %,$(BUILD)/lwip/obj/%.o,$(LWIP_SRCS))
KOBJS += $(LWIP_OBJS)

$(LWIP_STAMP): tools/fetch-lwip | $(DEPS_OK)
	$(Q)tools/fetch-lwip $(BUILD)
	@touch $@

# lwIP's own files: also the few libc headers they include (port/libc/).
$(BUILD)/lwip/obj/%.c.o: | $(LWIP_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      lwip/$*.c"
	$(Q)$(KCC) $(KCFLAGS) $(LWIP_INC) -Ikernel/net/port/libc -c -o $@ $(LWIP_DIR)/$*.c

# Our files that include lwIP's headers.
LWIP_USERS := $(filter $(BUILD)/kernel/net/% $(BUILD)/tests/kernel/net_%,$(KOBJS))
$(LWIP_USERS): KCFLAGS += $(LWIP_INC)
$(LWIP_USERS): | $(LWIP_STAMP)

# A second lwIP instance in the same kernel, for the two-instance test
# (tests/kernel/net_twin_test.c; docs/net.md, "Where it serialises"): lwIP's
# files and the test's side of it (tests/kernel/net_twin_side.c) compiled
# again, linked into one relocatable object, and every global symbol that
# object defines renamed lw2_NAME. Its references to the rest of the kernel
# (sys_arch, kmalloc, the C library functions) keep their names, so it shares
# those and nothing of lwIP's state: its own pools, PCBs, interfaces, timers,
# core lock and tcpip thread. One instance per core would be built this way.
LWIP2_OBJS := $(patsubst %,$(BUILD)/lwip2/obj/%.o,$(LWIP_SRCS)) $(BUILD)/lwip2/obj/net_twin_side.c.o
LWIP2 := $(BUILD)/lwip2/lwip2.o
KOBJS += $(LWIP2)

$(BUILD)/lwip2/obj/%.c.o: | $(LWIP_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      lwip2/$*.c"
	$(Q)$(KCC) $(KCFLAGS) $(LWIP_INC) -Ikernel/net/port/libc -c -o $@ $(LWIP_DIR)/$*.c
$(BUILD)/lwip2/obj/net_twin_side.c.o: tests/kernel/net_twin_side.c | $(LWIP_STAMP)
	@mkdir -p $(@D)
	@echo "  CC      lwip2/net_twin_side.c"
	$(Q)$(KCC) $(KCFLAGS) $(LWIP_INC) -c -o $@ $<

$(LWIP2): $(LWIP2_OBJS) kernel/net/net.mk
	@echo "  LD -r   $@ (globals renamed lw2_*)"
	$(Q)ld -r -o $@.tmp $(LWIP2_OBJS)
	$(Q)nm -g --defined-only $@.tmp | awk '{ print $$3 " lw2_" $$3 }' > $@.syms
	$(Q)objcopy --redefine-syms=$@.syms $@.tmp $@ && rm -f $@.tmp
