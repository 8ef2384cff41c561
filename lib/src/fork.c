// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Fork with COW page tables when the mmext kernel patch provides them. */
#include <errno.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "internal.h"

/*
 * The prctl option comes only from the kernel's markers: a number no marker vouches
 * for could mean something else on another kernel.
 */
static int cow_pte_option(long *opt)
{
	const char *detail;
	int ret = mmext__need(MMEXT_FEAT_COW_PTE);

	if (!ret)
		ret = mmext__cow_pte_option(opt, &detail);
	/* A marker gone or changed since the probe: as if there never was one. */
	return ret == -ENOENT || ret == -EINVAL ? -EOPNOTSUPP : ret;
}

/*
 * The prctl state is per process: two callers toggling it at once would misreport
 * the method and leave it on for forks it was not meant for. A child of a plain
 * fork() made while another thread held this takes it over (mmext__lock()).
 */
static int cow_lock;

MMEXT_API pid_t mmext_fork(const struct mmext_fork_opts *opts, int *method)
{
	uint32_t flags = MMEXT__OPT(opts, flags, 0);
	int how = MMEXT_FORK_PLAIN, ret, saved;
	long opt = 0, was = 0;
	pid_t pid;

	ret = mmext__opts_check(opts, MMEXT__OPTS_END(mmext_fork_opts, flags));
	if (ret)
		return ret;
	if (flags & ~(MMEXT_FORK_REQUIRE_COW | MMEXT_FORK_PLAIN_ONLY) ||
	    (flags & MMEXT_FORK_REQUIRE_COW && flags & MMEXT_FORK_PLAIN_ONLY))
		return -EINVAL;
	mmext__lock(&cow_lock);
	ret = flags & MMEXT_FORK_PLAIN_ONLY ? -EOPNOTSUPP : cow_pte_option(&opt);
	if (!ret) {
		/* The option reports the old state when queried with arg2 = 2 (provisional). */
		was = prctl(opt, 2, 0, 0, 0);
		if (was >= 0 && (was == 1 || !prctl(opt, 1, 0, 0, 0)))
			how = MMEXT_FORK_COW_PTE;
	}
	if (how != MMEXT_FORK_COW_PTE && flags & MMEXT_FORK_REQUIRE_COW) {
		mmext__unlock(&cow_lock);
		/* Out of fds for the probe, say, is no answer about the kernel. */
		return ret ? ret : -EOPNOTSUPP;
	}
	pid = fork();
	saved = errno;
	if (how == MMEXT_FORK_COW_PTE && was == 0)
		prctl(opt, 0, 0, 0, 0);
	/* The child's copy is held by its only thread, the one unlocking it. */
	mmext__unlock(&cow_lock);
	if (pid < 0)
		return -saved;
	if (method)
		*method = how;
	return pid;
}

MMEXT_API int mmext_cow_pte_set(int on)
{
	long opt;
	int ret;

	if (on != 0 && on != 1)
		return -EINVAL;
	ret = cow_pte_option(&opt);
	if (ret)
		return ret;
	mmext__lock(&cow_lock);
	ret = prctl(opt, on, 0, 0, 0) ? -errno : 0;
	mmext__unlock(&cow_lock);
	return ret;
}

MMEXT_API int mmext_cow_pte_get(void)
{
	long opt;
	int ret = cow_pte_option(&opt);

	if (ret)
		return ret;
	ret = prctl(opt, 2, 0, 0, 0);
	return ret < 0 ? -errno : ret;
}
