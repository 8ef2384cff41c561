/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Pattern memory (the library side of reference pages): a private mapping whose
 * untouched pages read as a repeated pattern, whose written pages become private
 * copies, and whose pages go back to the pattern after madvise(MADV_DONTNEED).
 * fork() children inherit it with copy-on-write semantics, as for any private
 * mapping.
 *
 * Backends:
 * KERNEL    reference pages (refpage_create(), mmext kernel patch; number read from
 *           MMEXT_REFPAGE_SYSFS on the 6.12 backport, the system call table's where
 *           only MMEXT_REFPAGE_PAGES_SYSFS marks the mainline series): one kernel page
 *           of pattern for the whole mapping.
 *           Clean pages cost nothing (not in RSS, nothing allocated); the first
 *           write to a page copies the pattern page; one VMA, shown in maps as
 *           anon_inode:[refpage]; never THP. -EOPNOTSUPP when the kernel lacks it.
 *           The library keeps the reference-page fds of the 8 most recently used
 *           patterns (pattern bytes and pattern_len are the key), so that mapping a
 *           pattern again costs one mmap(). Limits of that cache:
 *           - it pins one page of kernel memory, one fd (close-on-exec) and a copy
 *             of the pattern per cached pattern, until the pattern is evicted
 *             (least recently used) or the process exits or executes a program:
 *             unmapping the last mapping of a pattern does not free its page, and
 *             neither does dlclose() of the library (a program that unloads it
 *             should pass MMEXT_PATTERN_NOCACHE);
 *           - a fork() child inherits the fds and keeps using the same pages; a
 *             child forked while another thread was changing the cache starts an
 *             empty one and leaves the fds it inherited open (close-on-exec);
 *           - a program that closes fds it did not open (closefrom()) must not map
 *             patterns afterwards, or must pass MMEXT_PATTERN_NOCACHE;
 *           - the same bytes with another pattern_len get a page of their own.
 *           MMEXT_PATTERN_NOCACHE makes and releases a page for that mapping alone.
 *           Never executable (the kernel refuses it): forcing KERNEL with
 *           PROT_EXEC is -EINVAL on every kernel, AUTO with PROT_EXEC uses
 *           EMULATED, and mprotect() to PROT_EXEC later fails (EACCES).
 *           On the 6.12 backport, unavailable to ia32 and x32 builds (the published
 *           number is x86-64's).
 *           A seccomp filter may refuse refpage_create() although the kernel has
 *           it: AUTO then uses EMULATED when the call fails with ENOSYS, EPERM or
 *           EACCES; forced KERNEL returns -EOPNOTSUPP for ENOSYS and passes EPERM
 *           and EACCES on. A filter that kills or traps (SIGSYS) cannot be
 *           survived: such a process must pass EMULATED, or its filter must answer
 *           an errno (ENOSYS) for refpage_create()'s number.
 *           The mapping is a file mapping, which loses some of anonymous memory's
 *           behaviour (refpage_create(2)): it never merges with neighbouring
 *           mappings (one VMA per mapping), never uses THP, cannot be named
 *           (mmext_name_set(): -EBADF), refuses MADV_WIPEONFORK (EINVAL) and
 *           userfaultfd write-protection (mmext_ww_open() forced to PAGEMAP_SCAN:
 *           -EOPNOTSUPP; AUTO uses soft-dirty where the kernel has it); a device
 *           mirroring it through HMM cannot read its clean pages, and CRIU cannot
 *           dump it or the cache's fds. Use EMULATED where names, write watch,
 *           HMM or checkpointing matter: its memfd tiles count as shared anonymous
 *           memory, so they can be named (maps shows [anon_shmem:NAME]) and
 *           watched with PAGEMAP_SCAN; they do not merge either, and
 *           MADV_WIPEONFORK fails on them the same way.
 * EMULATED  a sealed memfd holds tile_pages pages of pattern; the range is covered
 *           by MAP_PRIVATE|MAP_FIXED mappings of it, one per tile, so every clean
 *           page of every tile shares the memfd's pages. Costs and limits:
 *           - the memfd pages (tile_pages pages) are allocated once per mapping;
 *           - reading a clean page maps the shared page: it counts in RSS (RssShmem
 *             and the "Shared" smaps fields) though it uses no new memory;
 *           - one VMA per tile: len / (tile_pages * page size) VMAs, counted against
 *             vm.max_map_count (65530 by default): larger tiles, fewer VMAs;
 *           - maps shows the tiles as /memfd:mmext-pattern (deleted);
 *           - the memfd is a file: under an RLIMIT_FSIZE below the tile, tiles
 *             shrink to the limit (more VMAs); below one page the map fails with
 *             -EFBIG rather than let the kernel raise SIGXFSZ;
 *           - munmap() or mremap() of part of the range: see mmext_pattern_unmap();
 *           - mapped with MAP_NORESERVE: clean pages are not counted as committed
 *             memory (Committed_AS); a written page is allocated when written,
 *             as for anonymous memory under overcommit.
 *
 * All functions are thread-safe (each works on its own mapping; the fd cache has a
 * lock, which the child of another thread's fork() never waits for: the library
 * has no atfork handler) and use no signals.
 * A handle belongs to the process that mapped it: in a fork() child the memory is
 * inherited as any private mapping, but calls on the handle fail with -ECHILD
 * (mmext_pattern_addr() returns NULL, mmext_pattern_len() 0); the child's
 * mmext_pattern_unmap() unmaps the child's copy and frees the handle.
 */
#ifndef MMEXT_PATTERN_H
#define MMEXT_PATTERN_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mmext_pattern_backend {
	MMEXT_PATTERN_AUTO = 0,
	MMEXT_PATTERN_KERNEL = 1,
	MMEXT_PATTERN_EMULATED = 2,
};

