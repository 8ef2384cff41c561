// SPDX-License-Identifier: GPL-2.0
/*
 * mmext_probe(): answers are well-formed, cached, thread-safe and agree with what
 * the kernel actually does when asked directly.
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/utsname.h>

#include <mmext/uapi.h>
#include "helpers.h"
#include "harness.h"

TEST(every_feature_has_a_consistent_answer)
{
	struct mmext_feature_status st;
	int f;

	for (f = 0; f < MMEXT_FEAT_COUNT; f++) {
		memset(&st, 0xaa, sizeof(st));
		ASSERT_EQ(0, mmext_probe(f, &st));
		ASSERT_NE(NULL, st.detail);
		EXPECT_TRUE(st.available == 0 || st.available == 1);
		/* Available exactly when there is no reason not to be. */
		EXPECT_EQ(st.available, st.reason == 0) TH_LOG("%s", mmext_feature_name(f));
		EXPECT_GE(st.reason, 0);
		TH_LOG("%-16s %s (%s)", mmext_feature_name(f), st.available ? "yes" : "no",
		       st.detail);
	}
}

TEST(feature_names_are_unique)
{
	int a, b;

	for (a = 0; a < MMEXT_FEAT_COUNT; a++) {
		ASSERT_NE(NULL, mmext_feature_name(a));
		for (b = 0; b < a; b++)
			EXPECT_STRNE(mmext_feature_name(a), mmext_feature_name(b));
	}
	EXPECT_STREQ("anon_name", mmext_feature_name(MMEXT_FEAT_ANON_NAME));
	EXPECT_STREQ("writewatch", mmext_feature_name(MMEXT_FEAT_WRITEWATCH));
}

TEST(bad_arguments)
{
	struct mmext_feature_status st;

	EXPECT_EQ(-EINVAL, mmext_probe(MMEXT_FEAT_COUNT, &st));
	EXPECT_EQ(-EINVAL, mmext_probe((enum mmext_feature)-1, &st));
	EXPECT_EQ(-EINVAL, mmext_probe(MMEXT_FEAT_ANON_NAME, NULL));
	EXPECT_EQ(NULL, mmext_feature_name(MMEXT_FEAT_COUNT));
	EXPECT_EQ(NULL, mmext_feature_name((enum mmext_feature)-5));
}

TEST(errno_is_preserved)
{
	struct mmext_feature_status st;

	mmext_probe_reset();
	errno = 4321;
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_ANON_NAME, &st));
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_SOFT_DIRTY, &st));
	EXPECT_EQ(4321, errno);
}

TEST(version_matches_header)
{
	char want[16];

	snprintf(want, sizeof(want), "%d.%d", MMEXT_VERSION_MAJOR, MMEXT_VERSION_MINOR);
	EXPECT_STREQ(want, mmext_version());
}

/* The provisional-marker features follow their marker files exactly. */
TEST(patch_features_follow_their_markers)
{
	static const struct { int f; const char *path; } m[] = {
		{ MMEXT_FEAT_REFPAGE, MMEXT_REFPAGE_SYSFS },
		{ MMEXT_FEAT_MAPS_LOCKLESS, MMEXT_MAPS_LOCKLESS_SYSFS },
		{ MMEXT_FEAT_COW_PTE, MMEXT_COW_PTE_SYSFS },
	};
	struct mmext_feature_status st;
	unsigned int i;

	for (i = 0; i < sizeof(m) / sizeof(m[0]); i++) {
		ASSERT_EQ(0, mmext_probe(m[i].f, &st));
		/* Reference pages have a second marker: the mainline series' page count. */
		if (m[i].f == MMEXT_FEAT_REFPAGE && !access(MMEXT_REFPAGE_PAGES_SYSFS, F_OK)) {
			TH_LOG("%s present: %s", MMEXT_REFPAGE_PAGES_SYSFS, st.detail);
			continue;
		}
		/* So do COW page tables: the switch of both forms. */
		if (m[i].f == MMEXT_FEAT_COW_PTE && !access(MMEXT_COW_PTE_ENABLED_SYSFS, F_OK)) {
			TH_LOG("%s present: %s", MMEXT_COW_PTE_ENABLED_SYSFS, st.detail);
			continue;
		}
		/* Without the marker, mainline's rule decides (maps_lockless_rule below). */
		if (m[i].f == MMEXT_FEAT_MAPS_LOCKLESS && access(m[i].path, F_OK)) {
			TH_LOG("%s absent: %s", m[i].path, st.detail);
			continue;
		}
		if (access(m[i].path, F_OK)) {
			EXPECT_EQ(0, st.available);
			EXPECT_EQ(ENOENT, st.reason);
			EXPECT_NE(NULL, strstr(st.detail, m[i].path));
		} else {
			TH_LOG("%s present: %s", m[i].path, st.detail);
		}
	}
}

