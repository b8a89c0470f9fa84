# SPDX-License-Identifier: GPL-2.0-only
#
# kvreg: kernel module (Kbuild), libkvreg, kvregctl, tests.
#   make            library, kvregctl and the module for $(KVER)
#   make demo       boot a Debian guest and show kvreg at work
#   make check      every test; ends with "N passed, N failed, N skipped"
#   make check T=integration/overlap   one test (one guest boot)
#   make install    library, headers, pkg-config file, kvregctl, man pages
#   make install-dist   udev rule (group kvreg, 0660) and modprobe.d example
#   make deb        the Debian packages, in build/deb
#   make dkms-install   register the module source with DKMS and build it

# The one place the version is kept is dkms.conf, which DKMS reads too.
VERSION     := $(shell sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
ABI_MAJOR   := 1
BUILD       ?= build
PREFIX      ?= /usr/local
LIBDIR      ?= $(PREFIX)/lib
INCLUDEDIR  ?= $(PREFIX)/include
BINDIR      ?= $(PREFIX)/bin
MANDIR      ?= $(PREFIX)/share/man
# Where install-dist puts the udev rule and the modprobe.d example.
UDEVDIR     ?= /lib/udev/rules.d
MODPROBEDIR ?= /etc/modprobe.d
DESTDIR     ?=
# kvregctl finds the library of its build tree; packages clear this.
TOOL_RPATH  ?= -Wl,-rpath,'$$ORIGIN/../lib'

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
	install-dist dkms-install deb unit-tests clean deps
all: lib tools module

lib: $(BUILD)/lib/$(SONAME) $(BUILD)/lib/libkvreg.so $(BUILD)/lib/libkvreg.a
tools: $(BUILD)/bin/kvregctl

# CPPFLAGS, CFLAGS and LDFLAGS from the environment (a distribution's
# hardening flags) apply to what is shipped: the library and kvregctl.
$(BUILD)/plain/lib/%.o: libuser/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) -fPIC -c $< -o $@
$(BUILD)/san/lib/%.o: libuser/lib/%.c $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -c $< -o $@

$(BUILD)/lib/$(SONAME).$(VERSION): $(call LIB_OBJS,plain) libuser/lib/libkvreg.map
	@mkdir -p $(@D)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) \
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

$(BUILD)/bin/kvregctl: libuser/kvregctl.c $(BUILD)/lib/libkvreg.so dkms.conf
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) \
	  -DKVREG_VERSION='"$(VERSION)"' $< -o $@ \
	  -L$(BUILD)/lib -lkvreg $(TOOL_RPATH)