struct mmext_pattern_opts {
	size_t sz;
	uint32_t backend;	/* enum mmext_pattern_backend */
	uint32_t prot;		/* PROT_* for the mapping; 0 means PROT_READ|PROT_WRITE */
	uint64_t tile_pages;	/* EMULATED: pages per tile; 0 means 512 */
	uint32_t flags;		/* MMEXT_PATTERN_NOCACHE */
	uint32_t reserved;	/* must be 0; keeps the struct free of padding */
};

/* KERNEL: a reference page for this mapping alone, not kept (see above). */
#define MMEXT_PATTERN_NOCACHE	0x1u

struct mmext_pattern;

/*
 * Map len bytes (rounded up to pages) whose clean contents repeat the pattern_len
 * bytes at pattern. pattern_len must be a power of two no larger than the page size.
 * Returns 0 and *out, or:
 *  -EINVAL      bad pattern_len, zero len, bad prot/backend/tile_pages/flags,
 *               nonzero reserved
 *  -E2BIG       unknown nonzero options
 *  -EFAULT      NULL pattern or out
 *  -EINVAL      also: forced KERNEL backend with PROT_EXEC
 *  -EOPNOTSUPP  forced KERNEL backend (not available on this kernel or to this
 *               build, or a seccomp filter answers ENOSYS)
 *  -EPERM, -EACCES  forced KERNEL backend refused by a seccomp filter or an LSM
 *  -ENOMEM      out of memory or address space, or vm.max_map_count reached
 *  -EFBIG       EMULATED needed but RLIMIT_FSIZE is below one page
 */
MMEXT_API int mmext_pattern_map(const void *pattern, size_t pattern_len, size_t len,
				const struct mmext_pattern_opts *opts,
				struct mmext_pattern **out);

/*
 * Unmap the range and free the handle. NULL is allowed. Parts of the range the caller
 * unmapped or moved away (mremap(), which keeps the semantics; the moved part is the
 * caller's to unmap) are no longer the handle's: this and mmext_pattern_reset() act
 * only on the parts still mapped as the pattern (same file, same offset, checked in
 * /proc/self/maps) and leave memory mapped there since alone. Limits: another mapping
 * of the same cached reference page placed at the very start of the range passes
 * that check, and memory mapped into the range by another thread during the call
 * may be acted on. When /proc/self/maps cannot be read, the whole range stays mapped.
 */
MMEXT_API void mmext_pattern_unmap(struct mmext_pattern *p);

/* Start of the mapping and its length in bytes (a page multiple). */
MMEXT_API void *mmext_pattern_addr(const struct mmext_pattern *p);
MMEXT_API size_t mmext_pattern_len(const struct mmext_pattern *p);

/* MMEXT_PATTERN_KERNEL or MMEXT_PATTERN_EMULATED; -EINVAL for NULL, -ECHILD. */
MMEXT_API int mmext_pattern_backend(const struct mmext_pattern *p);

/*
 * Return [addr, addr + len) (inside the mapping) to the pattern: MADV_DONTNEED.
 * Returns 0, -EINVAL for a range outside the mapping or unaligned, -EFAULT for a
 * NULL p, -ECHILD in a process other than the one that mapped it, -ENOMEM when part
 * of the range is no longer the pattern's mapping (see mmext_pattern_unmap(); the
 * rest is reset), or the -errno of reading /proc/self/maps (nothing reset).
 */
MMEXT_API int mmext_pattern_reset(struct mmext_pattern *p, void *addr, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_PATTERN_H */
