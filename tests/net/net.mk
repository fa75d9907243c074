# Host <-> guest networking (tests/net/hostnet_test.py): the guest's side,
# tests/net/hostnet.sh, goes in the image as /tests/hostnet.sh; make test runs
# the host's side. Included by the top-level Makefile.
## $(BUILD)/tests/hostnet-test: busybox httpd, wget and nc between this host and a guest (hostfwd, guestfwd)

ROOT_DEPS += tests/net/hostnet.sh
ROOT_STAGE += mkdir -p tests && cp $(abspath tests/net/hostnet.sh) tests/hostnet.sh;

HOSTNET_TEST := $(BUILD)/tests/hostnet-test
$(HOSTNET_TEST): tests/net/net.mk
	@mkdir -p $(@D)
	$(Q)printf '#!/bin/sh\nexec tests/net/hostnet_test.py %s "$$@"\n' $(BUILD)/esp.img > $@ && chmod +x $@
HOST_TESTS += $(HOSTNET_TEST)
HOST_TEST_DEPS += $(HOSTNET_TEST)