/* The lockless-maps marker is a switch: 1 means available, 0 present but off. */
TEST(maps_lockless_follows_its_switch)
{
	struct mmext_feature_status st;
	char buf[8] = "";
	int fd = open(MMEXT_MAPS_LOCKLESS_SYSFS, O_RDONLY);

	if (fd < 0)
		SKIP(return, "%s absent: kernel without the lockless-maps patch",
		     MMEXT_MAPS_LOCKLESS_SYSFS);
	ASSERT_LT(0, read(fd, buf, sizeof(buf) - 1));
	close(fd);
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_MAPS_LOCKLESS, &st));
	if (!strcmp(buf, "1\n")) {
		EXPECT_EQ(1, st.available);
		EXPECT_EQ(0, st.reason);
	} else {
		EXPECT_EQ(0, st.available);
		EXPECT_EQ(EOPNOTSUPP, st.reason);
	}
}

TEST(anon_name_answer_matches_prctl)
{
	struct mmext_feature_status st;
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	int ret;

	ASSERT_NE(NULL, p);
	ret = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, psz, (unsigned long)"t");
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_ANON_NAME, &st));
	EXPECT_EQ(ret == 0, st.available);
	if (ret)
		EXPECT_EQ(errno, st.reason);
	munmap(p, psz);
}

TEST(procmap_query_answer_matches_ioctl)
{
	struct procmap_query q = { .size = sizeof(q) };
	struct mmext_feature_status st;
	int fd = open("/proc/self/maps", O_RDONLY), ret;

	ASSERT_GE(fd, 0);
	q.query_addr = (uintptr_t)&q;
	ret = ioctl(fd, PROCMAP_QUERY, &q);
	close(fd);
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_PROCMAP_QUERY, &st));
	EXPECT_EQ(ret == 0, st.available);
	if (ret)
		EXPECT_EQ(ENOTTY, st.reason);
}

TEST(writewatch_needs_pagemap_scan)
{
	struct pm_scan_arg arg = { .size = sizeof(arg) };
	struct mmext_feature_status st;
	int fd = open("/proc/self/pagemap", O_RDONLY), ret;

	ASSERT_GE(fd, 0);
	arg.start = (uintptr_t)t_psz() * 16;
	arg.end = arg.start + t_psz();
	ret = ioctl(fd, PAGEMAP_SCAN, &arg);
	close(fd);
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_WRITEWATCH, &st));
	if (ret < 0 && errno == ENOTTY)
		EXPECT_EQ(0, st.available);
}

TEST(answers_are_cached_and_reset)
{
	struct mmext_feature_status a, b;
	int f;

	for (f = 0; f < MMEXT_FEAT_COUNT; f++) {
		ASSERT_EQ(0, mmext_probe(f, &a));
		ASSERT_EQ(0, mmext_probe(f, &b));
		EXPECT_EQ(a.available, b.available);
		EXPECT_EQ(a.reason, b.reason);
		/* Cached: the very same static string. */
		EXPECT_EQ(a.detail, b.detail);
		mmext_probe_reset();
		ASSERT_EQ(0, mmext_probe(f, &b));
		EXPECT_EQ(a.available, b.available);
		EXPECT_EQ(a.reason, b.reason);
	}
}

static void *probe_all(void *arg)
{
	struct mmext_feature_status *out = arg;
	int round, f;

	for (round = 0; round < 50; round++)
		for (f = 0; f < MMEXT_FEAT_COUNT; f++)
			if (mmext_probe(f, &out[f]))
				return (void *)1;
	return NULL;
}

TEST(concurrent_probes_agree)
{
	struct mmext_feature_status res[4][MMEXT_FEAT_COUNT];
	pthread_t t[4];
	int i, f;

	mmext_probe_reset();
	for (i = 0; i < 4; i++)
		ASSERT_EQ(0, pthread_create(&t[i], NULL, probe_all, res[i]));
	for (i = 0; i < 4; i++) {
		void *ret;

		ASSERT_EQ(0, pthread_join(t[i], &ret));
		EXPECT_EQ(NULL, ret);
	}
	for (i = 1; i < 4; i++)
		for (f = 0; f < MMEXT_FEAT_COUNT; f++) {
			EXPECT_EQ(res[0][f].available, res[i][f].available);
			EXPECT_EQ(res[0][f].reason, res[i][f].reason);
		}
}

