// SPDX-License-Identifier: GPL-2.0
/*
 * Copy-on-write page tables at fork (mmext patch, prctl option published in
 * /sys/kernel/mm/cow_pte/prctl_option): the prctl's argument checks, that
 * parent and child never see each other's changes whatever either side does
 * to a shared table, RSS and VmPTE in both processes, allocation failure while
 * unsharing, and a seeded random multi-generation stress test against a model.
 * SKIPs on kernels without the patch.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sched.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/prctl.h>
#include <sys/auxv.h>
#include <sys/wait.h>

#include <linux/capability.h>
#include <linux/fs.h>
#include <linux/mempolicy.h>
#include <linux/userfaultfd.h>

#include "harness.h"

#define SYSFS		"/sys/kernel/mm/cow_pte/"
#define PMD_SZ		(2UL << 20)
#define TABLES		8			/* PTE tables in the test area */
#define AREA		(TABLES * PMD_SZ)
#define PG		4096UL
#define NPAGES		(AREA / PG)

static long sysfs_long(const char *name, long dflt)
{
	char path[128], buf[32];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), SYSFS "%s", name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return dflt;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return dflt;
	buf[n] = 0;
	return strtol(buf, NULL, 10);
}

/* 0 or -errno. */
static int write_file(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -errno;
	ret = write(fd, val, strlen(val)) < 0 ? -errno : 0;
	close(fd);
	return ret;
}

static int sysfs_write(const char *name, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), SYSFS "%s", name);
	return write_file(path, val);
}

static void restore_enabled(long saved)
{
	sysfs_write("enabled", saved == 0 ? "0" : saved == 1 ? "1" : "2");
}

static long cow_option(void)
{
	return sysfs_long("prctl_option", -1);
}

#define NEED_COW_PTE(opt)						\
	do {								\
		opt = cow_option();					\
		if (opt < 0)						\
			SKIP(return, "no COW page tables (needs the mmext patch: " \
			     SYSFS "prctl_option)");			\
	} while (0)

/* A "Key:   N kB" field of a /proc file such as status or meminfo; -1 if absent. */
static long proc_kb(const char *path, const char *key)
{
	char line[256];
	long val = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			val = strtol(line + strlen(key), NULL, 10);
	fclose(f);
	return val;
}

/* "VmPTE:" or "RssAnon:" of /proc/PID/status, in kB; -1 if absent. */
static long status_kb(pid_t pid, const char *key)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid ? pid : getpid());
	return proc_kb(path, key);
}

/* AREA bytes of private anonymous memory, PMD-aligned, 4 KiB pages only. */
static char *map_area(void)
{
	char *raw = mmap(NULL, AREA + PMD_SZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char *p;

	if (raw == MAP_FAILED)
		return NULL;
	p = (char *)(((uintptr_t)raw + PMD_SZ - 1) & ~(PMD_SZ - 1));
	if (p > raw)
		munmap(raw, p - raw);
	munmap(p + AREA, raw + PMD_SZ - p);
	madvise(p, AREA, MADV_NOHUGEPAGE);
	return p;
}

static void fill(char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i += PG)
		memset(p + i, (int)((seed + i / PG) & 0xff), PG);
}

/* Index of the first byte that differs from fill(seed), or -1. */
static long check(const char *p, size_t len, int seed)
{
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)p[i] != (unsigned char)((seed + i / PG) & 0xff))
			return (long)i;
	return -1;
}

static long check_zero(const char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (p[i])
			return (long)i;
	return -1;
}