# Tests: unit tests run on the host, integration tests and benchmarks in
# the guest. Each is one program exiting 0 (pass), 1 (fail) or 77 (skip).
UNIT_SRCS  := $(wildcard tests/unit/*.c)
INTEG_SRCS := $(wildcard tests/integration/*.c)
BENCH_SRCS := $(wildcard tests/bench/*.c)
TEST_HDRS  := $(wildcard tests/common/*.h) $(LIB_HDRS)

UNIT_BINS  := $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS)) \
	      $(patsubst tests/unit/%.c,$(BUILD)/tests/unit-san/%,$(UNIT_SRCS))
INTEG_BINS := $(patsubst tests/integration/%.c,$(BUILD)/tests/integration/%,$(INTEG_SRCS))
BENCH_BINS := $(patsubst tests/bench/%.c,$(BUILD)/tests/bench/%,$(BENCH_SRCS))
PAIR_BINS  := $(patsubst tests/pair/%.c,$(BUILD)/tests/pair/%,$(wildcard tests/pair/*.c))

tests: $(UNIT_BINS) $(INTEG_BINS) $(BENCH_BINS) $(PAIR_BINS) $(BUILD)/tests/demo \
	$(BUILD)/examples/hicache_backend $(BUILD)/examples/hicache_remote

# The library's host tests, which need no module: what a package build runs.
unit-tests: $(patsubst tests/unit/%.c,$(BUILD)/tests/unit/%,$(UNIT_SRCS))
	@for t in $^; do $$t > /dev/null; rc=$$?; \
	  [ $$rc -eq 0 ] || [ $$rc -eq 77 ] || { echo "FAIL $$t"; exit 1; }; done

# Every reason and argument code, as the headers define them.
NAMES_H := $(BUILD)/tests/gen/kvreg_names.h
$(NAMES_H): tests/common/gen-names.sh include/uapi/kvreg.h include/kvreg.h
	@mkdir -p $(@D)
	sh $< include/uapi/kvreg.h include/kvreg.h > $@
$(BUILD)/tests/unit/%: tests/unit/%.c $(BUILD)/lib/libkvreg.a $(TEST_HDRS) $(NAMES_H)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Ilibuser/lib -Itests/common -I$(BUILD)/tests/gen \
	  $< -o $@ $(BUILD)/lib/libkvreg.a
$(BUILD)/tests/unit-san/%: tests/unit/%.c $(BUILD)/san/libkvreg.a $(TEST_HDRS) $(NAMES_H)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Ilibuser/lib -Itests/common \
	  -I$(BUILD)/tests/gen $< -o $@ $(BUILD)/san/libkvreg.a
# Integration tests run under ASan and UBSan, against the sanitized library.
$(BUILD)/tests/integration/%: tests/integration/%.c $(BUILD)/san/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Itests/common $< -o $@ \
	  $(BUILD)/san/libkvreg.a -pthread $(TEST_LIBS)
# One side each of the tests between two guests (tests/guest/pair.sh).
$(BUILD)/tests/pair/%: tests/pair/%.c $(BUILD)/san/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) $(SAN_CFLAGS) -Itests/common $< -o $@ \
	  $(BUILD)/san/libkvreg.a
# The plain-verbs peer uses rdma-core alone, as a user-space engine would.
$(BUILD)/tests/integration/verbs_peer: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/exports: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/export_guess: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/keepalive_peer: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/caps: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/conn_rejected: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/cm_fuzz: TEST_LIBS = -lrdmacm -libverbs -lpthread
$(BUILD)/tests/integration/engine_attack: TEST_LIBS = -libverbs
$(BUILD)/tests/integration/peer_protocol: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/rail_mend: TEST_LIBS = -lrdmacm -libverbs
$(BUILD)/tests/integration/cm_worker: TEST_LIBS = -lrdmacm -libverbs
# The library's own allocations, made to fail through wrappers.
$(BUILD)/tests/integration/lib_alloc: TEST_LIBS = -Wl,--wrap=calloc \
	-Wl,--wrap=realloc
$(BUILD)/tests/bench/%: tests/bench/%.c $(BUILD)/lib/libkvreg.a $(TEST_HDRS)
	@mkdir -p $(@D)
	$(CC) $(BASE_CFLAGS) -Itests/common $< -o $@ $(BUILD)/lib/libkvreg.a \
	  -libverbs -pthread
# The example as a user builds it, against the library and public header.
$(BUILD)/examples/%: examples/%.c $(BUILD)/lib/libkvreg.so $(LIB_HDRS)
	@mkdir -p $(@D)
	$(CC) -std=c11 $(WARN) -O2 -Iinclude $< -o $@ -L$(BUILD)/lib -lkvreg \
	  -Wl,-rpath,'$$ORIGIN/../lib'
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

# T="NAME..." runs only those tests, e.g. T=integration/overlap;
# REPEAT=N runs each of its guest integration tests N times in one boot.
check:
	T="$(T)" tests/guest/deps.sh
	T="$(T)" REPEAT="$(REPEAT)" tests/check.sh

demo: deps
	tests/demo/demo.sh

# kvreg-dkms, libkvreg1, libkvreg-dev and kvreg-tools, checked by lintian.
deb:
	dist/make-deb.sh $(BUILD)/deb

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
	    libuser/lib/kvreg.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/kvreg.pc
	install -m 0644 include/kvreg.h $(DESTDIR)$(INCLUDEDIR)/kvreg/
	install -m 0644 include/uapi/kvreg.h $(DESTDIR)$(INCLUDEDIR)/kvreg/uapi/
	install -m 0755 $(BUILD)/bin/kvregctl $(DESTDIR)$(BINDIR)/
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(MANDIR)/man7 \
	  $(DESTDIR)$(MANDIR)/man8
	install -m 0644 man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -m 0644 man/*.7 $(DESTDIR)$(MANDIR)/man7/
	install -m 0644 man/*.8 $(DESTDIR)$(MANDIR)/man8/

install-dist:
	install -d $(DESTDIR)$(UDEVDIR) $(DESTDIR)$(MODPROBEDIR)
	install -m 0644 dist/60-kvreg.rules $(DESTDIR)$(UDEVDIR)/
	install -m 0644 dist/kvreg.conf $(DESTDIR)$(MODPROBEDIR)/

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