/* Probes afresh all the time: the lock is held for every probe's experiment. */
static void *reprobe_loop(void *arg)
{
	volatile int *stop = arg;
	struct mmext_feature_status st;

	while (!*stop) {
		mmext_probe_reset();
		for (int f = 0; f < MMEXT_FEAT_COUNT; f++)
			mmext_probe(f, &st);
	}
	return NULL;
}

static int child_probes_in_time(void *arg)
{
	struct mmext_feature_status st;

	alarm(10);	/* a probe lock inherited locked would hang here */
	return mmext_probe(MMEXT_FEAT_WRITEWATCH, &st) != 0;
}

/* Forks while another thread probes: the child's probe must not deadlock. */
TEST(fork_while_another_thread_probes)
{
	T_EXPECT_FORKS_OK(t_fork_while(reprobe_loop, child_probes_in_time));
}

static void probe_cow_pte(void)
{
	struct mmext_feature_status st;

	mmext_probe(MMEXT_FEAT_COW_PTE, &st);
}

static int child_probes(void)
{
	struct mmext_feature_status st;

	/* So that its own probe of the marker does not wait for it either. */
	if (unlink(MMEXT_COW_PTE_SYSFS))
		return 1;
	if (mmext_probe(MMEXT_FEAT_COW_PTE, &st) || st.available || st.reason != ENOENT)
		return 2;
	return mmext_probe(MMEXT_FEAT_ANON_NAME, &st) ? 3 : 0;
}

/*
 * A thread stuck in a probe (its marker file blocks) while another forks: the fork
 * goes ahead, and the child probes as if nobody had held anything.
 */
