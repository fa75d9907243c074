# Debian's busybox-static in the image: /bin/busybox, and a link to it for each
# applet below that our own programs do not provide (ours keep their names).
# The binary comes from the Debian package tools/deps installs; it is a static
# Linux program and runs unchanged on our kernel. $(PROG_DIR) gets the same
# links, so that tests/cases/busybox.t runs on the host as in the guest.
#
# The applets: an editor and the tools students reach for, and top, free and
# uptime, which read /proc (kernel/file/procfs), and nc, httpd and wget, over
# the socket calls (kernel/net/socket.c); none needs devices or mounts. ps is
# our own (user/ps.c).
BUSYBOX := /bin/busybox
BUSYBOX_APPLETS := vi ed less more \
	uniq sed awk tr cut paste tee diff cmp patch \
	date cal printf which time timeout expr seq yes sync \
	basename dirname readlink realpath mktemp mkfifo truncate unlink \
	od hexdump xxd strings tac rev nl fold expand unexpand dos2unix base64 \
	md5sum sha1sum sha256sum tar gzip gunzip zcat bc dc factor \
	clear reset stty tty id whoami usleep getopt \
	top free uptime nc httpd wget
BUSYBOX_LINKS := $(filter-out $(PROG_NAMES) [,$(BUSYBOX_APPLETS))

# /bin/busybox appears only once tools/deps has run: on a fresh machine make
# must not give up on it before then.
$(BUSYBOX): | $(DEPS_OK)
	@test -x $@ || { echo "$@ missing: tools/deps should have installed busybox-static" >&2; exit 1; }

# The stamp stands for the binary and its links.
$(PROG_DIR)/busybox: $(BUSYBOX) user/busybox.mk | $(DEPS_OK)
	@mkdir -p $(@D)
	@echo "  BUSYBOX $@"
	$(Q)cp $(BUSYBOX) $@ && cd $(@D) && for a in $(BUSYBOX_LINKS); do ln -sf busybox $$a; done

HOST_TEST_DEPS += $(PROG_DIR)/busybox
# EXTRA's files (copied before) win over the links.
ROOT_DEPS += $(PROG_DIR)/busybox
ROOT_STAGE += cp $(abspath $(PROG_DIR)/busybox) bin/busybox && \
	for a in $(BUSYBOX_LINKS); do [ -e bin/$$a ] || ln -s busybox bin/$$a; done;
