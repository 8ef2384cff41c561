/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/* Helpers shared by the library's source files; nothing here is exported. */
#ifndef MMEXT_INTERNAL_H
#define MMEXT_INTERNAL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <mmext.h>

/* Options structs: the size the caller says it passed, 0 for NULL. */
int mmext__opts_check(const void *opts, size_t known);

/* Field of an options struct if the caller's struct is large enough, else dflt. */
#define MMEXT__OPT(opts, field, dflt)					\
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) +	\
			 sizeof((opts)->field) ? (opts)->field : (dflt))

/* The size the library knows for TYPE: up to and including its last field. */
#define MMEXT__OPTS_END(TYPE, last)					\
	(offsetof(struct TYPE, last) + sizeof(((struct TYPE *)0)->last))

size_t mmext__page_size(void);

/*
 * A number of the calling process, never 0, that differs from every ancestor's: what
 * tells a fork child from its parent where pids can repeat (reused, or 1 in a new pid
 * namespace), and so the owner of every handle, checked on every call (once per VMA
 * of a listing) without a system call. Shared like the lock words: a vfork() child or
 * a CLONE_VM clone has its parent's. getpid() where the wipe-on-fork page cannot be
 * had.
 */
unsigned long mmext__process_gen(void);

/*
 * Cancellation off for the calling thread while the library holds a lock: a thread
 * cancelled at a system call inside (open() and read() are cancellation points) would
 * leave the lock held for good. mmext__cancel_off() returns the state that
 * mmext__cancel_restore() puts back once the lock is released.
 */
int mmext__cancel_off(void);
void mmext__cancel_restore(int old);

/*
 * A lock with no fork handler: *lock, a static word of the caller's, says whether it
 * is held; the futex word is in a page that every fork child gets zeroed, so a child
 * never waits for a lock that a thread of its parent held, however the pids compare.
 * mmext__lock() returns true when such a thread held it: what the lock guards may be
 * half-updated. The holder cannot be cancelled (mmext__cancel_off()) until
 * mmext__unlock(). Not recursive, not for signal handlers.
 */
bool mmext__lock(int *lock);
void mmext__unlock(int *lock);

/* Validate [addr, addr + len): aligned, nonzero, no wrap; *endp is page-rounded. */
int mmext__range(const void *addr, size_t len, uintptr_t *endp);

/* Read a small file into buf (NUL-terminated). Returns bytes read or -errno. */
ssize_t mmext__read_file(const char *path, char *buf, size_t size);

/* Read a number (0 to INT_MAX) from a marker file; -errno when absent or malformed. */
int mmext__read_marker(const char *path, long *val);

/* Open "/proc/self/NAME" or "/proc/PID/NAME"; -errno (ESRCH for a missing pid). */
int mmext__open_proc(pid_t pid, const char *name, int flags);

/* A userfaultfd with the given features, user-mode only, or via /dev/userfaultfd. */
int mmext__uffd_open(uint64_t features);

/*
 * Parse the maps line at line, which ends at the first newline before end (the
 * end of a reader's buffer, so a line is found and parsed in one pass). *end must be
 * readable and NUL: the parser relies on it to stop instead of checking bounds. 0 with
 * *next past the newline; -EAGAIN if no newline comes before end; -EINVAL for a
 * malformed line. Fills *vma as mmext_maps_parse_line() does, only on success.
 */
int mmext__maps_parse_next(const char *line, const char *end, struct mmext_vma *vma,
			   const char **next);

/* The size of struct mmext_vma in libmmext 0.3: the least a caller may pass. */
#define MMEXT__VMA_V1_SIZE	MMEXT__OPTS_END(mmext_vma, reserved)

/* A caller's struct mmext_vma size the *_sz() calls take: 0.3's at least. */
static inline int mmext__vma_size_ok(size_t size)
{
	return size >= MMEXT__VMA_V1_SIZE && size <= MMEXT_OPTS_MAX;
}

/*
 * Copy the library's *from into the caller's struct of size bytes (checked by the
 * caller): what fits, and zeros for the fields the library does not know.
 */
static inline void mmext__vma_out(struct mmext_vma *to, const struct mmext_vma *from,
				  size_t size)
{
	if (to != from)
		memcpy(to, from, size < sizeof(*from) ? size : sizeof(*from));
	if (size > sizeof(*from))
		memset((char *)to + sizeof(*from), 0, size - sizeof(*from));
}

/*
 * A maps handle of the calling process for the library's own lookups, which need a
 * VMA's extent, device, inode and offset but not its name: PROCMAP_QUERY is asked for
 * none (name "", kind as for no name), so that no path is too long for it.
 */
int mmext__maps_open_self_extents(struct mmext_maps **out);

/*
 * mmext_maps_find() in the calling process for the library's own lookups: one
 * PROCMAP_QUERY on a maps fd the library keeps open. Where that gives no answer (no
 * ioctl, no VMA: the gate area is only in the text, an error) it asks *m, opened here
 * with mmext__maps_open_self_extents() when NULL; the caller closes it.
 */