TEST(fork_while_a_probe_is_stuck)
{
	struct t_while_stuck w = { MMEXT_COW_PTE_SYSFS, probe_cow_pte, child_probes };

	T_EXPECT_CHILD_OK(t_child_status(t_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/*
 * A thread cancelled inside a probe (at the read() of its blocking marker): the
 * process's next probe goes ahead.
 */
TEST(thread_cancelled_inside_a_probe)
{
	struct t_while_stuck w = { MMEXT_COW_PTE_SYSFS, probe_cow_pte, child_probes };

	T_EXPECT_CHILD_OK(t_child_status(t_cancel_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/* The calls are no cancellation points: the loop needs one of its own. */
static void *probe_until_cancelled(void *arg)
{
	struct mmext_feature_status st;

	(void)arg;
	for (;;) {
		mmext_probe_reset();
		mmext_probe(MMEXT_FEAT_WRITEWATCH, &st);
		pthread_testcancel();
	}
	return NULL;
}

/*
 * Threads cancelled wherever they are in a loop of probes, mostly in the probe's
 * system calls: no probe after them waits.
 */
static int probe_after_cancels(void *arg)
{
	struct timespec pause = { 0, 2 * 1000 * 1000 };
	struct mmext_feature_status st;
	pthread_t th;
	int i;

	(void)arg;
	alarm(10);	/* a lock left held hangs the next probe */
	for (i = 0; i < 200; i++) {
		if (pthread_create(&th, NULL, probe_until_cancelled, NULL))
			return 2;
		nanosleep(&pause, NULL);
		pthread_cancel(th);
		pthread_join(th, NULL);
		mmext_probe_reset();
		if (mmext_probe(MMEXT_FEAT_WRITEWATCH, &st))
			return 1;
	}
	return 0;
}

TEST(threads_cancelled_while_probing)
{
	int status = t_child_status(probe_after_cancels, NULL);

	EXPECT_TRUE(status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("status %#x", status);
}

/* Let only n more fds be opened (the harness runs each test in its own process). */
static void t_free_fds(struct __test_metadata *_metadata, int n)
{
	struct rlimit rl;
	int lowest = dup(0);

	ASSERT_LE(0, lowest);
	close(lowest);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = lowest + n;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
}

static void t_all_fds(struct __test_metadata *_metadata)
{
	struct rlimit rl;

	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &rl));
	rl.rlim_cur = rl.rlim_max;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
}

/* Out of fds says nothing about the kernel: the next probe must try again. */
TEST(transient_errors_are_not_cached)
{
	static const int f[] = { MMEXT_FEAT_WRITEWATCH, MMEXT_FEAT_PROCMAP_QUERY };
	struct mmext_feature_status want[2], st;
	int i;

	for (i = 0; i < 2; i++)
		ASSERT_EQ(0, mmext_probe(f[i], &want[i]));
	mmext_probe_reset();
	t_free_fds(_metadata, 0);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mmext_probe(f[i], &st));
		EXPECT_EQ(0, st.available);
		EXPECT_EQ(EMFILE, st.reason) TH_LOG("%s", mmext_feature_name(f[i]));
	}
	t_all_fds(_metadata);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mmext_probe(f[i], &st));
		EXPECT_EQ(want[i].available, st.available) TH_LOG("%s: %s",
			mmext_feature_name(f[i]), st.detail);
		EXPECT_EQ(want[i].reason, st.reason);
	}
}

/*
 * A maps handle opened with only the fds it keeps (its /proc directory and maps) free,
 * none for the probe, must not turn PROCMAP_QUERY off for good.
 */
TEST(maps_handle_at_the_fd_limit_leaves_procmap_query_on)
{
	struct mmext_maps *m;

	REQUIRE_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	mmext_probe_reset();
	t_free_fds(_metadata, 2);
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	mmext_maps_close(m);
	t_all_fds(_metadata);
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	EXPECT_EQ(MMEXT_MAPS_IOCTL, mmext_maps_backend(m));
	mmext_maps_close(m);
}

/*
 * A call that needs a feature whose probe ran out of fds says so: -EMFILE, not the
 * -EOPNOTSUPP a caller would take for an answer about the kernel.
 */
TEST(calls_report_a_probe_out_of_fds)
{
	MMEXT_OPTS(mmext_fork_opts, cow, .flags = MMEXT_FORK_REQUIRE_COW);
	MMEXT_OPTS(mmext_pattern_opts, kernel, .backend = MMEXT_PATTERN_KERNEL);
	MMEXT_OPTS(mmext_maps_opts, ioctl, .backend = MMEXT_MAPS_IOCTL);
	struct mmext_pattern *p = NULL;
	struct mmext_maps *m = NULL;
	static const char pat[8];
	pid_t pid;

	mmext_probe_reset();
	t_free_fds(_metadata, 0);
	pid = mmext_fork(&cow, NULL);
	if (!pid)
		_exit(0);
	EXPECT_EQ(-EMFILE, pid);
	EXPECT_EQ(-EMFILE, mmext_cow_pte_get());
	EXPECT_EQ(-EMFILE, mmext_cow_pte_set(1));
	EXPECT_EQ(-EMFILE, mmext_pattern_map(pat, sizeof(pat), t_psz(), &kernel, &p));
	EXPECT_EQ(NULL, p);
	/* The handle's own two fds, none for the probe. */
	t_all_fds(_metadata);
	t_free_fds(_metadata, 2);
	EXPECT_EQ(-EMFILE, mmext_maps_open(0, &ioctl, &m));
	EXPECT_EQ(NULL, m);
	t_all_fds(_metadata);
}

/* A caller built against a later, larger struct gets zeros in the fields we lack. */
TEST(status_struct_can_grow)
{
	struct {
		struct mmext_feature_status st;
		unsigned char later[24];
	} big;
	struct mmext_feature_status st;
	size_t i;

	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_WRITEWATCH, &st));
	memset(&big, 0xaa, sizeof(big));
	ASSERT_EQ(0, mmext_probe_status(MMEXT_FEAT_WRITEWATCH, &big.st, sizeof(big)));
	EXPECT_EQ(st.available, big.st.available);
	EXPECT_EQ(st.reason, big.st.reason);
	EXPECT_EQ(st.detail, big.st.detail);
	for (i = 0; i < sizeof(big.later); i++)
		EXPECT_EQ(0, big.later[i]) TH_LOG("byte %zu", i);
	EXPECT_EQ(-EINVAL, mmext_probe_status(MMEXT_FEAT_WRITEWATCH, &big.st, 4));
	EXPECT_EQ(-EINVAL, mmext_probe_status(MMEXT_FEAT_WRITEWATCH, &big.st, 1 << 20));
	EXPECT_EQ(0, mmext_probe_status(MMEXT_FEAT_WRITEWATCH, &st, sizeof(st)));
}

static struct mmext_feature_status before_exit[MMEXT_FEAT_COUNT];