/* The exit status of child pid (fork()'s return), or -1 if it did not exit. */
static int exit_status(pid_t pid)
{
	int st;

	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Run fn in a child of a COW PTE fork; its exit status (0 = pass). */
static int in_child(int (*fn)(char *), char *area)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(area));
	if (waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The failure switch is a CONFIG_DEBUG_VM test switch: SKIP without it, reset it after. */
#define IN_CHILD_FAILING(fn)						\
	do {								\
		if (sysfs_long("fail_unshare", -1) < 0)			\
			SKIP(return, "no " SYSFS "fail_unshare (needs CONFIG_DEBUG_VM)"); \
		EXPECT_EQ(0, in_child(fn, self->area));			\
		sysfs_write("fail_unshare", "0");			\
	} while (0)

FIXTURE(cow)
{
	long opt;
	char *area;
};

FIXTURE_SETUP(cow)
{
	self->area = NULL;
	self->opt = cow_option();
	if (self->opt < 0)
		SKIP(return, "no COW page tables (needs the mmext patch: "
		     SYSFS "prctl_option)");
	self->area = map_area();
	ASSERT_NE(NULL, self->area);
	fill(self->area, AREA, 1);
	ASSERT_EQ(0, prctl(self->opt, 1, 0, 0, 0));
}

FIXTURE_TEARDOWN(cow)
{
	if (self->area)
		munmap(self->area, AREA);
	if (self->opt >= 0)
		prctl(self->opt, 0, 0, 0, 0);
}

TEST(prctl_args)
{
	long opt;

	NEED_COW_PTE(opt);
	EXPECT_EQ(0, prctl(opt, 2, 0, 0, 0));
	EXPECT_EQ(0, prctl(opt, 1, 0, 0, 0));
	EXPECT_EQ(1, prctl(opt, 2, 0, 0, 0));
	EXPECT_EQ(0, prctl(opt, 1, 0, 0, 0));		/* idempotent */
	EXPECT_EQ(1, prctl(opt, 2, 0, 0, 0));
	EXPECT_EQ(0, prctl(opt, 0, 0, 0, 0));
	EXPECT_EQ(0, prctl(opt, 2, 0, 0, 0));

	/* Bad arguments fail with EINVAL and change nothing. */
	EXPECT_EQ(-1, prctl(opt, 3, 0, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(opt, -1L, 0, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(opt, 1, 1, 0, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(opt, 1, 0, 1, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(-1, prctl(opt, 1, 0, 0, 1));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, prctl(opt, 2, 0, 0, 0));
	EXPECT_EQ(-1, prctl(opt, 0, 0, 0, (unsigned long)-1));
	EXPECT_EQ(EINVAL, errno);

	/* The magic number is not an upstream prctl: the neighbours stay unknown. */
	EXPECT_EQ(-1, prctl(opt + 1, 2, 0, 0, 0));
	EXPECT_EQ(EINVAL, errno);
}

/* The setting is inherited by fork (a fork server's children fork alike). */
TEST(prctl_inherited)
{
	int st, on;
	long opt;
	pid_t pid;

	NEED_COW_PTE(opt);
	for (on = 1; on >= 0; on--) {
		ASSERT_EQ(0, prctl(opt, on, 0, 0, 0));
		pid = fork();
		ASSERT_GE(pid, 0);
		if (!pid)
			_exit(prctl(opt, 2, 0, 0, 0) == on ? 0 : 1);
		ASSERT_EQ(pid, waitpid(pid, &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st));
	}
}

/* prctl(ENABLE) as an unprivileged user: 0 or -errno, in a child. */
static int enable_as_nobody(long opt)
{
	pid_t pid = fork();

	if (!pid) {
		if (setgid(65534) || setuid(65534))
			_exit(100);
		/* And the switch stays root's. */
		if (sysfs_write("enabled", "2") != -EACCES)
			_exit(101);
		_exit(prctl(opt, 1, 0, 0, 0) ? errno : 0);
	}
	return exit_status(pid);
}

/* /sys/kernel/mm/cow_pte/enabled: who may opt in. */
TEST(enabled)
{
	long opt, saved;

	NEED_COW_PTE(opt);
	saved = sysfs_long("enabled", -1);
	ASSERT_GE(saved, 0);
	if (geteuid())
		SKIP(return, "needs root");

	/* Bad values fail and change nothing. */
	EXPECT_EQ(-EINVAL, sysfs_write("enabled", "3"));
	EXPECT_EQ(-EINVAL, sysfs_write("enabled", "-1"));
	EXPECT_EQ(-EINVAL, sysfs_write("enabled", "on"));
	EXPECT_EQ(-ERANGE, sysfs_write("enabled", "4294967297"));
	EXPECT_EQ(saved, sysfs_long("enabled", -1));

	ASSERT_EQ(0, sysfs_write("enabled", "1"));
	EXPECT_EQ(EPERM, enable_as_nobody(opt));
	EXPECT_EQ(0, prctl(opt, 1, 0, 0, 0));		/* root has CAP_IPC_LOCK */
	ASSERT_EQ(0, sysfs_write("enabled", "2"));
	EXPECT_EQ(0, enable_as_nobody(opt));
	ASSERT_EQ(0, sysfs_write("enabled", "0"));
	EXPECT_EQ(-1, prctl(opt, 1, 0, 0, 0));
	EXPECT_EQ(EPERM, errno);
	EXPECT_EQ(1, prctl(opt, 2, 0, 0, 0));		/* set before: unchanged */
	EXPECT_EQ(0, prctl(opt, 0, 0, 0, 0));
	restore_enabled(saved);
}

/*
 * execve() keeps the setting, so that a wrapper can opt in for a program that
 * knows nothing of the prctl; an execve() that changes privileges clears it.
 * The tests execute this program again with EXEC_ARG; it reports, in its exit
 * status, EXEC_ON if PR_COW_PTE_GET says 1, EXEC_SHARED if a child of its own
 * shares the tables of an area it filled, EXEC_SECURE if AT_SECURE is set;
 * 100 and up when something failed.
 */
#define EXEC_ARG	"--exec-report"
#define EXEC_ON		1
#define EXEC_SHARED	2
#define EXEC_SECURE	4

/* In a child of the executed program: 0 if it shares the area's tables, 1 if not. */
static int child_shares_tables(char *area)
{
	long pte = status_kb(0, "VmPTE:");
	long ppte = status_kb(getppid(), "VmPTE:");

	if (pte < 0 || ppte < 0 || check(area, AREA, 1) >= 0)
		return 10;
	return pte > ppte - TABLES * 4;
}

static int exec_report(void)
{
	long opt = cow_option();
	int on, st, ret = 0;
	char *area;

	if (opt < 0)
		return 100;
	on = prctl(opt, 2, 0, 0, 0);
	if (on < 0)
		return 101;
	/*
	 * The child reads VmPTE through stdio: if its malloc() made the first
	 * heap here, the heap's new page table would be counted against sharing.
	 */
	if (status_kb(0, "VmPTE:") < 0)
		return 104;
	area = map_area();
	if (!area)
		return 102;
	fill(area, AREA, 1);
	st = in_child(child_shares_tables, area);
	if (st > 1)
		return 103;
	if (on)
		ret |= EXEC_ON;
	if (!st)
		ret |= EXEC_SHARED;
	if (getauxval(AT_SECURE))
		ret |= EXEC_SECURE;
	return ret;
}

/* Who the child of exec_and_report() is when it opts in and when it executes. */
enum exec_who {
	AS_ROOT,		/* root throughout */
	DROP_AFTER,		/* root opts in, nobody executes */
	DROP_BEFORE,		/* nobody opts in and executes */
	DROP_BOUNDING,		/* root opts in, executes without CAP_IPC_LOCK in its bounding set */
};

/*
 * Fork; in the child set the option to on as who says, set enabled to
 * enabled_at_exec if not NULL, and execute path; the report, or -1.
 */
static int exec_and_report(long opt, int on, enum exec_who who,
			   const char *enabled_at_exec, const char *path)
{
	pid_t pid = fork();

	if (!pid) {
		if (who == DROP_BEFORE && (setgid(65534) || setuid(65534)))
			_exit(111);
		if (prctl(opt, on, 0, 0, 0))
			_exit(110);
		if (enabled_at_exec && sysfs_write("enabled", enabled_at_exec))
			_exit(113);
		if (who == DROP_AFTER && (setgid(65534) || setuid(65534)))
			_exit(111);
		/* Still capable now; the program's credentials will not be. */
		if (who == DROP_BOUNDING && prctl(PR_CAPBSET_DROP, CAP_IPC_LOCK, 0, 0, 0))
			_exit(114);
		execl(path, path, EXEC_ARG, (char *)NULL);
		_exit(112);
	}
	return exit_status(pid);
}

/* execve() keeps the setting either way, and the program's forks follow it. */
TEST(exec_keeps)
{
	long opt, saved;

	NEED_COW_PTE(opt);
	if (geteuid())
		SKIP(return, "needs root");
	saved = sysfs_long("enabled", -1);
	ASSERT_EQ(0, sysfs_write("enabled", "1"));
	EXPECT_EQ(EXEC_ON | EXEC_SHARED, exec_and_report(opt, 1, AS_ROOT, NULL, "/proc/self/exe"));
	EXPECT_EQ(0, exec_and_report(opt, 0, AS_ROOT, NULL, "/proc/self/exe"));
	EXPECT_EQ(0, prctl(opt, 2, 0, 0, 0));
	restore_enabled(saved);
}

/*
 * The policy is checked again at execve(), with the program's credentials: a
 * privileged parent that runs a program without CAP_IPC_LOCK hands nothing on
 * under enabled=1 (also when only the bounding set drops it, so that the
 * caller is still capable: the check must use the new credentials), and a
 * setting made before the administrator wrote 0 does not survive.
 */
TEST(exec_rechecks_policy)
{
	long opt, saved;

	NEED_COW_PTE(opt);
	if (geteuid())
		SKIP(return, "needs root");
	saved = sysfs_long("enabled", -1);
	ASSERT_EQ(0, sysfs_write("enabled", "1"));
	EXPECT_EQ(0, exec_and_report(opt, 1, DROP_AFTER, NULL, "/proc/self/exe"));
	EXPECT_EQ(0, exec_and_report(opt, 1, DROP_BOUNDING, NULL, "/proc/self/exe"));
	EXPECT_EQ(EXEC_ON | EXEC_SHARED,
		  exec_and_report(opt, 1, AS_ROOT, NULL, "/proc/self/exe"));
	ASSERT_EQ(0, sysfs_write("enabled", "2"));
	EXPECT_EQ(EXEC_ON | EXEC_SHARED,
		  exec_and_report(opt, 1, DROP_AFTER, NULL, "/proc/self/exe"));
	EXPECT_EQ(0, exec_and_report(opt, 1, AS_ROOT, "0", "/proc/self/exe"));
	EXPECT_EQ(0, sysfs_long("enabled", -1));
	restore_enabled(saved);
}

/* A copy of this program owned by uid, with mode; "" if none could be made. */
static void setid_copy(char *path, size_t size, uid_t uid, mode_t mode)
{
	char buf[65536];
	ssize_t n;
	int in, out;

	snprintf(path, size, "/tmp/cow_pte_setid.XXXXXX");
	out = mkstemp(path);
	in = open("/proc/self/exe", O_RDONLY);
	if (out < 0 || in < 0)
		goto fail;
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			goto fail;
	if (n < 0 || fchown(out, uid, uid) || fchmod(out, mode))
		goto fail;
	close(in);
	close(out);
	return;
fail:
	if (out >= 0) {
		close(out);
		unlink(path);
	}
	if (in >= 0)
		close(in);
	path[0] = 0;
}

/*
 * An execve() that changes privileges clears the setting whatever the policy:
 * who set it may be less privileged than the program, which did not ask for
 * it. Root executing set-ID nobody copies; nobody (allowed to opt in by
 * enabled=2) executing a set-user-ID root copy; and, with enabled=1, a
 * set-user-ID root copy executed by nobody after root opted in, whose
 * credentials pass the capability check, so that only AT_SECURE clears it.
 */
TEST(exec_setid_clears)
{
	static const struct {
		const char *what;
		uid_t owner;
		mode_t mode;
		enum exec_who who;
		const char *enabled;
	} cases[] = {
		{ "set-user-ID nobody", 65534, S_ISUID | 0755, AS_ROOT, "2" },
		{ "set-group-ID nobody", 65534, S_ISGID | 0755, AS_ROOT, "2" },
		{ "set-user-ID root from nobody", 0, S_ISUID | 0755, DROP_BEFORE, "2" },
		{ "set-user-ID root, enabled=1", 0, S_ISUID | 0755, DROP_AFTER, "1" },
	};
	char path[64];
	long opt, saved;
	unsigned int i;
	int r;

	NEED_COW_PTE(opt);
	if (geteuid())
		SKIP(return, "needs root (to make a set-user-ID copy of the test)");
	saved = sysfs_long("enabled", -1);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ASSERT_EQ(0, sysfs_write("enabled", cases[i].enabled));
		setid_copy(path, sizeof(path), cases[i].owner, cases[i].mode);
		ASSERT_NE(0, path[0]);
		r = exec_and_report(opt, 1, cases[i].who, NULL, path);
		unlink(path);
		if (r >= 0 && r < 100 && !(r & EXEC_SECURE)) {
			restore_enabled(saved);
			SKIP(return, "the set-ID bit had no effect (nosuid /tmp?)");
		}
		/* Not on, and so not shared, in the program and its children. */
		EXPECT_EQ(EXEC_SECURE, r) TH_LOG("%s: report %d", cases[i].what, r);
	}
	restore_enabled(saved);
}

/*
 * Sharing is visible in VmPTE: the child is not charged for the area's tables
 * and RssAnon is what a copying fork gives. With the option off, it is not.
 */
static int child_accounting(char *area)
{
	long pte = status_kb(0, "VmPTE:");
	long rss = status_kb(0, "RssAnon:");
	long ppte = status_kb(getppid(), "VmPTE:");

	if (rss < (long)(AREA >> 10))
		return 10;
	if (pte > ppte - TABLES * 4)
		return 11;
	if (check(area, AREA, 1) >= 0)
		return 12;
	/* Reads keep sharing; a write unshares exactly one table. */
	if (status_kb(0, "VmPTE:") != pte)
		return 13;
	area[0] = 7;
	if (status_kb(0, "VmPTE:") != pte + 4)
		return 14;
	if (status_kb(0, "RssAnon:") != rss)
		return 15;
	return 0;
}

TEST_F(cow, accounting)
{
	long pte = status_kb(0, "VmPTE:");

	EXPECT_EQ(0, in_child(child_accounting, self->area));
	/* The parent's tables and pages are its own throughout. */
	EXPECT_EQ(pte, status_kb(0, "VmPTE:"));
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

/* KEY ("Pss:", ...) of the smaps entry starting at ADDR of PID, in kB. */
static long smaps_kb(pid_t pid, const void *addr, const char *key)
{
	char path[64], line[256], start[32];
	bool in = false;
	long val = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/smaps", pid);
	snprintf(start, sizeof(start), "%lx-", (unsigned long)addr);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') > strchr(line, '-'))
			in = !strncmp(line, start, strlen(start));
		else if (in && !strncmp(line, key, strlen(key)))
			val = strtol(line + strlen(key), NULL, 10);
	}
	fclose(f);
	return val;
}

/* Pages of AREA at ADDR in PID that pagemap reports exclusively mapped. */
static long pagemap_exclusive(pid_t pid, const char *addr)
{
	uint64_t ent[512];
	char path[64];
	long n = 0;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/pagemap", pid);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	for (size_t off = 0; off < AREA; off += sizeof(ent) / 8 * PG) {
		if (pread(fd, ent, sizeof(ent),
			  (off_t)(((uintptr_t)addr + off) / PG * 8)) != sizeof(ent)) {
			n = -1;
			break;
		}
		for (int i = 0; i < 512; i++)
			n += !!(ent[i] & (1ULL << 56));	/* PM_MMAP_EXCLUSIVE */
	}
	close(fd);
	return n;
}

/*
 * smaps and pagemap see every page mapped twice, as after a copying fork,
 * although fork took no mapcount for the child.
 */
static int child_sharing_reported(char *area)
{
	pid_t pids[2] = { getpid(), getppid() };
	long kb = AREA >> 10;

	for (int i = 0; i < 2; i++) {
		if (smaps_kb(pids[i], area, "Rss:") != kb)
			return 30 + i;
		if (smaps_kb(pids[i], area, "Pss:") != kb / 2)
			return 32 + i;
		if (smaps_kb(pids[i], area, "Shared_Dirty:") != kb)
			return 34 + i;
		if (smaps_kb(pids[i], area, "Private_Dirty:") != 0)
			return 36 + i;
		if (pagemap_exclusive(pids[i], area) != 0)
			return 38 + i;
	}
	return 0;
}

/*
 * A reference a child takes through a shared table (vmsplice: GUP with
 * FOLL_GET) keeps the child's view after the child unmaps and the parent
 * writes, as after a copying fork (the cow selftest's "Leak from parent into
 * child" case, on a table that stays shared until the child leaves).
 */
TEST_F(cow, vmsplice_snapshot)
{
	struct iovec iov = { .iov_base = self->area, .iov_len = PG };
	char buf[PG];
	int p[2], st;
	pid_t pid;

	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (vmsplice(p[1], &iov, 1, 0) != (ssize_t)PG)
			_exit(1);
		_exit(munmap(self->area, AREA) ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	ASSERT_EQ(0, WEXITSTATUS(st));
	memset(self->area, 0xaa, PG);
	ASSERT_EQ((ssize_t)PG, read(p[0], buf, PG));
	EXPECT_EQ(-1, check(buf, PG, 1));
	close(p[0]);
	close(p[1]);
}

TEST_F(cow, smaps_and_pagemap)
{
	long kb = AREA >> 10;

	/* The same figures with sharing off (a copying fork) and on. */
	for (int on = 0; on <= 1; on++) {
		ASSERT_EQ(0, prctl(self->opt, on, 0, 0, 0));
		EXPECT_EQ(0, in_child(child_sharing_reported, self->area))
			TH_LOG("COW PTE %s", on ? "on" : "off");
	}
	/* Back to one holder: exclusive again. */
	EXPECT_EQ(kb, smaps_kb(getpid(), self->area, "Pss:"));
	EXPECT_EQ((long)NPAGES, pagemap_exclusive(getpid(), self->area));
}

static int child_no_sharing(char *area)
{
	long pte = status_kb(0, "VmPTE:");
	long ppte = status_kb(getppid(), "VmPTE:");

	return pte >= ppte - 4 ? 0 : 1;
}

TEST_F(cow, off_means_copy)
{
	ASSERT_EQ(0, prctl(self->opt, 0, 0, 0, 0));
	EXPECT_EQ(0, in_child(child_no_sharing, self->area));
}

/* Two-way write isolation with a handshake: child writes, then parent. */
/* Turned off system-wide, nothing is shared, also for who opted in before. */
TEST_F(cow, disabled_shares_nothing)
{
	long saved = sysfs_long("enabled", -1);

	ASSERT_GE(saved, 0);
	ASSERT_EQ(0, sysfs_write("enabled", "0"));
	EXPECT_EQ(0, in_child(child_no_sharing, self->area));
	ASSERT_EQ(0, sysfs_write("enabled", saved == 1 ? "1" : "2"));
	EXPECT_EQ(0, in_child(child_accounting, self->area));
}

TEST_F(cow, write_fault)
{
	int to_child[2], to_parent[2], st;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		fill(self->area, AREA / 2, 2);		/* half the tables */
		if (write(to_parent[1], &c, 1) != 1 || read(to_child[0], &c, 1) != 1)
			_exit(20);
		if (check(self->area, AREA / 2, 2) >= 0)
			_exit(21);
		if (check(self->area + AREA / 2, AREA / 2, 1 + NPAGES / 2) >= 0)
			_exit(22);
		_exit(0);
	}
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT_EQ(-1, check(self->area, AREA, 1));
	fill(self->area, AREA, 3);			/* the parent's turn */
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-1, check(self->area, AREA, 3));
}

/* Each operation in the child; the parent's memory must be untouched after. */
static int child_munmap(char *a)
{
	/* A partial table, a whole one, and the rest stays. */
	if (munmap(a + PG * 3, PG * 5) || munmap(a + PMD_SZ, PMD_SZ))
		return 1;
	if (check(a, PG * 3, 1) >= 0 || check(a + 2 * PMD_SZ, AREA - 2 * PMD_SZ,
					     1 + 2 * PMD_SZ / PG) >= 0)
		return 2;
	fill(a + 2 * PMD_SZ, PMD_SZ, 9);
	return 0;
}

static int child_mprotect(char *a)
{
	if (mprotect(a + PG, PMD_SZ, PROT_READ))
		return 1;
	if (check(a, AREA, 1) >= 0)
		return 2;
	if (mprotect(a + PG, PMD_SZ, PROT_READ | PROT_WRITE))
		return 3;
	fill(a, AREA, 9);
	return check(a, AREA, 9) >= 0 ? 4 : 0;
}

static int child_dontneed(char *a)
{
	if (madvise(a + PG * 10, PMD_SZ * 2, MADV_DONTNEED))
		return 1;
	if (check_zero(a + PG * 10, PMD_SZ * 2) >= 0)
		return 2;
	if (check(a, PG * 10, 1) >= 0)
		return 3;
	return madvise(a, AREA, MADV_DONTNEED) || check_zero(a, AREA) >= 0 ? 4 : 0;
}

static int child_free(char *a)
{
	if (madvise(a, AREA / 2, MADV_FREE))
		return 1;
	fill(a, AREA, 9);
	return check(a, AREA, 9) >= 0 ? 2 : 0;
}

static int child_mremap(char *a)
{
	char *dst = map_area();
	char *b;

	if (!dst)
		return 1;
	b = mremap(a + PMD_SZ, 2 * PMD_SZ, 2 * PMD_SZ, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	if (b != dst)
		return 2;
	if (check(b, 2 * PMD_SZ, 1 + PMD_SZ / PG) >= 0)
		return 3;
	fill(b, 2 * PMD_SZ, 9);
	/* Unaligned move of a partial range, too. */
	b = mremap(a + 3 * PMD_SZ + PG * 7, PG * 20, PG * 20, MREMAP_MAYMOVE | MREMAP_FIXED,
		   dst + 2 * PMD_SZ + PG);
	if (b == MAP_FAILED)
		return 4;
	return check(b, PG * 20, 1 + 3 * PMD_SZ / PG + 7) >= 0 ? 5 : 0;
}

static int child_fork_again(char *a)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (!pid) {
		if (check(a, AREA, 1) >= 0)
			_exit(2);
		fill(a, AREA, 5);
		_exit(check(a, AREA, 5) >= 0 ? 3 : 0);
	}
	if (waitpid(pid, &st, 0) != pid || WEXITSTATUS(st))
		return 4;
	if (check(a, AREA, 1) >= 0)
		return 5;
	fill(a, AREA, 6);
	return 0;
}

static int child_proc_mem(char *a)
{
	/* A FOLL_FORCE write through /proc/self/mem (GUP, write fault). */
	char buf[64];
	int fd = open("/proc/self/mem", O_RDWR);

	if (fd < 0)
		return 1;
	memset(buf, 0x77, sizeof(buf));
	if (pwrite(fd, buf, sizeof(buf), (off_t)(uintptr_t)(a + PMD_SZ + 100)) != sizeof(buf))
		return 2;
	close(fd);
	return (unsigned char)a[PMD_SZ + 100] == 0x77 ? 0 : 3;
}

static int child_clear_refs(char *a)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd < 0)
		return 0;	/* no clear_refs: nothing to test */
	if (write(fd, "4", 1) != 1 || write(fd, "1", 1) != 1)
		return 1;
	close(fd);
	fill(a, AREA, 9);
	return check(a, AREA, 9) >= 0 ? 2 : 0;
}

