/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Write watch, the library side of write tracking, in the model of Windows'
 * GetWriteWatch/ResetWriteWatch: arm a range of the calling process, later ask
 * which pages were written since the last reset, optionally resetting them in the
 * same step, or reset without asking.
 *
 * Backends; MMEXT_WW_AUTO tries the first two in this order and fails with
 * -EOPNOTSUPP when neither can serve (it never picks MPROTECT):
 *
 * PAGEMAP_SCAN  userfaultfd asynchronous write-protect (WP_ASYNC + WP_UNPOPULATED,
 *               Linux 6.7) read and re-armed with the PAGEMAP_SCAN ioctl. Get+reset
 *               is atomic: no write is ever lost. Works on anonymous, shmem and file
 *               memory. The userfaultfd is opened with UFFD_USER_MODE_ONLY, which
 *               vm.unprivileged_userfaultfd=0 allows, else through /dev/userfaultfd.
 *               A range can be watched by only one userfaultfd at a time (-EBUSY).
 *               A get, a reset and an atomic get+reset each walk the range's page
 *               tables once: a get followed by a reset walks twice, so use
 *               MMEXT_WW_RESET when the pages returned are to be reset.
 * SOFT_DIRTY    pagemap bit 55, reset by writing 4 to /proc/self/clear_refs. That
 *               file clears the soft-dirty bits of the WHOLE process: the library
 *               first folds the bits of every soft-dirty watch in the process into
 *               its own record, so other watches stay correct, but a write that lands
 *               between that fold and the clear is lost, and so is the state of any
 *               other soft-dirty user in the process (CRIU-style tools). Reports are
 *               supersets: VMA merges and mprotect() can mark whole VMAs dirty.
 * MPROTECT      only when asked for by name: it installs a process-wide SIGSEGV
 *               handler. The range is made read-only (executable ranges stay
 *               executable) and the handler records the first write to each page
 *               and makes that page writable again. It is installed once per process
 *               (without SA_NODEFER), restored when the library is unloaded, and
 *               passes every fault it does not own to the handler installed before
 *               it as the kernel would have run that one: its mask, SA_NODEFER and
 *               SA_RESETHAND honoured; SIG_DFL/SIG_IGN restore the default action
 *               and re-fault. A fault it does not own is retried once first (a
 *               close may have just made the page writable). Costs one signal per
 *               first write and one VMA per run of written pages (counts against
 *               vm.max_map_count; at that limit the whole range is made writable and
 *               every page counts as written until the next reset). System calls
 *               that write into a watched page that is still clean (read(2) into a
 *               buffer there) fail with EFAULT instead of faulting. The range must be
 *               readable and writable, all or none of it executable, keep that
 *               protection while watched, and overlap no other MPROTECT watch. At
 *               most 64 such watches. Limits: a SIGSEGV handler the application
 *               installs later replaces ours (its handler then gets the watch's
 *               faults: install yours first, or chain to the previous one); a
 *               thread that blocks SIGSEGV and writes to a clean watched page is
 *               killed by the kernel.
 *
 * With PAGEMAP_SCAN a write racing with a get+reset is never lost, but it may be
 * reported by two consecutive calls: the fault that records it completes the store
 * only afterwards. MPROTECT clears a page's record just before protecting it again,
 * so a store by another thread landing exactly in between is missed.
 *
 * Every backend turns transparent huge pages off on the watched range with
 * MADV_NOHUGEPAGE (and does not turn them back on): a huge page would be reported
 * written as a whole. Pages that were written and then swapped out are reported as
 * written. A range may cover several VMAs but no holes.
 *
 * Thread safety: different watches may be used from different threads; one watch
 * must not be used by two threads at once, and mmext_ww_close() must not race with
 * other calls on the same watch. Threads may write to the watched memory at any time,
 * also while the watch is being closed.
 *
 * A watch belongs to the process that opened it: in another process (a fork()
 * child) every call fails with -ECHILD, so a child can neither read nor reset the
 * parent's record; mmext_ww_close() there frees the child's copy (for MPROTECT it
 * makes the child's copy of the range writable again). Every backend turns
 * transparent huge pages off only once the watch is armed.
 */
#ifndef MMEXT_WRITEWATCH_H
#define MMEXT_WRITEWATCH_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mmext_ww_backend {
	MMEXT_WW_AUTO = 0,
	MMEXT_WW_PAGEMAP_SCAN = 1,
	MMEXT_WW_SOFT_DIRTY = 2,
	MMEXT_WW_MPROTECT = 3,
};