/* Probing again gives the answers given before: 0, or 10 + the feature that differs. */
static int probe_as_before(void)
{
	struct mmext_feature_status st;
	struct mmext_ww *w;
	char *p;
	int f, ret;

	mmext_probe_reset();
	for (f = 0; f < MMEXT_FEAT_COUNT; f++) {
		if (mmext_probe(f, &st) || st.reason != before_exit[f].reason) {
			fprintf(stderr, "#      %s: %s\n", mmext_feature_name(f), st.detail);
			return 10 + f;
		}
	}
	if (!before_exit[MMEXT_FEAT_WRITEWATCH].available &&
	    !before_exit[MMEXT_FEAT_SOFT_DIRTY].available)
		return 0;
	p = t_map(t_psz(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	ret = p ? mmext_ww_open(p, t_psz(), NULL, &w) : -ENOMEM;
	if (ret) {
		fprintf(stderr, "#      mmext_ww_open: %d\n", ret);
		return 2;
	}
	mmext_ww_close(w);
	return 0;
}

/* pthread_exit() in the main thread: the process and its memory live on. */
TEST(probes_after_the_main_thread_exits)
{
	int f, status;

	for (f = 0; f < MMEXT_FEAT_COUNT; f++)
		ASSERT_EQ(0, mmext_probe(f, &before_exit[f]));
	status = t_after_leader_exit(probe_as_before);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

/* The library's reading of the refpage markers (lib/src/probe.c), linked statically. */
int mmext__refpage_nr(long *nr, const char **detail);

#define BACKPORT_NR	1000	/* what 6.12's syscall_nr says on x86-64 */
#define MAINLINE_NR	473	/* the 7.3 series' number on x86-64 */

/*
 * Stand two marker files of DIR (under /sys/kernel/mm) in, in a tmpfs over
 * /sys/kernel/mm in a private mount namespace: each with its text, or left out for
 * NULL. For a child process; needs root. 0, or -1.
 */
static int t_markers(const char *dir, const char *const path[2], const char *const text[2])
{
	int i, fd;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, NULL) || mkdir(dir, 0755))
		return -1;
	for (i = 0; i < 2; i++) {
		if (!text[i])
			continue;
		fd = open(path[i], O_WRONLY | O_CREAT | O_EXCL, 0444);
		if (fd < 0 || write(fd, text[i], strlen(text[i])) != (ssize_t)strlen(text[i]))
			return -1;
		close(fd);
	}
	mmext_probe_reset();
	return 0;
}

/* The refpage markers: the backport's number and the page count. */
static int t_refpage_markers(const char *syscall_nr, const char *pages)
{
	const char *const path[2] = { MMEXT_REFPAGE_SYSFS, MMEXT_REFPAGE_PAGES_SYSFS };
	const char *const text[2] = { syscall_nr, pages };

	return t_markers("/sys/kernel/mm/refpage", path, text);
}

/* Install seccomp filter f of len instructions: 0, or -1. */
static int t_seccomp(struct sock_filter *f, unsigned short len)
{
	struct sock_fprog prog = { .len = len, .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) ? -1 : 0;
}

/*
 * A seccomp filter under which system call a fails with ENOTUNIQ and b with EXFULL,
 * before the kernel looks the number up: no number the test names is ever issued.
 * Every other call passes. 0, or -1.
 */
static int t_trap_numbers(long a, long b)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)a, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)b, 3, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTUNIQ),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EXFULL),
	};

	return t_seccomp(f, sizeof(f) / sizeof(f[0]));
}

/*
 * What the library makes of one set of markers: the probe's reason (want_reason), the
 * number it would issue (want_nr, when available), and which number a forced kernel
 * map really issues: the one answered ENOTUNIQ (the backport's), EXFULL (the mainline
 * series') or none (-EOPNOTSUPP).
 */
struct refpage_case {
	const char *syscall_nr, *pages;
	int want_reason;
	long want_nr;
	int want_map;
};

static int refpage_case_child(void *arg)
{
	const struct refpage_case *c = arg;
	MMEXT_OPTS(mmext_pattern_opts, kernel, .backend = MMEXT_PATTERN_KERNEL,
		   .flags = MMEXT_PATTERN_NOCACHE);
	struct mmext_feature_status st;
	struct mmext_pattern *p = NULL;
	static const char pat[8] = "pattern";
	const char *detail = NULL;
	long nr = -1;
	int ret;

	if (t_refpage_markers(c->syscall_nr, c->pages))
		return T_NO_STANDIN;
	if (mmext_probe(MMEXT_FEAT_REFPAGE, &st))
		return 2;
	if (st.reason != c->want_reason || st.available != !c->want_reason) {
		fprintf(stderr, "#      probe: reason %d, want %d (%s)\n", st.reason,
			c->want_reason, st.detail);
		return 3;
	}
	ret = mmext__refpage_nr(&nr, &detail);
	if (ret != -c->want_reason || !detail || strcmp(detail, st.detail))
		return 4;
	if (!ret && nr != c->want_nr) {
		fprintf(stderr, "#      number %ld, want %ld\n", nr, c->want_nr);
		return 5;
	}
	if (t_trap_numbers(BACKPORT_NR, MAINLINE_NR)) {
		/* A kernel without seccomp (the test kernels'): the answer, not the call. */
		fprintf(stderr, "#      no seccomp filter (%s): which number a map issues "
			"is not checked\n", strerror(errno));
		return 0;
	}
	ret = mmext_pattern_map(pat, sizeof(pat), t_psz(), &kernel, &p);
	if (ret != c->want_map || p) {
		fprintf(stderr, "#      forced kernel map: %d, want %d\n", ret, c->want_map);
		return 7;
	}
	return 0;
}

