// SPDX-License-Identifier: GPL-2.0
/*
 * mmext_fork(): the child is a real fork with private memory, the method is
 * reported in both processes and matches the probe, and the flags are checked.
 * mmext_cow_pte_set()/get(): the setting, which children inherit and which
 * mmext_fork() leaves on.
 */
#include <sys/prctl.h>

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

/*
 * A thread stuck in mmext_fork() (in the probe of COW page tables, whose marker
 * blocks) while another thread forks plainly: the child's mmext_fork() works.
 */
TEST(fork_while_an_mmext_fork_is_stuck)
{
	struct t_while_stuck w = { MMEXT_COW_PTE_SYSFS, fork_and_reap, child_forks };

	T_EXPECT_CHILD_OK(t_child_status(t_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/*
 * A thread cancelled inside mmext_fork() (at the read() of the probe's blocking
 * marker, under the fork's lock): the process's next mmext_fork() goes ahead.
 */
TEST(thread_cancelled_inside_an_mmext_fork)
{
	struct t_while_stuck w = { MMEXT_COW_PTE_SYSFS, fork_and_reap, child_forks };

	T_EXPECT_CHILD_OK(t_child_status(t_cancel_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/* A probe of COW page tables: with its marker blocking, it holds the probe lock. */
static void probe_cow_pte(void)
{
	struct mmext_feature_status st;

	mmext_probe(MMEXT_FEAT_COW_PTE, &st);
}

static void exit_hung(int sig)
{
	(void)sig;
	syscall(SYS_exit_group, T_NOT_STUCK + 1);	/* an init ignores SIGALRM's default */
}

/* Takes the probe lock: 0, or exits with T_NOT_STUCK + 1 after 3 s. */
static int take_probe_lock(void)
{
	signal(SIGALRM, exit_hung);
	alarm(3);
	mmext_probe_reset();
	return 0;
}

/* Wait status of a child that takes the probe lock, made by clone() with flags. */
static int clone_taking_lock(unsigned long flags)
{
	int status;
	pid_t pid = syscall(SYS_clone, flags | SIGCHLD, 0, 0, 0, 0);

	if (pid < 0)
		return -1;
	if (!pid)
		syscall(SYS_exit_group, take_probe_lock());
	return waitpid(pid, &status, 0) == pid ? status : -1;
}

/*
 * In pid 1 of a new pid namespace, with a thread stuck holding the probe lock: a
 * child in a further new pid namespace, pid 1 as well, takes the lock.
 */
static int init_while_stuck(void *arg)
{
	struct t_stuck s = { .call = probe_cow_pte };
	int fd, status;
	pid_t pid;

	(void)arg;
	alarm(10);
	fd = t_blocking_marker(MMEXT_COW_PTE_SYSFS);
	if (fd < 0)
		return T_NO_STANDIN;
	if (unshare(CLONE_NEWPID))
		return T_NO_STANDIN;
	pid = fork();
	if (pid < 0)
		return 1;
	if (!pid) {
		/* The namespace's own /proc, where t_stuck_start() looks for the thread. */
		mmext_probe_reset();
		if (getpid() != 1 || mount("proc", "/proc", "proc", 0, NULL) || t_stuck_start(&s))
			_exit(T_NOT_STUCK);
		status = clone_taking_lock(CLONE_NEWPID);
		if (status)
			fprintf(stderr, "#      the child's wait status: %#x\n", status);
		close(fd);
		pthread_join(s.th, NULL);
		_exit(status != 0);
	}
	close(fd);
	return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

TEST(pid_one_forks_into_a_new_pid_namespace_while_a_probe_is_stuck)
{
	T_EXPECT_CHILD_OK(t_child_status(init_while_stuck, NULL),
			  "cannot stand a marker file in or make a pid namespace (needs root)");
}

/*
 * A daemon's double fork: P, with a thread stuck holding the probe lock, forks C and
 * exits; C forks G, which gets P's pid (set with ns_last_pid in a pid namespace of
 * the test's own). G takes the lock.
 */
static int grandchild_reuses_pid(void *arg)
{
	struct t_stuck s = { .call = probe_cow_pte };
	int fd, status, sync[2], i;
	pid_t p, c, g;
	char last[16];
	FILE *f;

	(void)arg;
	alarm(10);
	fd = t_blocking_marker(MMEXT_COW_PTE_SYSFS);
	if (fd < 0 || unshare(CLONE_NEWPID) || pipe(sync))
		return T_NO_STANDIN;
	/* The namespace's init: it reaps P, and C's status comes back through the pipe. */
	p = fork();
	if (p < 0)
		return 1;
	if (p) {
		close(sync[1]);
		status = 1;
		if (read(sync[0], &status, sizeof(status)) != sizeof(status))
			status = 1;
		close(fd);
		waitpid(p, NULL, 0);
		return status;
	}
	if (mount("proc", "/proc", "proc", 0, NULL))
		_exit(write(sync[1], &(int){ T_NO_STANDIN }, sizeof(int)) != sizeof(int));
	p = fork();
	if (p < 0)
		_exit(1);
	if (p) {
		/* Init: keeps the namespace alive until C has reported, reaps what is left. */
		while (wait(NULL) > 0)
			;
		_exit(0);
	}
	/* P */
	mmext_probe_reset();
	p = getpid();
	c = t_stuck_start(&s) ? -1 : fork();
	if (c > 0)
		syscall(SYS_exit_group, 0);	/* the stuck thread leaves with P */
	if (c < 0) {
		status = T_NOT_STUCK;
		_exit(write(sync[1], &status, sizeof(status)) != sizeof(status));
	}
	/* C: once P is gone and its pid free (not at once), make G with it. */
	for (i = 0, status = T_NO_STANDIN; i < 200 && status == T_NO_STANDIN; i++) {
		usleep(5000);
		snprintf(last, sizeof(last), "%d", (int)p - 1);
		f = fopen("/proc/sys/kernel/ns_last_pid", "w");
		if (!f || fputs(last, f) < 0 || fclose(f))
			break;
		g = fork();
		if (!g)
			_exit(getpid() == p ? take_probe_lock() : T_NO_STANDIN);
		if (g < 0 || waitpid(g, &status, 0) != g)
			break;
		if (WIFEXITED(status) && WEXITSTATUS(status) == T_NO_STANDIN)
			continue;
		if (status)
			fprintf(stderr, "#      the grandchild's wait status: %#x\n", status);
		status = status != 0;
	}
	_exit(write(sync[1], &status, sizeof(status)) != sizeof(status));
}

TEST(grandchild_with_the_pid_of_a_stuck_prober)
{
	T_EXPECT_CHILD_OK(t_child_status(grandchild_reuses_pid, NULL),
			  "cannot stand a marker file in or choose a pid (needs root)");
}

/*
 * A COW page-table marker whose number is no prctl option (above INT_MAX), in a tmpfs
 * over /sys/kernel/mm: the number is refused, never cut down to another option (here
 * 1, PR_SET_PDEATHSIG).
 */
static int marker_out_of_range(void *arg)
{
	struct mmext_feature_status st;
	int sig = 0;
	FILE *f;

	(void)arg;
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, NULL) ||
	    mkdir("/sys/kernel/mm/cow_pte", 0755))
		return T_NO_STANDIN;
	f = fopen(MMEXT_COW_PTE_SYSFS, "w");
	if (!f || fprintf(f, "%lld\n", (1LL << 32) + PR_SET_PDEATHSIG) < 0 || fclose(f))
		return T_NO_STANDIN;
	mmext_probe_reset();
	if (mmext_probe(MMEXT_FEAT_COW_PTE, &st) || st.available || st.reason != EINVAL)
		return 2;
	if (mmext_cow_pte_get() != -EOPNOTSUPP || mmext_cow_pte_set(1) != -EOPNOTSUPP)
		return 3;
	if (prctl(PR_GET_PDEATHSIG, &sig) || sig)
		return 4;
	return 0;
}

TEST(marker_number_beyond_a_prctl_option)
{
	T_EXPECT_CHILD_OK(t_child_status(marker_out_of_range, NULL),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/*
 * The library's wipe-on-fork page (the process number, the lock words) is in its own image
 * (this static test's): the anonymous VMAs right below it lead down to the executable.
 * A mapping of its own would outlive dlclose().
 */
TEST(wipe_page_is_in_the_image)
{
	char line[4352], exe[4096], owner[4096] = "", path[4096];
	unsigned long s, e, prev_e = 0, at = 0;
	int found = 0, n;
	ssize_t len;
	FILE *f;

	struct mmext_maps *m;

	/* The page is set up by the first call that needs it. */
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	mmext_maps_close(m);
	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_LT(0, len);
	exe[len] = '\0';
	f = fopen("/proc/self/smaps", "r");
	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %*s %*s %*s%n", &s, &e, &n) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			path[0] = '\0';
			sscanf(line + n, " %4095[^\n]", path);
			/* The file of the last file VMA of a run of contiguous VMAs. */
			if (s != prev_e || path[0])
				snprintf(owner, sizeof(owner), "%s", path);
			prev_e = e;
			at = s;
			continue;
		}
		if (!strncmp(line, "VmFlags:", 8) && strstr(line, " wf")) {
			found++;
			EXPECT_STREQ(exe, owner) TH_LOG("wipe-on-fork VMA at %#lx", at);
		}
	}
	fclose(f);
	EXPECT_EQ(1, found);
}

TEST_HARNESS_MAIN