static int child_collapse(char *a)
{
	/* khugepaged's collapse (MADV_COLLAPSE); may be refused, must not leak. */
	madvise(a, AREA, MADV_HUGEPAGE);
	madvise(a + PMD_SZ, 2 * PMD_SZ, 25 /* MADV_COLLAPSE */);
	if (check(a, AREA, 1) >= 0)
		return 1;
	fill(a, AREA, 9);
	return check(a, AREA, 9) >= 0 ? 2 : 0;
}

static int child_mlock(char *a)
{
	if (mlock(a, AREA))
		return 0;	/* RLIMIT_MEMLOCK: nothing to test */
	if (check(a, AREA, 1) >= 0)
		return 1;
	fill(a, AREA / 2, 9);
	munlock(a, AREA);
	return check(a, AREA / 2, 9) >= 0 ? 2 : 0;
}

static int child_pageout(char *a)
{
	/* Reclaim through rmap must leave shared tables alone. */
	madvise(a, AREA, 21 /* MADV_PAGEOUT */);
	madvise(a, AREA, 20 /* MADV_COLD */);
	if (check(a, AREA, 1) >= 0)
		return 1;
	fill(a, AREA, 9);
	return check(a, AREA, 9) >= 0 ? 2 : 0;
}

static int child_uffd(char *a)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)a, .len = AREA },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return 0;	/* no userfaultfd for us: nothing to test */
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg))
		return 1;
	if (check(a, AREA, 1) >= 0)
		return 2;
	fill(a, AREA, 9);
	if (ioctl(fd, UFFDIO_UNREGISTER, &reg.range))
		return 3;
	close(fd);
	return check(a, AREA, 9) >= 0 ? 4 : 0;
}