#define REFPAGE_CASE(name, nr_file, pages_file, reason, nr, map)		\
	TEST(refpage_markers_##name)						\
	{									\
		struct refpage_case c = { nr_file, pages_file, reason, nr, map };\
										\
		T_EXPECT_CHILD_OK(t_child_status(refpage_case_child, &c),	\
				  "cannot stand the markers in (needs root and mount " \
				  "namespaces)");				\
	}

/* The numbers are x86-64's: the cases that issue one run only there. */
#if defined(__x86_64__) && !defined(__ILP32__)
/* The 6.12 backport: its published number wins over the mainline one. */
REFPAGE_CASE(backport, "1000\n", "0\n", 0, BACKPORT_NR, -ENOTUNIQ)
/* The backport's marker alone (an older backport without the page count). */
REFPAGE_CASE(backport_alone, "1000\n", NULL, 0, BACKPORT_NR, -ENOTUNIQ)
/* Mainline: the page count alone vouches for the series' number. */
REFPAGE_CASE(mainline, NULL, "3\n", 0, MAINLINE_NR, -EXFULL)
#endif
/* Neither marker: nothing is issued. */
REFPAGE_CASE(none, NULL, NULL, ENOENT, -1, -EOPNOTSUPP)
/*
 * A malformed backport marker: the kernel's number is unknown, and the mainline
 * number may be another call on it, so neither is tried.
 */
REFPAGE_CASE(bad_syscall_nr, "refpage\n", "0\n", EINVAL, -1, -EOPNOTSUPP)
REFPAGE_CASE(negative_syscall_nr, "-1\n", "0\n", EINVAL, -1, -EOPNOTSUPP)
REFPAGE_CASE(empty_syscall_nr, "", NULL, EINVAL, -1, -EOPNOTSUPP)
/* A malformed page count without the backport marker: no number either. */
REFPAGE_CASE(bad_pages, NULL, "many\n", EINVAL, -1, -EOPNOTSUPP)
REFPAGE_CASE(huge_pages, NULL, "99999999999\n", EINVAL, -1, -EOPNOTSUPP)

/* The library's reading of the COW page-table markers, linked statically. */
int mmext__cow_pte_option(long *opt, const char **detail);

#define BACKPORT_OPT	0x434f5750	/* what 6.12's prctl_option says */
#define MAINLINE_OPT	82		/* PR_COW_PTE in the 7.3 series */

/* The COW page-table markers: the backport's option and the switch. */
static int t_cow_pte_markers(const char *option, const char *enabled)
{
	const char *const path[2] = { MMEXT_COW_PTE_SYSFS, MMEXT_COW_PTE_ENABLED_SYSFS };
	const char *const text[2] = { option, enabled };

	return t_markers("/sys/kernel/mm/cow_pte", path, text);
}

/* A seccomp filter under which prctl option a fails with ENOTUNIQ and b with EXFULL. */
static int t_trap_prctl(unsigned int a, unsigned int b)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, a, 2, 0),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, b, 3, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTUNIQ),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EXFULL),
	};

	return t_seccomp(f, sizeof(f) / sizeof(f[0]));
}

/*
 * What the library makes of one set of COW page-table markers: the probe's reason,
 * the option it would use, and which option mmext_cow_pte_get() really issues: the
 * one answered ENOTUNIQ (the backport's), EXFULL (the mainline series') or none.
 */
struct cow_pte_case {
	const char *option, *enabled;
	int want_reason;
	long want_opt;
	int want_get;
};

