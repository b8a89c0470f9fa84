# SPDX-License-Identifier: GPL-2.0-only
#
# kvreg: kernel module (Kbuild), libkvreg, kvregctl, tests.
#   make            library, kvregctl and the module for $(KVER)
#   make demo       boot a Debian guest and show kvreg at work
#   make check      every test; ends with "N passed, N failed, N skipped"
#   make install    library, headers, pkg-config file and kvregctl
#   make dkms-install   register the module source with DKMS and build it

# The one place the version is kept is dkms.conf, which DKMS reads too.
VERSION     := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
ABI_MAJOR   := 1
BUILD       ?= build
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
DESTDIR     ?=

# The Debian kernel the module is built for and tested in.
KVER        ?= $(shell tests/guest/kernel.sh kver 2>/dev/null)
KDIR        ?= /lib/modules/$(KVER)/build

CC          ?= cc
WARN        := -Wall -Wextra -Werror
BASE_CFLAGS := -std=c11 -D_GNU_SOURCE -O2 -g $(WARN) -Iinclude
SAN_CFLAGS  := -fsanitize=address,undefined -fno-sanitize-recover=all \
	       -fno-omit-frame-pointer

LIB_SRCS    := $(wildcard libuser/lib/*.c)
LIB_HDRS    := include/kvreg.h include/uapi/kvreg.h libuser/lib/internal.h
SONAME      := libkvreg.so.$(ABI_MAJOR)

# Objects of the plain and of the sanitized builds.
LIB_OBJS     = $(patsubst libuser/lib/%.c,$(BUILD)/$(1)/lib/%.o,$(LIB_SRCS))

.PHONY: all lib tools module tests check demo bench fuzz install \
	dkms-install clean deps
all: lib tools module

lib: $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libkvreg.so $(BUILD)/lib/libkvreg.a
tools: $(BUILD)/bin/kvregctl

$(BUILD)/plain/lib/%.o: libuser/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -fPIC -c $< -o $@
$(BUILD)/san/lib/%.o: libuser/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -c $< -o $@

$(BUILD)/lib/$(SONAME).$(VERSION): $(call LIB_OBJS,plain) libuser/lib/libkvreg.map
	@mkdir -p $(@D)
	$(CC) -shared -Wl,-soname,$(SONAME) \
	  -Wl,--version-script=libuser/lib/libkvreg.map -Wl,-z,defs \
	  -o $@ $(call LIB_OBJS,plain)
$(BUILD)/lib/$(SONAME): $(BUILD)/lib/$(SONAME).$(VERSION)
	ln -sf $(notdir $<) $@
$(BUILD)/lib/libkvreg.so: $(BUILD)/lib/$(SONAME)
	ln -sf $(notdir $<) $@
$(BUILD)/lib/libkvreg.a: $(call LIB_OBJS,plain)
	@mkdir -p $(@D)
	rm -f $@ && ar rcs $@ $^
$(BUILD)/san/libkvreg.a: $(call LIB_OBJS,san)
	rm -f $@ && ar rcs $@ $^

$(BUILD)/bin/kvregctl: libuser/kvregctl.c $(BUILD)/lib/libkvreg.so
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $< -o $@ -L$(BUILD)/lib -lkvreg \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# Tests: unit tests run on the host, integration tests and benchmarks in
# the guest. Each is one program exiting 0 (pass), 1 (fail) or 77 (skip).
UNIT_SRCS  := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integration/*.c)
BENCH_SRCS := $(wildcard tests/bench/*.c)
TEST_HDRS  := tests/common/kvtest.h tests/common/kvbench.h $(LIB_HDRS)

UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS)) \
	      $(patsubst tests/unit/%.c,$(BUILD)/tests/unit-san/%,$(UNIT_SRCS))
INTEG_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(INTEG_SRCS))
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRCS))

tests: $(UNIT_BINS) $(INTEG_BINS) $(BENCH_BINS) $(BUILD)/tests/demo

$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/lib/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Ilibuser/lib -Itests/common $< -o $@ \
	  $(BUILD)/lib/libkvreg.a
$(BUILD)/tests/unit-san/%: tests/unit/%.c $(BUILD)/san/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Ilibuser/lib -Itests/common $< \
	  -o $@ $(BUILD)/san/libkvreg.a
# Integration tests run under ASan and UBSan, against the sanitized library.
$(BUILD)/tests/integration/%: tests/integration/%.c $(BUILD)/san/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Itests/common $< -o $@ \
	  $(BUILD)/san/libkvreg.a -pthread
$(BUILD)/tests/bench/%: tests/bench/%.c $(BUILD)/lib/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Itests/common $< -o $@ $(BUILD)/lib/libkvreg.a \
	  -libverbs
$(BUILD)/tests/demo: tests/demo/demo.c $(BUILD)/lib/libkvreg.so $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $< -o $@ -L$(BUILD)/lib -lkvreg \
	  -Wl,-rpath,'$$ORIGIN/../lib'

# The module, against the headers of $(KVER), built in a staged copy per
# kernel (build/kmod/KVER/src) so kernels never share objects.
module:
	@test -n "$(KVER)" || { echo "no Debian kernel headers: run 'make deps'"; exit 1; }
	tests/guest/build-module.sh $(KDIR) $(BUILD)/kmod/$(KVER)

deps:
	tests/guest/deps.sh

check: deps
	tests/check.sh

demo: deps
	tests/demo/demo.sh

bench: deps
	tests/bench/bench.sh

# The ioctl fuzzer on the debug kernel, longer than make check runs it.
FUZZ_CALLS ?= 2000000
fuzz: deps
	tests/guest/fuzz.sh $(FUZZ_CALLS)

install: lib tools
	install -d $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
	  $(DESTDIR)$(INCLUDEDIR)/kvreg/uapi
	install -m 0755 $(BUILD)/lib/$(SONAME).$(VERSION) $(DESTDIR)$(LIBDIR)/
	ln -sf $(SONAME).$(VERSION) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libkvreg.so
	install -m 0644 $(BUILD)/lib/libkvreg.a $(DESTDIR)$(LIBDIR)/
	# Written here: the paths are those of this install, not of the build.
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(LIBDIR)|' \
	    -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|' -e 's|@VERSION@|$(VERSION)|' \
	    libuser/lib/libkvreg.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/libkvreg.pc
	install -m 0644 include/kvreg.h $(DESTDIR)$(INCLUDEDIR)/kvreg/
	install -m 0644 include/uapi/kvreg.h $(DESTDIR)$(INCLUDEDIR)/kvreg/uapi/
	install -m 0755 $(BUILD)/bin/kvregctl $(DESTDIR)$(BINDIR)/

# Copies the module source to /usr/src/kvreg-$(VERSION) and lets DKMS
# build and install it for every installed kernel with headers.
dkms-install:
	rm -rf /usr/src/kvreg-$(VERSION)
	install -d /usr/src/kvreg-$(VERSION)
	cp -r Kbuild dkms.conf kmod include /usr/src/kvreg-$(VERSION)/
	dkms add -m kvreg -v $(VERSION)
	dkms build -m kvreg -v $(VERSION)
	dkms install -m kvreg -v $(VERSION)

clean:
	rm -rf $(BUILD)
	-$(MAKE) -C $(KDIR) M=$(CURDIR) clean >/dev/null 2>&1