static int child_exit(char *a)
{
	return 0;
}

#define CHILD_OP(name)							\
TEST_F(cow, name)							\
{									\
	long pte = status_kb(0, "VmPTE:");				\
	long rss = status_kb(0, "RssAnon:");				\
									\
	EXPECT_EQ(0, in_child(child_##name, self->area));		\
	EXPECT_EQ(-1, check(self->area, AREA, 1));			\
	EXPECT_EQ(rss, status_kb(0, "RssAnon:"));			\
	/* The parent keeps the tables it owns. */			\
	EXPECT_EQ(pte, status_kb(0, "VmPTE:"));				\
	/* And writes privately now that the child is gone. */		\
	fill(self->area, AREA, 4);					\
	EXPECT_EQ(-1, check(self->area, AREA, 4));			\
	EXPECT_EQ(rss, status_kb(0, "RssAnon:"));			\
}

CHILD_OP(munmap)
CHILD_OP(mprotect)
CHILD_OP(dontneed)
CHILD_OP(free)
CHILD_OP(mremap)
CHILD_OP(fork_again)
CHILD_OP(proc_mem)
CHILD_OP(clear_refs)
CHILD_OP(collapse)
CHILD_OP(mlock)
CHILD_OP(pageout)
CHILD_OP(uffd)
CHILD_OP(exit)

/* The parent changes its side while the child holds the shared tables. */
TEST_F(cow, parent_changes)
{
	int to_child[2], st;
	char c = 0;
	pid_t pid;

	ASSERT_EQ(0, pipe(to_child));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (read(to_child[0], &c, 1) != 1)
			_exit(20);
		/* Left holding tables the parent gave up: still its data. */
		if (check(self->area, AREA, 1) >= 0)
			_exit(21);
		fill(self->area, AREA, 8);
		_exit(check(self->area, AREA, 8) >= 0 ? 22 : 0);
	}
	ASSERT_EQ(0, mprotect(self->area, PMD_SZ, PROT_READ));
	ASSERT_EQ(0, madvise(self->area + PMD_SZ, PMD_SZ, MADV_DONTNEED));
	ASSERT_EQ(0, munmap(self->area + 2 * PMD_SZ, PMD_SZ));
	fill(self->area + 3 * PMD_SZ, PMD_SZ, 2);
	ASSERT_EQ(1, write(to_child[1], &c, 1));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-1, check(self->area, PMD_SZ, 1));
	EXPECT_EQ(-1, check_zero(self->area + PMD_SZ, PMD_SZ));
	EXPECT_EQ(-1, check(self->area + 3 * PMD_SZ, PMD_SZ, 2));
	EXPECT_EQ(-1, check(self->area + 4 * PMD_SZ, 4 * PMD_SZ, 1 + 4 * PMD_SZ / PG));
	mprotect(self->area, PMD_SZ, PROT_READ | PROT_WRITE);
	ASSERT_NE(MAP_FAILED, mmap(self->area + 2 * PMD_SZ, PMD_SZ, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
}

/*
 * File-backed memory is never shared by fork: a private file mapping (with
 * pages the parent wrote, so anonymous copies) and a shared one behave as
 * after a plain fork while the private anonymous area is shared.
 */
TEST_F(cow, file_backed)
{
	int fd = memfd_create("cow_pte", 0), st;
	char *priv, *shr;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 2 * PMD_SZ));
	priv = mmap(NULL, 2 * PMD_SZ, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	shr = mmap(NULL, 2 * PMD_SZ, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, priv);
	ASSERT_NE(MAP_FAILED, shr);
	fill(shr, 2 * PMD_SZ, 5);		/* the file */
	fill(priv, PMD_SZ, 6);			/* private copies of half */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		if (check(priv, PMD_SZ, 6) >= 0 || check(priv + PMD_SZ, PMD_SZ,
							 5 + PMD_SZ / PG) >= 0)
			_exit(1);
		fill(priv, 2 * PMD_SZ, 7);
		fill(shr, PMD_SZ, 8);
		fill(self->area, AREA, 9);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-1, check(priv, PMD_SZ, 6));		/* the parent's copies */
	EXPECT_EQ(-1, check(shr, PMD_SZ, 8));		/* the child's file writes */
	EXPECT_EQ(-1, check(priv + PMD_SZ, PMD_SZ, 5 + PMD_SZ / PG));
	EXPECT_EQ(-1, check(self->area, AREA, 1));
	munmap(priv, 2 * PMD_SZ);
	munmap(shr, 2 * PMD_SZ);
	close(fd);
}

