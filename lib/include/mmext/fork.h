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
	uint32_t __pad;		/* must be 0 */
};

/*
 * Fork the calling process. Returns the child's pid in the parent, 0 in the child,
 * or -errno (-EINVAL unknown or conflicting flags, -E2BIG unknown nonzero options,
 * -EOPNOTSUPP REQUIRE_COW without kernel support, -EAGAIN/-ENOMEM from fork). When
 * method is not NULL it receives the enum mmext_fork_method used, in both processes.
 * Signals, threads and atfork handlers behave exactly as for fork(3); the COW state
 * of the process is restored before returning in the parent and the child.
 * Thread safety: concurrent mmext_fork() calls are serialised. The COW switch is
 * per process, so a plain fork() by another thread while mmext_fork() runs may
 * get COW page tables too (it is a correct fork either way).
 */
MMEXT_API pid_t mmext_fork(const struct mmext_fork_opts *opts, int *method);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_FORK_H */