static int cow_pte_case_child(void *arg)
{
	const struct cow_pte_case *c = arg;
	struct mmext_feature_status st;
	const char *detail = NULL;
	long opt = -1;
	int ret;

	if (t_cow_pte_markers(c->option, c->enabled))
		return T_NO_STANDIN;
	if (mmext_probe(MMEXT_FEAT_COW_PTE, &st))
		return 2;
	if (st.reason != c->want_reason || st.available != !c->want_reason) {
		fprintf(stderr, "#      probe: reason %d, want %d (%s)\n", st.reason,
			c->want_reason, st.detail);
		return 3;
	}
	ret = mmext__cow_pte_option(&opt, &detail);
	if (ret != -c->want_reason || !detail || strcmp(detail, st.detail))
		return 4;
	if (!ret && opt != c->want_opt) {
		fprintf(stderr, "#      option %ld, want %ld\n", opt, c->want_opt);
		return 5;
	}
	if (t_trap_prctl(BACKPORT_OPT, MAINLINE_OPT)) {
		fprintf(stderr, "#      no seccomp filter (%s): which option is issued "
			"is not checked\n", strerror(errno));
		return 0;
	}
	ret = mmext_cow_pte_get();
	if (ret != c->want_get) {
		fprintf(stderr, "#      mmext_cow_pte_get(): %d, want %d\n", ret, c->want_get);
		return 7;
	}
	return 0;
}