/* Memory fork does not share (MAP_SHARED, THP) behaves as before. */
TEST_F(cow, shared_and_thp)
{
	char *shared = mmap(NULL, PMD_SZ, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	int st;
	pid_t pid;

	ASSERT_NE(MAP_FAILED, shared);
	madvise(self->area, 2 * PMD_SZ, MADV_HUGEPAGE);
	fill(shared, PMD_SZ, 1);
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		fill(shared, PMD_SZ, 3);
		fill(self->area, 2 * PMD_SZ, 3);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-1, check(shared, PMD_SZ, 3));	/* shared: the child's writes */
	EXPECT_EQ(-1, check(self->area, AREA, 1));	/* private: not */
	munmap(shared, PMD_SZ);
}

/*
 * Allocation failure while unsharing (fault injection, DEBUG_VM kernels):
 * mprotect and mremap fail with ENOMEM and change nothing, then succeed.
 */
static int child_enomem(char *a)
{
	char *dst;

	if (sysfs_write("fail_unshare", "1"))
		return 1;
	if (mprotect(a, AREA, PROT_READ) != -1 || errno != ENOMEM)
		return 2;
	a[0] = 2;				/* still writable */
	if (sysfs_write("fail_unshare", "1"))
		return 3;
	dst = map_area();
	if (!dst)
		return 4;
	if (mremap(a + PMD_SZ, PMD_SZ, PMD_SZ, MREMAP_MAYMOVE | MREMAP_FIXED, dst) != MAP_FAILED ||
	    errno != ENOMEM)
		return 5;
	if (check(a + PMD_SZ, AREA - PMD_SZ, 1 + PMD_SZ / PG) >= 0)
		return 6;
	if (sysfs_long("fail_unshare", -1) != 0)
		return 7;
	if (mprotect(a, AREA, PROT_READ))
		return 8;
	return check(a + PG, AREA - PG, 1 + 1) >= 0 ? 9 : 0;
}

