/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * Cheap fork (the library side of COW page tables): fork with copy-on-write page
 * tables when the kernel has them (mmext patch; no released kernel does), else a
 * plain fork, and say which.
 */
#ifndef MMEXT_FORK_H
#define MMEXT_FORK_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mmext_fork_method {
	MMEXT_FORK_PLAIN = 1,	/* fork(2) copied the page tables */
	MMEXT_FORK_COW_PTE = 2,	/* the child shares the parent's page tables until written */
};

/* mmext_fork_opts.flags */
#define MMEXT_FORK_REQUIRE_COW	0x1	/* fail with -EOPNOTSUPP rather than fork plainly */
#define MMEXT_FORK_PLAIN_ONLY	0x2	/* never use COW page tables */

struct mmext_fork_opts {
	size_t sz;
	uint32_t flags;		/* MMEXT_FORK_* */
	uint32_t reserved;	/* must be 0 */
};

/*
 * Fork the calling process. Returns the child's pid in the parent, 0 in the child,
 * or -errno (-EINVAL unknown or conflicting flags, -E2BIG unknown nonzero options,
 * -EOPNOTSUPP REQUIRE_COW without kernel support, -EAGAIN/-ENOMEM from fork, or the
 * probe's reason when it could not run, such as -EMFILE: see mmext/common.h). When
 * method is not NULL it receives the enum mmext_fork_method used, in both processes.
 * Signals, threads and atfork handlers behave exactly as for fork(3); the COW state
 * of the process is restored before returning in the parent and the child.
 * Thread safety: concurrent mmext_fork() calls are serialised, by a lock that the
 * child of another thread's fork() never waits for. The COW switch is per process,
 * so a plain fork() by another thread while mmext_fork() runs may get COW page
 * tables too (it is a correct fork either way).
 */
MMEXT_API pid_t mmext_fork(const struct mmext_fork_opts *opts, int *method);

/*
 * The calling process's COW page-table setting, which all its forks follow (since
 * 0.3). The kernel keeps it across fork() and execve(), so a program started by a
 * process that turned it on has it without knowing of it, unless the program could
 * not have turned it on itself (see -EPERM below, checked with its credentials) or
 * the execve() changes privileges (set-user-ID, set-group-ID, file capabilities).
 * mmext_cow_pte_set(1) turns it on, (0) off: 0, or -EINVAL (on is neither 0 nor
 * 1), -EOPNOTSUPP (no kernel support), -EPERM (/sys/kernel/mm/cow_pte/enabled
 * does not let this process opt in: 0 nobody, 1 with CAP_IPC_LOCK only).
 * mmext_cow_pte_get(): 1 on, 0 off, or -EOPNOTSUPP.
 * Thread safety: serialised with mmext_fork(), which leaves a setting that is on
 * as it is.
 */
MMEXT_API int mmext_cow_pte_set(int on);
MMEXT_API int mmext_cow_pte_get(void);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_FORK_H */