#define COW_PTE_CASE(name, option_file, enabled_file, reason, opt, get)	\
	TEST(cow_pte_markers_##name)						\
	{									\
		struct cow_pte_case c = { option_file, enabled_file, reason, opt, get };\
										\
		T_EXPECT_CHILD_OK(t_child_status(cow_pte_case_child, &c),	\
				  "cannot stand the markers in (needs root and mount " \
				  "namespaces)");				\
	}

/* The 6.12 backport: its published option wins over PR_COW_PTE. */
COW_PTE_CASE(backport, "1129273168\n", "2\n", 0, BACKPORT_OPT, -ENOTUNIQ)
/* Mainline: the switch alone vouches for PR_COW_PTE. */
COW_PTE_CASE(mainline, NULL, "0\n", 0, MAINLINE_OPT, -EXFULL)
/* Neither marker: nothing is issued. */
COW_PTE_CASE(none, NULL, NULL, ENOENT, -1, -EOPNOTSUPP)
/* A malformed backport marker: option 82 may be another prctl there, so none is tried. */
COW_PTE_CASE(bad_option, "cow\n", "2\n", EINVAL, -1, -EOPNOTSUPP)
/* A malformed switch without the backport marker: no option either. */
COW_PTE_CASE(bad_enabled, NULL, "on\n", EINVAL, -1, -EOPNOTSUPP)
COW_PTE_CASE(enabled_out_of_range, NULL, "3\n", EINVAL, -1, -EOPNOTSUPP)

/* The library's reading of a kernel without the lockless-maps marker, linked statically. */
bool mmext__release_at_least(const char *release, unsigned int major, unsigned int minor);
int mmext__maps_lockless_rule(const char *release, const char *machine, int config,
			      long kernel_max, const char **detail);

TEST(release_order)
{
	EXPECT_TRUE(mmext__release_at_least("6.18.0", 6, 18));
	EXPECT_TRUE(mmext__release_at_least("6.18", 6, 18));
	EXPECT_TRUE(mmext__release_at_least("6.18-rc1", 6, 18));
	EXPECT_TRUE(mmext__release_at_least("6.100.1", 6, 18));
	EXPECT_TRUE(mmext__release_at_least("7.3.4-mmext1-amd64", 6, 18));
	EXPECT_TRUE(mmext__release_at_least("10.0.0", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("6.9.12", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("6.17.9", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("6.12.117-mmext1-amd64", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("5.19.0", 6, 18));
	/* Anything but two plain numbers is no version. */
	EXPECT_FALSE(mmext__release_at_least("6", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("linux-6.18", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("-1.0", 6, 18));
	EXPECT_FALSE(mmext__release_at_least(" 6.18", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("+7.0", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("6. 18", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("6.-18", 6, 18));
	EXPECT_FALSE(mmext__release_at_least("99999999999999999999999.1", 6, 18));
}

TEST(maps_lockless_rule)
{
	static const struct {
		const char *release, *machine;
		int config;
		long kernel_max;
		int want;
	} c[] = {
		/* Before 6.18: nothing tells but the backport's marker. */
		{ "6.17.9", "x86_64", 1, 8191, ENOENT },
		{ "6.12.117+deb12-amd64", "x86_64", -1, 8191, ENOENT },
		{ "garbage", "x86_64", 1, 8191, ENOENT },
		/* The config file decides where there is one. */
		{ "6.18.1", "x86_64", 1, 8191, 0 },
		{ "6.18.1", "x86_64", 0, 8191, ENOENT },
		{ "7.3.4-mmext1-amd64", "i686", 1, 63, 0 },
		{ "7.3.4-mmext1-amd64", "i686", 0, 63, ENOENT },
		/* Without one, an SMP kernel of an architecture that has them. */
		{ "6.18.1", "x86_64", -1, 8191, 0 },
		{ "7.3.4", "aarch64", -1, 511, 0 },
		{ "7.3.4", "x86_64", -1, 0, ENODATA },	/* uniprocessor */
		{ "7.3.4", "x86_64", -1, -1, ENODATA },	/* kernel_max unread */
		{ "7.3.4", "i686", -1, 63, ENODATA },	/* 32-bit x86: no per-VMA locks */
		{ "7.3.4", "mips64", -1, 63, ENODATA },
		{ "7.3.4", "x86_64x", -1, 63, ENODATA },
	};
	const char *detail;
	unsigned int i;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		detail = NULL;
		EXPECT_EQ(c[i].want, mmext__maps_lockless_rule(c[i].release, c[i].machine,
								c[i].config, c[i].kernel_max,
								&detail))
			TH_LOG("%s %s config %d kernel_max %ld", c[i].release, c[i].machine,
			       c[i].config, c[i].kernel_max);
		EXPECT_NE(NULL, detail);
	}
}

/* What the library would read of this kernel without the marker, read here. */
static int t_maps_lockless_rule(const char **detail)
{
	char path[512], line[256], buf[32] = "";
	int config = -1, fd;
	long kernel_max = -1;
	struct utsname u;
	FILE *f;

	if (uname(&u))
		return -1;
	snprintf(path, sizeof(path), "/boot/config-%s", u.release);
	f = fopen(path, "r");
	if (f) {
		config = 0;
		while (fgets(line, sizeof(line), f))
			if (!strcmp(line, "CONFIG_PER_VMA_LOCK=y\n"))
				config = 1;
		fclose(f);
	}
	fd = open("/sys/devices/system/cpu/kernel_max", O_RDONLY);
	if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0)
		kernel_max = strtol(buf, NULL, 10);
	if (fd >= 0)
		close(fd);
	return mmext__maps_lockless_rule(u.release, u.machine, config, kernel_max, detail);
}

/*
 * The lockless-maps marker stood in (TEXT, or no file for NULL): the backport's switch
 * decides wherever it is; without it the rule above does, on what this kernel says.
 */
struct maps_lockless_case {
	const char *text;
	int want_reason;	/* -1: the rule's */
};

static int maps_lockless_case_child(void *arg)
{
	const struct maps_lockless_case *c = arg;
	const char *const path[2] = { MMEXT_MAPS_LOCKLESS_SYSFS, NULL };
	const char *const text[2] = { c->text, NULL };
	struct mmext_feature_status st;
	const char *detail = "";
	int want = c->want_reason;

	if (want < 0)
		want = t_maps_lockless_rule(&detail);
	if (want < 0)
		return 2;
	if (t_markers("/sys/kernel/mm/lockless_maps", path, text))
		return T_NO_STANDIN;
	if (mmext_probe(MMEXT_FEAT_MAPS_LOCKLESS, &st))
		return 2;
	if (st.reason != want || st.available != !want ||
	    (c->want_reason < 0 && strcmp(st.detail, detail))) {
		fprintf(stderr, "#      probe: reason %d, want %d (%s)\n", st.reason, want,
			st.detail);
		return 3;
	}
	return 0;
}

#define MAPS_LOCKLESS_CASE(name, text, reason)					\
	TEST(maps_lockless_marker_##name)					\
	{									\
		struct maps_lockless_case c = { text, reason };			\
										\
		T_EXPECT_CHILD_OK(t_child_status(maps_lockless_case_child, &c),	\
				  "cannot stand the marker in (needs root and mount " \
				  "namespaces)");				\
	}

MAPS_LOCKLESS_CASE(on, "1\n", 0)
/* Switched off on the backport: off, whatever the version. */
MAPS_LOCKLESS_CASE(off, "0\n", EOPNOTSUPP)
MAPS_LOCKLESS_CASE(malformed, "yes\n", EINVAL)
/* No marker: the rule on this kernel's release, architecture and config. */
MAPS_LOCKLESS_CASE(none, NULL, -1)

TEST_HARNESS_MAIN