TEST_F(cow, enomem)
{
	IN_CHILD_FAILING(child_enomem);
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

/* The test switch shares at every fork, without the prctl. */
TEST_F(cow, force_all)
{
	if (sysfs_long("force_all", -1) < 0)
		SKIP(return, "no " SYSFS "force_all (needs CONFIG_DEBUG_VM)");
	ASSERT_EQ(0, prctl(self->opt, 0, 0, 0, 0));
	ASSERT_EQ(0, sysfs_write("force_all", "1"));
	EXPECT_EQ(0, in_child(child_accounting, self->area));
	ASSERT_EQ(0, sysfs_write("force_all", "0"));
	EXPECT_EQ(0, in_child(child_no_sharing, self->area));
}

/*
 * Locked memory is never shared: fork copies the tables of a VM_LOCKED VMA, so
 * unmapping it in the parent munlocks every page (Mlocked drops) while the
 * child still runs.
 */
TEST_F(cow, mlock_then_fork)
{
	long before, locked, after;
	int pfd[2];
	char c;
	pid_t pid;

	before = proc_kb("/proc/meminfo", "Mlocked:");
	if (before < 0 || mlock(self->area, AREA))
		SKIP(return, "cannot mlock %lu MiB", AREA >> 20);
	locked = proc_kb("/proc/meminfo", "Mlocked:");
	ASSERT_GE(locked - before, (long)(AREA >> 10) * 9 / 10);
	ASSERT_EQ(0, pipe(pfd));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		close(pfd[1]);
		/* Hold whatever fork gave us until the parent has unmapped. */
		_exit(read(pfd[0], &c, 1) == 0 && check(self->area, AREA, 1) < 0 ? 0 : 1);
	}
	close(pfd[0]);
	ASSERT_EQ(0, munmap(self->area, AREA));
	self->area = NULL;
	after = proc_kb("/proc/meminfo", "Mlocked:");
	close(pfd[1]);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	EXPECT_LE(after - before, (long)(AREA >> 10) / 10) {
		TH_LOG("Mlocked: %ld kB before mlock, %ld locked, %ld after munmap",
		       before, locked, after);
	}
}

/* mlock() after fork gets private tables first, or fails with nothing locked. */
static int child_mlock_enomem(char *a)
{
	if (sysfs_write("fail_unshare", "1"))
		return 1;
	if (mlock(a, AREA) != -1 || errno != ENOMEM)
		return 2;
	if (status_kb(0, "VmLck:") != 0)
		return 3;
	if (sysfs_long("fail_unshare", -1) != 0)
		return 4;
	if (mlock(a, AREA))
		return 0;	/* RLIMIT_MEMLOCK: nothing more to test */
	if (status_kb(0, "VmLck:") < (long)(AREA >> 10))
		return 5;
	return check(a, AREA, 1) >= 0 ? 6 : 0;
}

TEST_F(cow, mlock_enomem)
{
	IN_CHILD_FAILING(child_mlock_enomem);
}

/*
 * Operations that only read page tables, or only hint, never copy a shared
 * table: the child's VmPTE stays what fork gave it, and the failure switch is
 * never consumed.
 */
static int child_readers(char *a)
{
	long pte = status_kb(0, "VmPTE:");
	struct page_region regions[8];
	struct pm_scan_arg scan = {
		.size = sizeof(scan), .start = (uintptr_t)a, .end = (uintptr_t)a + AREA,
		.vec = (uintptr_t)regions, .vec_len = 8,
		.category_mask = PAGE_IS_PRESENT, .return_mask = PAGE_IS_PRESENT,
	};
	unsigned char vec[AREA / PG];
	char buf[PG];
	int node, fd;

	if (sysfs_write("fail_unshare", "1000"))
		return 1;
	if (madvise(a, AREA, MADV_WILLNEED))
		return 2;
	if (status_kb(0, "VmPTE:") != pte)
		return 3;
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || ioctl(fd, PAGEMAP_SCAN, &scan) < 0)
		return 4;
	close(fd);
	if (status_kb(0, "VmPTE:") != pte)
		return 5;
	fd = open("/proc/self/mem", O_RDONLY);
	if (fd < 0 || pread(fd, buf, PG, (uintptr_t)a + PMD_SZ) != PG || buf[0] != a[PMD_SZ])
		return 6;
	close(fd);
	if (status_kb(0, "VmPTE:") != pte)
		return 7;
	if (syscall(__NR_get_mempolicy, &node, NULL, 0, a + 2 * PMD_SZ,
		    MPOL_F_NODE | MPOL_F_ADDR) && errno != ENOSYS)
		return 8;
	if (status_kb(0, "VmPTE:") != pte)
		return 9;
	if (mincore(a, AREA, vec) || madvise(a, AREA, MADV_COLD) ||
	    madvise(a, AREA, MADV_PAGEOUT) || madvise(a, AREA, MADV_FREE))
		return 10;
	if (status_kb(0, "VmPTE:") != pte)
		return 11;
	if (sysfs_long("fail_unshare", -1) != 1000)
		return 12;
	if (sysfs_write("fail_unshare", "0"))
		return 13;
	return check(a, AREA, 1) >= 0 ? 14 : 0;
}

TEST_F(cow, readers_keep_sharing)
{
	IN_CHILD_FAILING(child_readers);
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

/* Clearing soft-dirty bits changes the table: ENOMEM when it cannot be copied. */
static int child_clear_refs_enomem(char *a)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);

	if (fd < 0)
		return 0;
	if (sysfs_write("fail_unshare", "1"))
		return 1;
	if (write(fd, "4", 1) != -1 || errno != ENOMEM)
		return 2;
	if (sysfs_long("fail_unshare", -1) != 0)
		return 3;
	if (write(fd, "4", 1) != 1)
		return 4;
	close(fd);
	return check(a, AREA, 1) >= 0 ? 5 : 0;
}

TEST_F(cow, clear_refs_enomem)
{
	IN_CHILD_FAILING(child_clear_refs_enomem);
}

#define CGROUP		"/sys/fs/cgroup/mmext-cow-pte"

static int cg_write(const char *file, const char *val)
{
	char path[128];

	snprintf(path, sizeof(path), CGROUP "/%s", file);
	return write_file(path, val);
}

static int set_oom_score_adj(const char *val)
{
	return write_file("/proc/self/oom_score_adj", val);
}

/* A memory cgroup of 32 MiB without swap, or a reason why not. */
static const char *cg_make(void)
{
	rmdir(CGROUP);
	if (mkdir(CGROUP, 0755))
		return "no cgroup v2 at /sys/fs/cgroup";
	if (cg_write("memory.max", "32M")) {
		rmdir(CGROUP);
		return "no memory controller (CONFIG_MEMCG)";
	}
	cg_write("memory.swap.max", "0");
	return NULL;
}

/* Pages from a 32 MiB range that will not all fit: the group ends up full. */
static void fill_cgroup(void)
{
	char *shm = mmap(NULL, 32UL << 20, PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (shm != MAP_FAILED)
		madvise(shm, 32UL << 20, 23 /* MADV_POPULATE_WRITE */);
}

/*
 * Kill @victim and reap it with process_mrelease() from inside the full
 * cgroup. Nothing may fault in a page once there: a fault in a full group
 * with nobody to kill is retried for ever.
 */
static void __attribute__((noinline)) touch_stack(void)
{
	volatile char stack[64 << 10];

	memset((char *)stack, 0, sizeof(stack));
}

static int reap_in_cgroup(pid_t victim)
{
	int pidfd, fd;

	touch_stack();
	pidfd = syscall(__NR_pidfd_open, victim, 0);
	fd = open(CGROUP "/cgroup.procs", O_WRONLY);
	if (pidfd < 0 || fd < 0 || set_oom_score_adj("-1000"))
		return 1;
	errno = 0;
	if (write(fd, "0", 1) != 1)
		return 2;
	kill(victim, SIGKILL);
	syscall(__NR_process_mrelease, pidfd, 0);
	return 0;
}

/* Touch memory that the tables freed by another process's exit would land in. */
static void churn(void)
{
	size_t len = 64UL << 20;
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p != MAP_FAILED)
		munmap(p, len);
}