struct mmext_ww_opts {
	size_t sz;
	uint32_t backend;	/* enum mmext_ww_backend; forcing one that is absent fails */
	uint32_t flags;		/* none defined yet; must be 0 */
};

struct mmext_ww;

/*
 * Start watching [addr, addr + len) of the calling process; every page counts as
 * clean from now. Returns 0 and *out, or:
 *  -EINVAL      bad range, flags or backend; MPROTECT on a range that is not rw
 *  -E2BIG       unknown nonzero options
 *  -ENOMEM      part of the range is unmapped, or out of memory
 *  -EOPNOTSUPP  the forced backend (or, for AUTO, both kernel backends) is unavailable;
 *               PAGEMAP_SCAN forced on memory userfaultfd cannot write-protect (a
 *               reference-page mapping: AUTO uses SOFT_DIRTY there)
 *  -EBUSY       PAGEMAP_SCAN: the range is already registered with a userfaultfd;
 *               MPROTECT: the range overlaps another MPROTECT watch
 *  -EPERM       PAGEMAP_SCAN forced but userfaultfd is not allowed
 *  -ENOSPC      MPROTECT: too many watches
 *  -EMFILE      no file descriptor left for /proc/self/maps, pagemap or userfaultfd
 * MPROTECT also gives -EINVAL for a range mixing executable and other memory.
 * A failed open leaves the range as it was.
 */
MMEXT_API int mmext_ww_open(void *addr, size_t len, const struct mmext_ww_opts *opts,
			    struct mmext_ww **out);

/* Stop watching and free; restores write access for MPROTECT. NULL is allowed. */
MMEXT_API void mmext_ww_close(struct mmext_ww *w);

/* The backend in use (never MMEXT_WW_AUTO); -EINVAL for NULL, -ECHILD. */
MMEXT_API int mmext_ww_backend(const struct mmext_ww *w);

/* "pagemap_scan", "soft_dirty", "mprotect", "auto", or NULL. */
MMEXT_API const char *mmext_ww_backend_name(int backend);

/* mmext_ww_get() flags */
#define MMEXT_WW_RESET	0x1	/* reset the pages returned (atomically with PAGEMAP_SCAN) */

/*
 * Store in pages[] the addresses of the pages of [addr, addr + len) written since
 * they were last reset, lowest first, at most *count of them; set *count to the
 * number stored. [addr, addr + len) must lie within the watched range. With
 * MMEXT_WW_RESET exactly the pages returned are reset, so a caller with a small
 * array loses nothing. With *count 0 it only answers whether any page is written,
 * resetting nothing.
 * Returns 0 when the whole range was scanned (or, for *count 0, nothing is written),
 * 1 when pages[] filled up and more written pages may follow (call again), or:
 *  -EINVAL  bad range or flags
 *  -EFAULT  NULL w or count, or NULL pages with nonzero *count
 *  -ECHILD  called in another process than the one that opened w
 */
MMEXT_API int mmext_ww_get(struct mmext_ww *w, void *addr, size_t len, unsigned int flags,
			   void **pages, size_t *count);

/*
 * Mark every page of [addr, addr + len) clean. Returns 0 or -errno as above;
 * MPROTECT: -ENOMEM at vm.max_map_count, and the pages it could not protect
 * stay reported as written.
 */
MMEXT_API int mmext_ww_reset(struct mmext_ww *w, void *addr, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_WRITEWATCH_H */