int mmext__self_find(struct mmext_maps **m, uint64_t addr, unsigned int flags,
		     struct mmext_vma *vma);

/* Set kind, flags and anon_name from name, name_len and inode. */
void mmext__vma_classify(struct mmext_vma *v);

/*
 * Whether this build may issue the number the 6.12 backport publishes in
 * MMEXT_REFPAGE_SYSFS: it is the x86-64 table's, and ia32 or x32 callers enter the
 * kernel through another.
 */
#if defined(__x86_64__) && !defined(__ILP32__)
#define MMEXT__REFPAGE_ABI	1
#else
#define MMEXT__REFPAGE_ABI	0
#endif

/*
 * refpage_create() in the mainline series: the generic system call table's number,
 * which every architecture's table repeats (x32 adds its bit, MIPS its ABI's base);
 * -1 where this library does not know how the ABI numbers it (Alpha). Used only when
 * the mainline marker, MMEXT_REFPAGE_PAGES_SYSFS without MMEXT_REFPAGE_SYSFS, says
 * the kernel has the call.
 */
#define MMEXT__NR_REFPAGE_GENERIC	473
#if defined(__x86_64__) && defined(__ILP32__)
#define MMEXT__NR_REFPAGE_MAINLINE	(0x40000000L + MMEXT__NR_REFPAGE_GENERIC)
#elif defined(__mips__) && defined(_MIPS_SIM) && _MIPS_SIM == _ABIO32
#define MMEXT__NR_REFPAGE_MAINLINE	(4000L + MMEXT__NR_REFPAGE_GENERIC)
#elif defined(__mips__) && defined(_MIPS_SIM) && _MIPS_SIM == _ABI64
#define MMEXT__NR_REFPAGE_MAINLINE	(5000L + MMEXT__NR_REFPAGE_GENERIC)
#elif defined(__mips__) && defined(_MIPS_SIM) && _MIPS_SIM == _ABIN32
#define MMEXT__NR_REFPAGE_MAINLINE	(6000L + MMEXT__NR_REFPAGE_GENERIC)
#elif defined(__alpha__) || defined(__mips__)
#define MMEXT__NR_REFPAGE_MAINLINE	(-1L)
#else
#define MMEXT__NR_REFPAGE_MAINLINE	((long)MMEXT__NR_REFPAGE_GENERIC)
#endif

/*
 * The refpage_create() number of the running kernel, from its markers: the 6.12
 * backport's published number, or the mainline series' number when only the mainline
 * marker is there. 0 with *nr set, or -errno: -ENOENT without either marker, -EINVAL
 * for a malformed one, -ENOSYS when this build's ABI has no number the marker vouches
 * for. *detail (never NULL) says which, for the probe.
 */
int mmext__refpage_nr(long *nr, const char **detail);

/* PR_COW_PTE in the mainline series' <linux/prctl.h>. */
#define MMEXT__PR_COW_PTE_MAINLINE	82

/*
 * The COW page-table prctl option of the running kernel, from its markers, as
 * mmext__refpage_nr() finds the system call: the 6.12 backport's published option, or
 * the mainline series' PR_COW_PTE when only MMEXT_COW_PTE_ENABLED_SYSFS is there. 0
 * with *opt set, or -errno (-ENOENT without either marker, -EINVAL for a malformed
 * one); *detail says which.
 */
int mmext__cow_pte_option(long *opt, const char **detail);

/*
 * Is RELEASE (uname -r) Linux MAJOR.MINOR or later? false when it does not start
 * with two numbers.
 */
bool mmext__release_at_least(const char *release, unsigned int major, unsigned int minor);

/*
 * Lockless maps on a kernel without the 6.12 backport's marker, from what it says of
 * itself: RELEASE and MACHINE (uname), CONFIG (1: CONFIG_PER_VMA_LOCK=y in
 * /boot/config-RELEASE, 0: not there, -1: no such file) and KERNEL_MAX
 * (/sys/devices/system/cpu/kernel_max, 0 on a uniprocessor build, -1 unread). 0 when
 * available, else the probe's reason (ENOENT, or ENODATA when nothing can tell);
 * *detail says why.
 */
int mmext__maps_lockless_rule(const char *release, const char *machine, int config,
			      long kernel_max, const char **detail);

/* 1 when mmext_probe() says feature f is available. */
bool mmext__have(enum mmext_feature f);

/*
 * What a call that needs feature f returns: 0 when it is available; the probe's
 * -EPERM or -EACCES (this process may not use it), or its -EMFILE, -ENOMEM and the
 * like (the probe could not run: nothing is known of the kernel); else -EOPNOTSUPP.
 */
int mmext__need(enum mmext_feature f);

#endif /* MMEXT_INTERNAL_H */