/*
 * A holder dies in a full memory cgroup after process_mrelease() marked its mm
 * unstable, with a VMA boundary inside a shared table: neither the reaper nor
 * exit may need memory to let go of the table, and the table must outlive
 * them for the other holder.
 */
TEST_F_TIMEOUT(cow, exit_in_full_memcg, 300)
{
	const char *why = cg_make();
	int ready[2], go[2], round, st;
	pid_t victim, reaper;
	char c;

	if (why)
		SKIP(return, "%s", why);
	for (round = 0; round < 5; round++) {
		ASSERT_EQ(0, pipe(ready));
		ASSERT_EQ(0, pipe(go));
		victim = fork();
		ASSERT_GE(victim, 0);
		if (!victim) {
			close(ready[0]);
			close(go[1]);
			touch_stack();
			errno = 0;	/* its page too, before the group is full */
			/* The pipe's page too: a later write reuses it. */
			if (write(ready[1], "j", 1) != 1 ||
			    cg_write("cgroup.procs", "0") || set_oom_score_adj("-1000"))
				_exit(1);
			/* A VMA boundary that leaves the table shared. */
			if (madvise(self->area, PMD_SZ / 2, MADV_DONTDUMP))
				_exit(2);
			fill_cgroup();
			write(ready[1], "r", 1);
			read(go[0], &c, 1);
			_exit(3);
		}
		close(ready[1]);
		do {
			ASSERT_EQ(1, read(ready[0], &c, 1));
		} while (c != 'r');
		reaper = fork();
		ASSERT_GE(reaper, 0);
		if (!reaper)
			_exit(reap_in_cgroup(victim));
		ASSERT_EQ(reaper, waitpid(reaper, &st, 0));
		EXPECT_EQ(0, WEXITSTATUS(st));
		ASSERT_EQ(victim, waitpid(victim, &st, 0));
		EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL);
		close(ready[0]);
		close(go[0]);
		close(go[1]);
		churn();
		ASSERT_EQ(-1, check(self->area, AREA, 1)) {
			TH_LOG("round %d: a table this process maps was freed", round);
		}
	}
	rmdir(CGROUP);
}

/* The OOM reaper never copies shared tables: it cannot wait for memory. */
TEST_F(cow, reaper_allocates_nothing)
{
	int ready[2], st, pidfd;
	pid_t victim;
	char c;

	if (sysfs_long("fail_unshare", -1) < 0)
		SKIP(return, "no " SYSFS "fail_unshare (needs CONFIG_DEBUG_VM)");
	ASSERT_EQ(0, pipe(ready));
	victim = fork();
	ASSERT_GE(victim, 0);
	if (!victim) {
		close(ready[0]);
		if (madvise(self->area, PMD_SZ / 2, MADV_DONTDUMP))
			_exit(2);
		write(ready[1], "r", 1);
		pause();
		_exit(3);
	}
	close(ready[1]);
	ASSERT_EQ(1, read(ready[0], &c, 1));
	pidfd = syscall(__NR_pidfd_open, victim, 0);
	ASSERT_GE(pidfd, 0);
	ASSERT_EQ(0, sysfs_write("fail_unshare", "1000"));
	kill(victim, SIGKILL);
	syscall(__NR_process_mrelease, pidfd, 0);
	ASSERT_EQ(victim, waitpid(victim, &st, 0));
	EXPECT_EQ(1000, sysfs_long("fail_unshare", -1));
	ASSERT_EQ(0, sysfs_write("fail_unshare", "0"));
	close(pidfd);
	churn();
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

/*
 * Once the other holders have gone, the table is ordinary again for rmap:
 * memory cgroup reclaim swaps its pages out without anybody writing first.
 */
static int child_reclaim_after_share(char *unused)
{
	long swap0, swap1;
	char *a;
	int st;
	pid_t pid;

	if (cg_write("cgroup.procs", "0") || cg_write("memory.max", "max") ||
	    cg_write("memory.swap.max", "max"))
		return 1;
	a = map_area();
	if (!a)
		return 2;
	fill(a, AREA, 7);
	pid = fork();
	if (pid < 0)
		return 3;
	if (!pid)
		_exit(0);
	if (waitpid(pid, &st, 0) != pid)
		return 4;
	swap0 = status_kb(0, "VmSwap:");
	cg_write("memory.reclaim", "64M");
	swap1 = status_kb(0, "VmSwap:");
	if (swap1 - swap0 < (long)(AREA >> 10) * 9 / 10) {
		fprintf(stderr, "# VmSwap %ld -> %ld kB\n", swap0, swap1);
		return 5;
	}
	return check(a, AREA, 7) >= 0 ? 6 : 0;
}

TEST_F(cow, reclaim_after_share)
{
	const char *why = cg_make();
	char line[128];
	FILE *f = fopen("/proc/swaps", "r");
	int lines = 0;

	if (why)
		SKIP(return, "%s", why);
	while (f && fgets(line, sizeof(line), f))
		lines++;
	if (f)
		fclose(f);
	if (lines < 2) {
		rmdir(CGROUP);
		SKIP(return, "no swap");
	}
	EXPECT_EQ(0, in_child(child_reclaim_after_share, NULL));
	rmdir(CGROUP);
}

/* And pages migrate to another node once the child has gone. */
/* The first CPU of NUMA node NODE, or -1. */
static int node_cpu(int node)
{
	char path[64];
	int cpu = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/devices/system/node/node%d/cpulist", node);
	f = fopen(path, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &cpu) != 1)
		cpu = -1;
	fclose(f);
	return cpu;
}

static int pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

static long vmstat(const char *key)
{
	char line[128];
	size_t len = strlen(key);
	long val = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, len) && line[len] == ' ')
			val = strtol(line + len + 1, NULL, 10);
	fclose(f);
	return val;
}

#define NUMA_DEBUGFS	"/sys/kernel/debug/sched/numa_balancing/"

static int child_reads_area(char *a)
{
	long pte = status_kb(0, "VmPTE:");

	if (check(a, AREA, 1) >= 0)
		return 1;
	return status_kb(0, "VmPTE:") == pte ? 0 : 2;
}

/*
 * NUMA balancing marks pages on the other node as hinting entries; a read of
 * one faults. A fork that shares a table holding such entries must not leave
 * them to fault in a reader, which would unshare the table: reads keep sharing.
 */
