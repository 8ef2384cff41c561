# SPDX-License-Identifier: GPL-2.0
# Entry points. The two README commands are `make demo` (build the patched kernel, boot it,
# run the feature tour) and `make check` (every test tier); both install what they need.

DEBUG ?= 0
export DEBUG

# The library, the command, the tests and the examples, from the repo alone: no kernel
# tree, only the C library's headers (flags: mk/flags.mk).
all: tests

demo:
	scripts/demo.sh

check:
	tests/run.sh

# Every feature's benchmarks on the host and in stock and patched guests: build/report/.
# BENCH_ARGS=--quick for the short run (its time: docs/results/run-times.md).
bench:
	bench/run.sh $(BENCH_ARGS)

# build/lib, build/bin/mmext; the tests and examples into build/guest, which the host
# tier runs and every guest carries. One after the other: each asks lib/ for the library.
cli:
	$(MAKE) -C cli

tests: cli
	$(MAKE) -C tests
	$(MAKE) -C examples

kernel:
	scripts/deps.sh
	scripts/kernel.sh prepare
	scripts/kernel.sh build stock
	scripts/kernel.sh build patched

# Debian packages of the patched kernel, linux-image and linux-headers, from Debian's
# configuration with its modules (hours); DEB_CONFIG=test packages the test configuration
# (minutes). Where they are and what they hold: docs/install.md.
kernel-deb:
	scripts/deps.sh
	scripts/kernel.sh prepare
	scripts/kernel.sh deb

# The queue of the base MMEXT_BASE names (default 6.12): kernel/<base>/ <-> build/linux
# (build/<base>/linux for another base), e.g. make export-queue MMEXT_BASE=7.3.
export-queue:
	scripts/kernel.sh export

# Each series of each base (kernel/*/covers/) as git format-patch
# output with To/Cc in build/upstream/<base>/<series>/, checked to apply to its pristine base.
upstream:
	scripts/upstream.sh

import-queue:
	scripts/kernel.sh import

# The library, its headers and .pc, the command and the man pages, with a link page
# per function (man mmext_ww_open). DESTDIR, PREFIX and LIBDIR as in lib/Makefile.
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
install:
	$(MAKE) -C lib install
	$(MAKE) -C cli install
	scripts/man-pages.sh install $(DESTDIR)$(MANDIR) man/*.[1-8]

uninstall:
	$(MAKE) -C lib uninstall
	$(MAKE) -C cli uninstall
	scripts/man-pages.sh uninstall $(DESTDIR)$(MANDIR) man/*.[1-8]

clean:
	$(MAKE) -C tests clean
	$(MAKE) -C cli clean

.PHONY: all demo check bench cli tests kernel kernel-deb export-queue import-queue upstream install uninstall clean
