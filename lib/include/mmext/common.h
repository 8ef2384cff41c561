/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Conventions shared by every libmmext header.
 *
 * - Every public name starts with mmext_ (MMEXT_ for macros).
 * - Functions return 0 (or a non-negative count) on success and a negative errno
 *   value on failure; errno itself is left as the C library set it and is not part
 *   of the interface. The library never prints, never exits and never raises.
 * - Options are passed in structs whose first member is size_t sz, declared with
 *   MMEXT_OPTS() so that sz is set and all other bytes are zero. A NULL options
 *   pointer means all defaults. A struct larger than the library knows is accepted
 *   only if its unknown tail is all zero bytes; otherwise the call fails with -E2BIG
 *   (as the kernel's copy_struct_from_user() does). sz smaller than sizeof(size_t)
 *   is -EINVAL, sz larger than MMEXT_OPTS_MAX is -E2BIG (the library reads no more).
 * - A handle (struct mmext_ww, mmext_maps, mmext_pattern) belongs to the process that
 *   opened it. In another process, such as a fork() child, every call on it fails
 *   with -ECHILD (functions returning a pointer or size return NULL or 0), except the
 *   one that closes it, which releases it in that process alone; but a clone() child
 *   sharing the descriptor table (CLONE_FILES without CLONE_VM) must not close it,
 *   which would close the owner's descriptors too.
 * - A call that needs a feature fails with -EOPNOTSUPP when the kernel lacks it. When
 *   the feature's probe could not run (out of fds or memory: see mmext_probe()), or
 *   the kernel has the feature but this process may not use it, the call fails with
 *   the probe's reason instead (-EMFILE, -ENOMEM, -EPERM, -EACCES, ...).
 * - Address ranges: the start must be page aligned; a length that is not a multiple
 *   of the page size is rounded up as madvise(2) does; a zero length or a range that
 *   wraps past the end of the address space is -EINVAL.
 */
#ifndef MMEXT_COMMON_H
#define MMEXT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef MMEXT_API
#define MMEXT_API __attribute__((visibility("default")))
#endif

/*
 * Declare and initialise an options struct: MMEXT_OPTS(mmext_ww_opts, o, .backend = X);
 * sets sz and zeroes every member not named. No options struct has padding, so that
 * is every byte the library's zero-tail check reads. Standard C99; in C++ it needs
 * C++20 (designated initialisers, named in member order), and g++'s -Wextra warns
 * about the members left out there. The empty argument MMEXT_OPTS adds lets a call
 * name no member and still pass C99's rule for variadic macros.
 */
#define MMEXT_OPTS(TYPE, ...) MMEXT_OPTS_INIT(TYPE, __VA_ARGS__, )
#define MMEXT_OPTS_INIT(TYPE, NAME, ...) \
	struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }

/* The largest options struct (sz) the library accepts. */
#define MMEXT_OPTS_MAX	4096

/* Version of the library the header belongs to. */
#define MMEXT_VERSION_MAJOR 0
#define MMEXT_VERSION_MINOR 4

/* "MAJOR.MINOR" of the library actually loaded. Thread-safe, static string. */
MMEXT_API const char *mmext_version(void);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_COMMON_H */