TEST_F(cow, numa_hints_at_fork)
{
	static const char *const knobs[] = { "scan_delay_ms", "scan_period_min_ms" };
	char saved[2][32] = { "", "" }, path[128], bal[8] = "";
	int from = node_cpu(0), to = node_cpu(1), fd;
	long before, marked = 0;
	time_t end;
	unsigned int i;
	char *a;
	ssize_t n;

	if (from < 0 || to < 0)
		SKIP(return, "needs two NUMA nodes with CPUs");
	fd = open("/proc/sys/kernel/numa_balancing", O_RDONLY);
	n = fd < 0 ? -1 : read(fd, bal, sizeof(bal) - 1);
	if (fd >= 0)
		close(fd);
	if (n <= 0 || bal[0] != '1')
		SKIP(return, "NUMA balancing is off");
	/* Scan soon and often: the defaults wait a second of CPU time. */
	for (i = 0; i < 2; i++) {
		snprintf(path, sizeof(path), NUMA_DEBUGFS "%s", knobs[i]);
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, saved[i], sizeof(saved[i]) - 1);
		if (fd >= 0)
			close(fd);
		if (n <= 0)
			SKIP(goto restore, "no %s (debugfs)", path);
		saved[i][n] = 0;
		EXPECT_EQ(0, write_file(path, i ? "100" : "0"))
			goto restore;
	}
	a = map_area();
	EXPECT_NE(NULL, a)
		goto restore;
	/* The pages on one node, the task on the other. */
	EXPECT_EQ(0, pin(from))
		goto unmap;
	fill(a, AREA, 1);
	EXPECT_EQ(0, pin(to))
		goto unmap;
	before = vmstat("numa_pte_updates");
	for (end = time(NULL) + 60; time(NULL) < end && marked < (long)NPAGES; )
		marked = vmstat("numa_pte_updates") - before;
	if (marked < (long)NPAGES)
		SKIP(goto unmap, "NUMA balancing marked %ld pages in 60 s", marked);
	EXPECT_EQ(0, in_child(child_reads_area, a));
	EXPECT_EQ(-1, check(a, AREA, 1));
unmap:
	munmap(a, AREA);
restore:
	for (i = 0; i < 2; i++) {
		if (!saved[i][0])
			continue;
		snprintf(path, sizeof(path), NUMA_DEBUGFS "%s", knobs[i]);
		write_file(path, saved[i]);
	}
}

TEST_F(cow, migrate_after_share)
{
	void *pages[64];
	int nodes[64], status[64], i, moved = 0;

	if (access("/sys/devices/system/node/node1", F_OK))
		SKIP(return, "one NUMA node");
	EXPECT_EQ(0, in_child(child_exit, self->area));
	for (i = 0; i < 64; i++)
		pages[i] = self->area + i * (AREA / 64);
	/* Where each page is now; each goes to the other node. */
	ASSERT_EQ(0, syscall(__NR_move_pages, 0, 64, pages, NULL, status, 0));
	for (i = 0; i < 64; i++)
		nodes[i] = status[i] == 1 ? 0 : 1;
	EXPECT_EQ(0, syscall(__NR_move_pages, 0, 64, pages, nodes, status, MPOL_MF_MOVE)) {
		TH_LOG("move_pages: %s", strerror(errno));
	}
	for (i = 0; i < 64; i++)
		moved += status[i] == nodes[i];
	EXPECT_EQ(64, moved) {
		TH_LOG("page 0: status %d, wanted node %d", status[0], nodes[0]);
	}
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

/*
 * Random operations on both sides over several generations of forks, every
 * byte checked against a per-process model. COW_PTE_SEED picks the seed,
 * COW_PTE_SECONDS the time budget (default 20 s).
 */
#define MAXDEPTH	3
static unsigned char model[NPAGES];	/* fill value per page; 0 = zero/unmapped */
static bool mapped[NPAGES];
static uint64_t rng;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static int verify(char *a)
{
	for (size_t i = 0; i < NPAGES; i++) {
		const unsigned char *p = (unsigned char *)a + i * PG;

		if (!mapped[i])
			continue;
		for (size_t j = 0; j < PG; j += 512)
			if (p[j] != model[i])
				return 1;
	}
	return 0;
}

static int stress(char *a, int depth, time_t deadline)
{
	char *scratch = map_area();
	int kids = 0, st, ret = 0;

	if (!scratch)
		return 100;
	while (time(NULL) < deadline) {
		size_t i = next_rand() % NPAGES, n = 1 + next_rand() % 700;
		unsigned char v = 1 + next_rand() % 255;

		if (i + n > NPAGES)
			n = NPAGES - i;
		switch (next_rand() % 8) {
		case 0: case 1:		/* write */
			for (size_t k = i; k < i + n; k++)
				if (mapped[k]) {
					memset(a + k * PG, v, PG);
					model[k] = v;
				}
			break;
		case 2:			/* munmap, then map zeroes back */
			if (munmap(a + i * PG, n * PG))
				return 101;
			if (mmap(a + i * PG, n * PG, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == MAP_FAILED)
				return 102;
			memset(model + i, 0, n);
			break;
		case 3:			/* mprotect read-only and back */
			if (mprotect(a + i * PG, n * PG, PROT_READ))
				return 103;
			if (verify(a))
				return 104;
			if (mprotect(a + i * PG, n * PG, PROT_READ | PROT_WRITE))
				return 105;
			break;
		case 4:			/* MADV_DONTNEED */
			if (madvise(a + i * PG, n * PG, MADV_DONTNEED))
				return 106;
			memset(model + i, 0, n);
			break;
		case 5:			/* mremap away and back */
			if (mremap(a + i * PG, n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
				   scratch) != scratch) {
				/* Only one VMA moves: EFAULT across a boundary. */
				if (errno != EFAULT)
					return 107;
				break;
			}
			if (mremap(scratch, n * PG, n * PG, MREMAP_MAYMOVE | MREMAP_FIXED,
				   a + i * PG) != a + i * PG)
				return 108;
			break;
		case 6:			/* fork a generation */
			if (depth >= MAXDEPTH || kids >= 2)
				break;
			kids++;
			fflush(NULL);
			switch (fork()) {
			case -1:
				return 109;
			case 0:
				next_rand();	/* the child takes another path */
				rng += 0x9e3779b97f4a7c15ULL * (depth + kids);
				_exit(stress(a, depth + 1, deadline));
			}
			break;
		default:
			if (verify(a))
				return 110;
		}
	}
	while (kids--) {
		if (wait(&st) < 0)
			return 111;
		if (!WIFEXITED(st) || WEXITSTATUS(st))
			ret = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	}
	return ret ? ret : verify(a) ? 112 : 0;
}

TEST_F_TIMEOUT(cow, stress, 600)
{
	const char *s = getenv("COW_PTE_SEED"), *t = getenv("COW_PTE_SECONDS");
	uint64_t seed = s ? strtoull(s, NULL, 0) : 0x5eed0003;
	int secs = t ? atoi(t) : 20;
	pid_t pid;
	int st;

	TH_LOG("seed %#llx, %d s (COW_PTE_SEED, COW_PTE_SECONDS)",
	       (unsigned long long)seed, secs);
	rng = seed | 1;
	for (size_t i = 0; i < NPAGES; i++) {
		model[i] = (unsigned char)((1 + i) & 0xff);
		mapped[i] = true;
	}
	/* Pages whose fill value is 0 read as zero, as the model says. */
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(stress(self->area, 0, time(NULL) + secs));
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
	EXPECT_EQ(-1, check(self->area, AREA, 1));
}

int main(int argc, char **argv)
{
	if (argc == 2 && !strcmp(argv[1], EXEC_ARG))
		return exec_report();
	return test_harness_run(argc, argv);
}
