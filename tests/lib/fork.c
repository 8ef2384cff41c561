// SPDX-License-Identifier: GPL-2.0
/*
 * mmext_fork(): the child is a real fork with private memory, the method is
 * reported in both processes and matches the probe, and the flags are checked.
 * mmext_cow_pte_set()/get(): the setting, which children inherit and which
 * mmext_fork() leaves on.
 */
#include "helpers.h"
#include "harness.h"

static int expected_method(void)
{
	struct mmext_feature_status st;

	if (mmext_probe(MMEXT_FEAT_COW_PTE, &st))
		return -1;
	return st.available ? MMEXT_FORK_COW_PTE : MMEXT_FORK_PLAIN;
}

TEST(fork_reports_method_and_separates_memory)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	int method = 0, status;
	pid_t pid;

	ASSERT_NE(NULL, p);
	memset(p, 'a', 4 * psz);
	pid = mmext_fork(NULL, &method);
	ASSERT_GE(pid, 0);
	if (!pid) {
		/* The child sees the parent's data and writes only its own copy. */
		int ok = p[3 * psz] == 'a' && method == expected_method();

		memset(p, 'c', 4 * psz);
		_exit(ok ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(expected_method(), method);
	EXPECT_EQ('a', p[0]);
	EXPECT_EQ('a', p[4 * psz - 1]);
	munmap(p, 4 * psz);
}

TEST(plain_only_is_plain)
{
	MMEXT_OPTS(mmext_fork_opts, o, .flags = MMEXT_FORK_PLAIN_ONLY);
	int method = 0;
	pid_t pid = mmext_fork(&o, &method);

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(method == MMEXT_FORK_PLAIN ? 0 : 1);
	EXPECT_EQ(MMEXT_FORK_PLAIN, method);
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
}

TEST(require_cow_without_kernel_support)
{
	MMEXT_OPTS(mmext_fork_opts, o, .flags = MMEXT_FORK_REQUIRE_COW);
	int method = 0;
	pid_t pid;

	if (expected_method() == MMEXT_FORK_COW_PTE)
		SKIP(return, "the kernel has COW page tables");
	pid = mmext_fork(&o, &method);
	if (pid == 0)
		_exit(0);	/* must not happen: reported below */
	EXPECT_EQ(-EOPNOTSUPP, pid);
	EXPECT_EQ(0, method);	/* untouched on failure */
}

TEST(method_pointer_is_optional)
{
	pid_t pid = mmext_fork(NULL, NULL);

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(0);
	EXPECT_EQ(pid, waitpid(pid, NULL, 0));
}

TEST(bad_options)
{
	MMEXT_OPTS(mmext_fork_opts, both, .flags = MMEXT_FORK_REQUIRE_COW | MMEXT_FORK_PLAIN_ONLY);
	MMEXT_OPTS(mmext_fork_opts, unknown, .flags = 0x80);
	MMEXT_OPTS(mmext_fork_opts, pad, .reserved = 1);
	T_OPTS_TAIL(mmext_fork_opts) big;
	int method = 0;

	EXPECT_EQ(-EINVAL, mmext_fork(&both, &method));
	EXPECT_EQ(-EINVAL, mmext_fork(&unknown, &method));
	/* reserved is beyond the last known field, so it counts as unknown tail. */
	EXPECT_EQ(-E2BIG, mmext_fork(&pad, &method));
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail = 9;
	EXPECT_EQ(-E2BIG, mmext_fork(&big.o, &method));
	big.o.sz = 4;
	EXPECT_EQ(-EINVAL, mmext_fork(&big.o, &method));
	EXPECT_EQ(0, method);
}

TEST(cow_pte_setting)
{
	int method = 0, status;
	pid_t pid;

	EXPECT_EQ(-EINVAL, mmext_cow_pte_set(2));
	EXPECT_EQ(-EINVAL, mmext_cow_pte_set(-1));
	if (expected_method() != MMEXT_FORK_COW_PTE) {
		EXPECT_EQ(-EOPNOTSUPP, mmext_cow_pte_get());
		EXPECT_EQ(-EOPNOTSUPP, mmext_cow_pte_set(1));
		EXPECT_EQ(-EOPNOTSUPP, mmext_cow_pte_set(0));
		return;
	}
	EXPECT_EQ(0, mmext_cow_pte_get());
	if (mmext_cow_pte_set(1) == -EPERM)
		SKIP(return, "/sys/kernel/mm/cow_pte/enabled does not let this process opt in");
	EXPECT_EQ(1, mmext_cow_pte_get());
	/* A child inherits it; mmext_fork() leaves it on in both processes. */
	pid = mmext_fork(NULL, &method);
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(mmext_cow_pte_get() == 1 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(MMEXT_FORK_COW_PTE, method);
	EXPECT_EQ(1, mmext_cow_pte_get());
	EXPECT_EQ(0, mmext_cow_pte_set(0));
	EXPECT_EQ(0, mmext_cow_pte_get());
	/* mmext_fork() turns it on for its fork only. */
	pid = mmext_fork(NULL, &method);
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(mmext_cow_pte_get() == 0 ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	EXPECT_EQ(0, mmext_cow_pte_get());
}

/* Forks when the probe returns; the fork's child leaves at once. */
static void fork_and_reap(void)
{
	pid_t pid = mmext_fork(NULL, NULL);

	if (!pid)
		_exit(0);
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

/* Two mmext_fork() calls, each with a child that leaves at once: 0, or which failed. */
static int child_forks(void)
{
	MMEXT_OPTS(mmext_fork_opts, plain, .flags = MMEXT_FORK_PLAIN_ONLY);
	int method = 0, status, i;
	pid_t pid;

	/* So that its own probe of the marker does not wait for it either. */
	if (unlink(MMEXT_COW_PTE_SYSFS))
		return 1;
	for (i = 0; i < 2; i++) {
		pid = mmext_fork(i ? NULL : &plain, &method);
		if (!pid)
			_exit(0);
		if (pid < 0 || waitpid(pid, &status, 0) != pid || status ||
		    method != MMEXT_FORK_PLAIN)
			return 2 + i;
	}
	return 0;
}

static int fork_while_stuck_forking(void *arg)
{
	(void)arg;
	return t_while_stuck(MMEXT_COW_PTE_SYSFS, fork_and_reap, child_forks);
}

/*
 * A thread stuck in mmext_fork() (in the probe of COW page tables, whose marker
 * blocks) while another thread forks plainly: the child's mmext_fork() works.
 */
TEST(fork_while_an_mmext_fork_is_stuck)
{
	int status = t_child_status(fork_while_stuck_forking, NULL);

	ASSERT_NE(-1, status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == T_NO_STANDIN)
		SKIP(return, "cannot stand a marker file in (needs root and mount namespaces)");
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

TEST_HARNESS_MAIN
