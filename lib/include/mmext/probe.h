/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Feature probe: which of the mmext features the running kernel provides, and why
 * not when it does not.
 *
 * The first five values are the five mmext features (anonymous VMA names, reference
 * pages, lockless maps, COW page tables, write tracking); the rest are mechanisms
 * the library's backends use and that callers may want to know about.
 *
 * Reference pages, lockless maps and COW page tables are not in any released
 * kernel. The library detects them only by a file the mmext kernel patches create;
 * it never issues a system call or prctl number that such a file does not vouch for,
 * because numbers free in 6.12 are used upstream since 6.13: the number the file
 * holds, or for the mainline reference page series (which publishes none) the number
 * that series gives refpage_create(). The file names below are PROVISIONAL until the
 * kernel series are merged:
 */
#ifndef MMEXT_PROBE_H
#define MMEXT_PROBE_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Decimal x86-64 system call number of refpage_create() on a kernel with the 6.12
 * backport. Only x86-64 builds use it: for an ia32 or x32 build MMEXT_FEAT_REFPAGE is
 * then unavailable (ENOSYS).
 */
#define MMEXT_REFPAGE_SYSFS	"/sys/kernel/mm/refpage/syscall_nr"
/*
 * Decimal count of the reference pages alive, on both forms. Without
 * MMEXT_REFPAGE_SYSFS it marks the mainline series, whose refpage_create() has the
 * number of the generic system call table (the library knows it per ABI).
 */
#define MMEXT_REFPAGE_PAGES_SYSFS "/sys/kernel/mm/refpage/pages"
/* "1" when /proc/PID/maps and PROCMAP_QUERY are read without mmap_lock. */
#define MMEXT_MAPS_LOCKLESS_SYSFS "/sys/kernel/mm/lockless_maps/enabled"
/*
 * Decimal prctl option for COW page tables: arg2 = 1 turns them on for future forks,
 * 0 off, 2 returns the current state (protocol provisional too).
 */
#define MMEXT_COW_PTE_SYSFS	"/sys/kernel/mm/cow_pte/prctl_option"
/*
 * Who may turn COW page tables on (0-2), on both forms. Without MMEXT_COW_PTE_SYSFS it
 * marks the mainline series, whose PR_COW_PTE is a <linux/prctl.h> number the library
 * knows.
 */
#define MMEXT_COW_PTE_ENABLED_SYSFS "/sys/kernel/mm/cow_pte/enabled"

enum mmext_feature {
	MMEXT_FEAT_ANON_NAME = 0,	/* prctl(PR_SET_VMA_ANON_NAME), private anon */
	MMEXT_FEAT_REFPAGE = 1,		/* reference pages (mmext patch) */
	MMEXT_FEAT_MAPS_LOCKLESS = 2,	/* lockless maps (mmext patch, mainline 6.18) */
	MMEXT_FEAT_COW_PTE = 3,		/* COW page tables (mmext patch) */
	MMEXT_FEAT_WRITEWATCH = 4,	/* write tracking: PAGEMAP_SCAN + uffd WP_ASYNC */
	MMEXT_FEAT_PROCMAP_QUERY = 5,	/* ioctl on /proc/PID/maps (6.11) */
	MMEXT_FEAT_SOFT_DIRTY = 6,	/* clear_refs 4 + pagemap bit 55 */
	MMEXT_FEAT_ANON_SHMEM_NAME = 7,	/* naming shared anonymous memory (6.2) */
	MMEXT_FEAT_COUNT
};
/* C only: C++ reserves every name with a double underscore. */
#ifndef __cplusplus
#define MMEXT_FEAT__COUNT MMEXT_FEAT_COUNT
#endif

/*
 * May grow at the end in later versions: mmext_probe_status() says how large the
 * caller's struct is; mmext_probe() fills only the three fields below.
 */
struct mmext_feature_status {
	int available;		/* 1 when the kernel provides the feature */
	/*
	 * 0 when available, else the positive errno explaining why not:
	 * ENOENT  the mmext kernel patch is absent (its marker file is missing)
	 * ENOSYS  the system call does not exist (feature configured out), or not for
 *         this build's ABI (the 6.12 backport's refpage_create() from ia32 or x32)
	 * ENOTTY  the ioctl is unknown (kernel too old)
	 * EINVAL  the kernel rejects the request (too old, or configured out)
	 * EOPNOTSUPP  the kernel accepts the request but the feature is compiled out
	 * EPERM/EACCES  present, but this process may not use it
	 * other   whatever the probing call failed with (e.g. ENOMEM); EMFILE,
	 *         ENFILE, ENOMEM, EAGAIN, EINTR and ESRCH (the process's /proc
	 *         files unreadable) are not cached: the next call probes again
	 */
	int reason;
	const char *detail;	/* static, human-readable; never NULL */
};

/*
 * Fill *st for feature f. Returns 0, or -EINVAL for an unknown feature or NULL st.
 * The first call per feature probes the kernel (a few system calls, a page mapped
 * and unmapped); later calls return the cached answer, unless the probe failed for
 * lack of fds or memory or was interrupted. Thread-safe. Probing touches no signal
 * state and does not change errno's documented meaning.
 */
MMEXT_API int mmext_probe(enum mmext_feature f, struct mmext_feature_status *st);

/*
 * The same for a struct of size bytes (pass sizeof(*st)): fields this library does
 * not know are set to zero. -EINVAL also for a size smaller than libmmext 0.1's
 * struct or larger than MMEXT_OPTS_MAX.
 */
MMEXT_API int mmext_probe_status(enum mmext_feature f, struct mmext_feature_status *st,
				 size_t size);

/* Short stable identifier ("anon_name", "refpage", ...) or NULL if f is unknown. */
MMEXT_API const char *mmext_feature_name(enum mmext_feature f);

/* Forget cached answers (e.g. after a sysctl changed). Thread-safe. */
MMEXT_API void mmext_probe_reset(void);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_PROBE_H */
