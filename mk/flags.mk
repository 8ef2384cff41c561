# SPDX-License-Identifier: GPL-2.0
# Compiler and sanitizer flags of every C build: lib/, cli/, tests/, tests/fuzz/,
# examples/ and bench/ include this file and add only their own include paths and
# what their kind of output needs (-fPIC for the library, say).
#
# The caller's CPPFLAGS, CFLAGS and LDFLAGS (a distribution's build flags, or make
# CFLAGS=...) come first; ours follow. SANITIZE=1 builds with AddressSanitizer and
# UBSan (the host-asan tier); a sanitized build wants its own output directory.

CFLAGS ?= -O2 -g

WARN_FLAGS     := -Wall -Wextra -Wno-sign-compare -Wno-unused-parameter
SANITIZE_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer \
		  -fno-sanitize-recover=undefined

# What a build that must never be sanitized uses (an LD_PRELOAD shim, a static helper).
PLAIN_CFLAGS  := $(CPPFLAGS) $(CFLAGS) -std=gnu11 $(WARN_FLAGS) -D_GNU_SOURCE
PLAIN_LDFLAGS := $(LDFLAGS)

ifeq ($(SANITIZE),1)
MMEXT_CFLAGS  := $(PLAIN_CFLAGS) $(SANITIZE_FLAGS)
MMEXT_LDFLAGS := $(PLAIN_LDFLAGS) -fsanitize=address,undefined
else
MMEXT_CFLAGS  := $(PLAIN_CFLAGS)
MMEXT_LDFLAGS := $(PLAIN_LDFLAGS)
endif
