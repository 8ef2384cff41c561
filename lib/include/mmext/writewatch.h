/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Write watch, the library side of write tracking, in the model of Windows'
 * GetWriteWatch/ResetWriteWatch: arm a range of the calling process, later ask
 * which pages were written since the last reset, optionally resetting them in the
 * same step, or reset without asking.
 *
 * Backends; MMEXT_WW_AUTO tries the first two in this order and fails with -EOPNOTSUPP when
 * neither can serve:
 *
 * PAGEMAP_SCAN  userfaultfd asynchronous write-protect (WP_ASYNC + WP_UNPOPULATED,
 *               Linux 6.7) read and re-armed with the PAGEMAP_SCAN ioctl. Get+reset
 *               is atomic: no write through the process's own mappings is lost
 *               (see below for others'). Works on anonymous, shmem and file
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
 * MPROTECT      reserved: never served, opening it gives -EOPNOTSUPP. Tracking writes
 *               with mprotect() and a SIGSEGV handler needs process-wide signal
 *               handling, which belongs to the application, not to a library.
 *
 * Where neither kernel backend exists (no PAGEMAP_SCAN or userfaultfd denied, and a
 * kernel without CONFIG_MEM_SOFT_DIRTY), use a kernel that has one (6.7 or later
 * with userfaultfd allowed; the soft-dirty bit is in most distribution kernels), or
 * track writes in the application itself.
 *
 * With PAGEMAP_SCAN a write racing with a get+reset is never lost, but it may be
 * reported by two consecutive calls: the fault that records it completes the store
 * only afterwards.
 *
 * Every backend turns transparent huge pages off on the watched range with
 * MADV_NOHUGEPAGE (and does not turn them back on): a huge page would be reported
 * written as a whole. Pages that were written and then swapped out are reported as
 * written. Every backend sees the writes made through the calling process's page
 * tables only: on shared memory or a shared file mapping, a store by another process
 * (a fork child too) or a write(2) to the file changes pages that are not reported.
 * A range may cover several VMAs but no holes, and no hugetlb memory (-EINVAL):
 * PAGEMAP_SCAN can re-protect a huge page only whole, so a get with fewer slots than
 * it has pages could never reset it, and soft-dirty never sees a write to it once
 * cleared. Memory unmapped after the open is a hole to a get: nothing is reported
 * there, and the call succeeds.
 *
 * Apart from soft-dirty's process-wide clear, the library changes no memory but the
 * watched range: closing a watch after its memory was unmapped leaves whatever is
 * mapped there now as it is, and a get or reset there fails (PAGEMAP_SCAN: -EPERM)
 * once it reaches memory the watch did not arm. One exception: memory that another
 * userfaultfd write-protects asynchronously, mapped where a PAGEMAP_SCAN watch's
 * memory was, would be reset by a reset or get+reset of that watch. Closing a
 * PAGEMAP_SCAN watch unregisters only VMAs no other userfaultfd holds (it registers
 * them again first, which fails where another one does: Linux 6.12's unregister
 * would drop any); for that moment, another thread registering memory newly mapped
 * in the range fails with EBUSY. Close a watch before unmapping its memory.
 *
 * Thread safety: different watches may be used from different threads; one watch
 * must not be used by two threads at once, and mmext_ww_close() must not race with
 * other calls on the same watch. Threads may write to the watched memory at any time,
 * also while the watch is being closed. No backend uses signals.
 *
 * A watch belongs to the process that opened it: in another process (a fork()
 * child) every call fails with -ECHILD, so a child can neither read nor reset the
 * parent's record; mmext_ww_close() there frees the child's copy and takes no lock,
 * whatever the parent's other threads were doing at the fork. Every backend turns
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
	MMEXT_WW_MPROTECT = 3,	/* reserved: -EOPNOTSUPP */
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
 *  -EINVAL      bad range, flags or backend; hugetlb memory in the range
 *  -E2BIG       unknown nonzero options
 *  -ENOMEM      part of the range is unmapped, or out of memory
 *  -EOPNOTSUPP  the forced backend (or, for AUTO, both kernel backends) is unavailable;
 *               MPROTECT, always; PAGEMAP_SCAN forced on memory userfaultfd cannot
 *               write-protect (a reference-page mapping: AUTO uses SOFT_DIRTY there)
 *  -EBUSY       PAGEMAP_SCAN: the range is already registered with a userfaultfd
 *  -EPERM       PAGEMAP_SCAN forced but userfaultfd is not allowed
 *  -EMFILE      no file descriptor left for /proc/self/maps, pagemap or userfaultfd
 * A failed open leaves the range as it was.
 */
MMEXT_API int mmext_ww_open(void *addr, size_t len, const struct mmext_ww_opts *opts,
			    struct mmext_ww **out);

/*
 * Stop watching and free. NULL is allowed. Changes only memory the watch armed: what
 * is mapped in the range since it was unmapped stays as it is.
 */
MMEXT_API void mmext_ww_close(struct mmext_ww *w);

/* The backend in use (never MMEXT_WW_AUTO); -EINVAL for NULL, -ECHILD. */
MMEXT_API int mmext_ww_backend(const struct mmext_ww *w);

/* "pagemap_scan", "soft_dirty", "mprotect" (reserved), "auto", or NULL. */
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
 *  -EPERM   PAGEMAP_SCAN: the range reached memory the watch did not arm (it was
 *           unmapped and something else mapped there)
 *  -EIO     the kernel's walk made no progress, or pagemap read short
 *  -ENOMEM  out of memory
 * -EINVAL, -EFAULT and -ECHILD are found before anything is scanned and leave *count
 * as it was. A failure while scanning sets *count to the pages stored before it: with
 * MMEXT_WW_RESET exactly those were reset (PAGEMAP_SCAN may fail partway; SOFT_DIRTY
 * then stores and resets nothing), so the caller must use them before handling the
 * error. Pages past *count are not reset.
 */
MMEXT_API int mmext_ww_get(struct mmext_ww *w, void *addr, size_t len, unsigned int flags,
			   void **pages, size_t *count);

/*
 * Mark every page of [addr, addr + len) clean. Returns 0 or -errno as above; after a
 * failure while scanning, part of the range may be reset.
 */
MMEXT_API int mmext_ww_reset(struct mmext_ww *w, void *addr, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_WRITEWATCH_H */
