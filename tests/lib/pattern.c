// SPDX-License-Identifier: GPL-2.0
/*
 * Pattern memory: clean pages read as the pattern, written pages are private,
 * MADV_DONTNEED brings the pattern back, fork keeps it all; on every backend the
 * kernel allows (the kernel backend SKIPs without reference pages), and errors.
 * The kernel backend's fd cache: one reference page per pattern however many
 * mappings, threads or forks use it (the kernel's count of live pages says so).
 * What the library does where reference pages cannot serve: PROT_EXEC, a seccomp
 * filter refusing the call, an ia32 or x32 build; and what a pattern mapping
 * refuses as a file mapping (names, MADV_WIPEONFORK, userfaultfd write watch),
 * beside what the emulation's tiles allow.
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <time.h>

#include "helpers.h"
#include "harness.h"

static const unsigned char pat8[8] = { 0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04 };

/* Every byte of [p, p + len) is the pattern, repeated from p's page start. */
static int is_pattern(const unsigned char *p, size_t len, const unsigned char *pat,
		      size_t plen)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat[i % plen])
			return 0;
	return 1;
}

#define REFPAGE_PAGES "/sys/kernel/mm/refpage/pages"

/* Reference pages alive in the whole system, or -1 without the kernel's count. */
static long refpages_alive(void)
{
	FILE *f = fopen(REFPAGE_PAGES, "r");
	long n = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &n) != 1)
		n = -1;
	fclose(f);
	return n;
}

/* SKIP without reference pages or the kernel's count of them; else read the count. */
#define REQUIRE_REFPAGE_COUNT(before)						\
	do {									\
		REQUIRE_FEATURE(MMEXT_FEAT_REFPAGE);				\
		(before) = refpages_alive();					\
		if ((before) < 0)						\
			SKIP(return, "no " REFPAGE_PAGES " on this kernel");	\
	} while (0)

FIXTURE(pattern) {
	struct mmext_pattern *p;
	unsigned char *addr;
	size_t psz, len;
	int backend;		/* the handle's, read in the parent */
};

FIXTURE_VARIANT(pattern) {
	uint32_t backend;
	uint64_t tile_pages;
};

FIXTURE_VARIANT_ADD(pattern, emulated) { .backend = MMEXT_PATTERN_EMULATED };
FIXTURE_VARIANT_ADD(pattern, emulated_small_tiles) {
	.backend = MMEXT_PATTERN_EMULATED, .tile_pages = 3,
};
FIXTURE_VARIANT_ADD(pattern, kernel) { .backend = MMEXT_PATTERN_KERNEL };
FIXTURE_VARIANT_ADD(pattern, automatic) { .backend = MMEXT_PATTERN_AUTO };

FIXTURE_SETUP(pattern)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = variant->backend,
		   .tile_pages = variant->tile_pages);

	self->psz = t_psz();
	self->len = 16 * self->psz;
	if (variant->backend == MMEXT_PATTERN_KERNEL)
		REQUIRE_FEATURE(MMEXT_FEAT_REFPAGE);
	ASSERT_EQ(0, mmext_pattern_map(pat8, sizeof(pat8), self->len, &o, &self->p));
	self->addr = mmext_pattern_addr(self->p);
	ASSERT_NE(NULL, self->addr);
	ASSERT_EQ(self->len, mmext_pattern_len(self->p));
	self->backend = mmext_pattern_backend(self->p);
}

FIXTURE_TEARDOWN(pattern)
{
	mmext_pattern_unmap(self->p);
}

/*
 * Parts unmapped or moved away are no longer the handle's: a reset or unmap leaves
 * alone what is mapped there since, and still acts on the parts left in place.
 */
TEST_F(pattern, reset_and_unmap_skip_memory_mapped_since)
{
	size_t psz = self->psz;
	unsigned char *a = self->addr, *moved, *hole, *old, *spot;

	a[0] = 7;
	a[12 * psz] = 7;
	hole = a + 4 * psz;
	ASSERT_EQ(0, munmap(hole, 4 * psz));
	ASSERT_EQ(hole, mmap(hole, 4 * psz, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	strcpy((char *)hole, "kept");
	spot = (unsigned char *)t_hole(psz);
	ASSERT_NE(NULL, spot);
	/* One page: before Linux 6.17 a move cannot span the mappings of two tiles. */
	old = a + 8 * psz;
	moved = mremap(old, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED, spot);
	ASSERT_EQ(spot, moved);
	ASSERT_EQ(old, mmap(old, psz, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0));
	strcpy((char *)old, "kept");

	EXPECT_EQ(-ENOMEM, mmext_pattern_reset(self->p, a, self->len));
	EXPECT_STREQ("kept", (char *)hole);
	EXPECT_STREQ("kept", (char *)old);
	EXPECT_TRUE(is_pattern(a, 4 * psz, pat8, sizeof(pat8)));
	EXPECT_TRUE(is_pattern(a + 9 * psz, 7 * psz, pat8, sizeof(pat8)));
	EXPECT_TRUE(is_pattern(moved, psz, pat8, sizeof(pat8)));

	mmext_pattern_unmap(self->p);
	self->p = NULL;
	EXPECT_STREQ("kept", (char *)hole);
	EXPECT_STREQ("kept", (char *)old);
	EXPECT_EQ(-1, msync(a, psz, MS_ASYNC));
	EXPECT_EQ(-1, msync(a + 9 * psz, 7 * psz, MS_ASYNC));
	EXPECT_EQ(0, msync(moved, psz, MS_ASYNC));
	munmap(hole, 4 * psz);
	munmap(old, psz);
	munmap(moved, psz);
}

/* The fds of this process's maps (the library's): their numbers in fd[], their count. */
static int maps_fds(pid_t pid, int *fd, int max)
{
	char link[128], want[64];
	struct dirent *e;
	int n = 0;
	DIR *d = opendir("/proc/self/fd");

	if (!d)
		return -1;
	snprintf(want, sizeof(want), "/proc/%d/maps", pid);
	while ((e = readdir(d)) && n < max) {
		ssize_t len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);

		if (len < 0)
			continue;
		link[len] = 0;
		if (!strcmp(link, want) && atoi(e->d_name) != dirfd(d))
			fd[n++] = atoi(e->d_name);
	}
	closedir(d);
	return n;
}

static bool fd_is(int fd, const char *path)
{
	char proc[64], link[128];
	ssize_t len;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	len = readlink(proc, link, sizeof(link) - 1);
	if (len < 0)
		return false;
	link[len] = 0;
	return !strcmp(link, path);
}

/*
 * A program that closes fds it did not open (closefrom()) and opens others in their
 * place, here another process's maps, where the mapping is not: unmap still finds it
 * in its own, and leaves the program's new fds alone.
 */
TEST_F(pattern, unmap_after_the_maps_fd_was_closed)
{
	int fd[4], n, i, other;
	char path[64];

	ASSERT_EQ(0, mmext_pattern_reset(self->p, self->addr, self->psz));
	n = maps_fds(getpid(), fd, 4);
	ASSERT_LT(0, n);
	snprintf(path, sizeof(path), "/proc/%d/maps", getppid());
	other = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, other);
	for (i = 0; i < n; i++)
		ASSERT_EQ(fd[i], dup3(other, fd[i], O_CLOEXEC));
	mmext_pattern_unmap(self->p);
	self->p = NULL;
	EXPECT_EQ(-1, msync(self->addr, self->len, MS_ASYNC));
	for (i = 0; i < n; i++) {
		EXPECT_TRUE(fd_is(fd[i], path));
		close(fd[i]);
	}
	close(other);
}

static int child_unmaps_its_copy(void *arg)
{
	FIXTURE_DATA(pattern) *self = arg;
	int fd;

	mmext_pattern_unmap(self->p);
	if (msync(self->addr, self->len, MS_ASYNC) != -1)
		return 1;
	return maps_fds(getppid(), &fd, 1) ? 2 : 0;	/* the parent's, inherited */
}

static int child_unmaps_what_replaced_it(void *arg)
{
	FIXTURE_DATA(pattern) *self = arg;
	unsigned char *a = self->addr;

	if (munmap(a, self->len) ||
	    mmap(a, self->len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0) != a)
		return 1;
	strcpy((char *)a, "kept");
	mmext_pattern_unmap(self->p);
	return strcmp((char *)a, "kept") ? 2 : 0;	/* SIGSEGV if unmapped */
}

/*
 * A fork child's lookups read the child's maps, not the parent's through the fd it
 * inherited, which it closes: it unmaps its copy, and leaves alone what replaced its
 * copy although the parent's is still there.
 */
TEST_F(pattern, fork_child_reads_its_own_maps)
{
	ASSERT_EQ(0, mmext_pattern_reset(self->p, self->addr, self->psz));
	EXPECT_TRUE(t_in_child(child_unmaps_its_copy, self));
	EXPECT_TRUE(t_in_child(child_unmaps_what_replaced_it, self));
	EXPECT_EQ(0, msync(self->addr, self->len, MS_ASYNC));
}

TEST_F(pattern, backend_is_reported)
{
	int b = mmext_pattern_backend(self->p);

	if (variant->backend == MMEXT_PATTERN_AUTO) {
		struct mmext_feature_status st;

		ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_REFPAGE, &st));
		EXPECT_EQ(st.available ? MMEXT_PATTERN_KERNEL : MMEXT_PATTERN_EMULATED, b);
	} else {
		EXPECT_EQ(variant->backend, b);
	}
}

TEST_F(pattern, clean_pages_read_as_pattern)
{
	EXPECT_TRUE(is_pattern(self->addr, self->len, pat8, sizeof(pat8)));
}

TEST_F(pattern, writes_are_private_to_their_page)
{
	self->addr[5 * self->psz + 3] = 0x55;
	EXPECT_EQ(0x55, self->addr[5 * self->psz + 3]);
	EXPECT_TRUE(is_pattern(self->addr, 5 * self->psz, pat8, sizeof(pat8)));
	EXPECT_TRUE(is_pattern(self->addr + 6 * self->psz, 10 * self->psz, pat8, sizeof(pat8)));
	/* The rest of the written page kept the pattern (copy on write). */
	EXPECT_TRUE(is_pattern(self->addr + 5 * self->psz, 3, pat8, sizeof(pat8)));
}

TEST_F(pattern, two_mappings_are_independent)
{
	static const unsigned char one = 0x7e;
	struct mmext_pattern *q;
	unsigned char *b;

	ASSERT_EQ(0, mmext_pattern_map(&one, 1, self->psz, NULL, &q));
	b = mmext_pattern_addr(q);
	b[0] = 1;
	self->addr[0] = 2;
	EXPECT_EQ(1, b[0]);
	EXPECT_TRUE(is_pattern(b + 1, self->psz - 1, &one, 1));
	EXPECT_EQ(2, self->addr[0]);
	mmext_pattern_unmap(q);
}

TEST_F(pattern, dontneed_restores_the_pattern)
{
	memset(self->addr + 2 * self->psz, 0, 4 * self->psz);
	ASSERT_EQ(0, mmext_pattern_reset(self->p, self->addr + 2 * self->psz, 2 * self->psz));
	EXPECT_TRUE(is_pattern(self->addr + 2 * self->psz, 2 * self->psz, pat8, sizeof(pat8)));
	/* Outside the reset range the writes stay. */
	EXPECT_EQ(0, self->addr[4 * self->psz]);
	/* Plain madvise does the same. */
	ASSERT_EQ(0, madvise(self->addr + 4 * self->psz, 2 * self->psz, MADV_DONTNEED));
	EXPECT_TRUE(is_pattern(self->addr, self->len, pat8, sizeof(pat8)));
}

static int child_sees_pattern_and_own_writes(void *arg)
{
	FIXTURE_DATA(pattern) *self = arg;

	if (self->addr[0] != 0x11 || !is_pattern(self->addr + 8, self->psz - 8, pat8, 8) ||
	    !is_pattern(self->addr + self->psz, self->len - self->psz, pat8, 8))
		return 1;
	self->addr[self->psz] = 0x22;	/* must not reach the parent */
	madvise(self->addr, self->psz, MADV_DONTNEED);
	return self->addr[0] == pat8[0] ? 0 : 2;
}

TEST_F(pattern, fork_keeps_the_semantics)
{
	self->addr[0] = 0x11;
	ASSERT_TRUE(t_in_child(child_sees_pattern_and_own_writes, self));
	EXPECT_EQ(0x11, self->addr[0]);
	EXPECT_TRUE(is_pattern(self->addr + self->psz, self->len - self->psz, pat8, 8));
}

/* The kernel backend's page count, or -2 (not checked) for the emulation. */
static long alive_if_kernel(int backend)
{
	return backend == MMEXT_PATTERN_KERNEL ? refpages_alive() : -2;
}

TEST_F(pattern, repeats_share_one_page)
{
	static const unsigned char a[4] = { 1, 2, 3, 4 }, b[4] = { 5, 6, 7, 8 };
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = variant->backend,
		   .tile_pages = variant->tile_pages);
	long before = alive_if_kernel(self->backend);
	struct mmext_pattern *p[16], *q;
	unsigned char *x;
	int i;

	if (before == -1)
		SKIP(return, "no " REFPAGE_PAGES " on this kernel");
	for (i = 0; i < 16; i++) {
		ASSERT_EQ(0, mmext_pattern_map(a, 4, 4 * self->psz, &o, &p[i]));
		ASSERT_TRUE(is_pattern(mmext_pattern_addr(p[i]), 4 * self->psz, a, 4));
	}
	if (before >= 0)
		EXPECT_EQ(before + 1, refpages_alive());
	/* Another pattern gets a page of its own. */
	ASSERT_EQ(0, mmext_pattern_map(b, 4, self->psz, &o, &q));
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(q), self->psz, b, 4));
	if (before >= 0)
		EXPECT_EQ(before + 2, refpages_alive());
	/* Writes and unmaps of some mappings leave the shared page to the others. */
	x = mmext_pattern_addr(p[1]);
	memset(x, 0x33, 2 * self->psz);
	mmext_pattern_unmap(p[0]);
	mmext_pattern_unmap(p[1]);
	for (i = 2; i < 16; i++)
		EXPECT_TRUE(is_pattern(mmext_pattern_addr(p[i]), 4 * self->psz, a, 4));
	ASSERT_EQ(0, mmext_pattern_map(a, 4, 4 * self->psz, &o, &p[0]));
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(p[0]), 4 * self->psz, a, 4));
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(q), self->psz, b, 4));
	for (i = 0; i < 16; i++)
		if (i != 1)
			mmext_pattern_unmap(p[i]);
	mmext_pattern_unmap(q);
	/* The cache keeps both pages after their last mapping (documented). */
	if (before >= 0)
		EXPECT_EQ(before + 2, refpages_alive());
}

#define THREADS	6
#define THREAD_MAPS 8

struct thread_arg {
	const struct mmext_pattern_opts *o;
	const unsigned char *pat;
	size_t psz;
	int ok;
	struct mmext_pattern *p[THREAD_MAPS];
};

/* Map the pattern repeatedly, write the first page of each mapping, check the rest. */
static void *map_in_thread(void *arg)
{
	struct thread_arg *t = arg;
	unsigned char *x;
	int i;

	for (i = 0; i < THREAD_MAPS; i++) {
		if (mmext_pattern_map(t->pat, 8, 3 * t->psz, t->o, &t->p[i]))
			return NULL;
		x = mmext_pattern_addr(t->p[i]);
		memset(x, i, t->psz);
		if (!is_pattern(x + t->psz, 2 * t->psz, t->pat, 8))
			return NULL;
	}
	t->ok = 1;
	return NULL;
}

TEST_F(pattern, threads_share_one_page_per_pattern)
{
	static const unsigned char pats[2][8] = { { 9, 8, 7, 6, 5, 4, 3, 2 },
						  { 0x10, 0x20, 0x30, 0x40, 0x50, 0x60, 0x70, 0x80 } };
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = variant->backend,
		   .tile_pages = variant->tile_pages);
	long before = alive_if_kernel(self->backend);
	struct thread_arg t[THREADS];
	pthread_t th[THREADS];
	unsigned char *x;
	int i, j;

	if (before == -1)
		SKIP(return, "no " REFPAGE_PAGES " on this kernel");
	for (i = 0; i < THREADS; i++) {
		t[i] = (struct thread_arg){ .o = &o, .pat = pats[i % 2], .psz = self->psz };
		ASSERT_EQ(0, pthread_create(&th[i], NULL, map_in_thread, &t[i]));
	}
	for (i = 0; i < THREADS; i++)
		ASSERT_EQ(0, pthread_join(th[i], NULL));
	for (i = 0; i < THREADS; i++)
		EXPECT_TRUE(t[i].ok);
	if (before >= 0)
		EXPECT_EQ(before + 2, refpages_alive());
	for (i = 0; i < THREADS; i++) {
		for (j = 0; t[i].ok && j < THREAD_MAPS; j++) {
			x = mmext_pattern_addr(t[i].p[j]);
			EXPECT_TRUE(x[0] == j && x[self->psz - 1] == j);
			EXPECT_TRUE(is_pattern(x + self->psz, 2 * self->psz, pats[i % 2], 8));
			mmext_pattern_unmap(t[i].p[j]);
		}
	}
}

static int child_maps_without_a_new_page(void *arg)
{
	FIXTURE_DATA(pattern) *self = arg;
	long before = alive_if_kernel(self->backend);
	struct mmext_pattern *q;
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = self->backend);
	int ret;

	if (mmext_pattern_map(pat8, 8, 2 * self->psz, &o, &q))
		return 1;
	ret = is_pattern(mmext_pattern_addr(q), 2 * self->psz, pat8, 8) ? 0 : 2;
	if (before >= 0 && refpages_alive() != before)
		ret = 3;
	mmext_pattern_unmap(q);
	return ret;
}

/* The child inherits the cached fd: its maps of the same pattern use the same page. */
TEST_F(pattern, fork_child_uses_the_cached_page)
{
	ASSERT_TRUE(t_in_child(child_maps_without_a_new_page, self));
}

/* Nine patterns in turn miss the 8-slot cache every time: the lock is held longest. */
static void *map_unmap_loop(void *arg)
{
	volatile int *stop = arg;
	struct mmext_pattern *q;
	unsigned char c;

	for (c = 0; !*stop; c = (c + 1) % 9)
		if (!mmext_pattern_map(&c, 1, t_psz(), NULL, &q))
			mmext_pattern_unmap(q);
	return NULL;
}

static int child_maps_in_time(void *arg)
{
	struct mmext_pattern *q;

	alarm(10);	/* a cache lock inherited locked would hang here */
	if (mmext_pattern_map(pat8, 8, t_psz(), NULL, &q))
		return 1;
	mmext_pattern_unmap(q);
	return 0;
}

/*
 * Forks while another thread maps: the child's first map must not deadlock. A lock
 * the child would wait for fails this only when a fork lands inside it: often with
 * the kernel backend (refpage_create() under it), rarely with the emulation.
 */
TEST(fork_while_another_thread_maps)
{
	T_EXPECT_FORKS_OK(t_fork_while(map_unmap_loop, child_maps_in_time));
}

/* AUTO tries the kernel backend first: the cache's lock, then the probe's marker. */
static void map_auto(void)
{
	struct mmext_pattern *q;

	if (!mmext_pattern_map(pat8, 8, t_psz(), NULL, &q))
		mmext_pattern_unmap(q);
}

static int child_maps(void)
{
	struct mmext_pattern *q;
	int ret;

	/* So that its own probe of the marker does not wait for it either. */
	if (unlink(MMEXT_REFPAGE_SYSFS))
		return 1;
	if (mmext_pattern_map(pat8, 8, 2 * t_psz(), NULL, &q))
		return 2;
	ret = is_pattern(mmext_pattern_addr(q), 2 * t_psz(), pat8, 8) ? 0 : 3;
	mmext_pattern_unmap(q);
	return ret;
}

/*
 * A thread stuck inside a map (in the probe of reference pages, under the cache's
 * lock) while another forks: the fork goes ahead and the child maps.
 */
TEST(fork_while_a_map_is_stuck)
{
	struct t_while_stuck w = { MMEXT_REFPAGE_SYSFS, map_auto, child_maps };

	T_EXPECT_CHILD_OK(t_child_status(t_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

/*
 * The kernel backend alone: the cache's lock, then the probe's marker, and no other
 * system call that is a cancellation point (a sanitizer's stack checks take a thread
 * cancelled through the library's frames for a stack overflow).
 */
static void map_kernel(void)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *q;

	if (!mmext_pattern_map(pat8, 8, t_psz(), &o, &q))
		mmext_pattern_unmap(q);
}

/*
 * A thread cancelled inside a map (at the read() of the probe's blocking marker, under
 * the cache's lock): the process's next map goes ahead.
 */
TEST(thread_cancelled_inside_a_map)
{
	struct t_while_stuck w = { MMEXT_REFPAGE_SYSFS, map_kernel, child_maps };

	T_EXPECT_CHILD_OK(t_child_status(t_cancel_while_stuck, &w),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

static int exit_while_stuck_mapping(void *arg)
{
	struct t_stuck s = { .call = map_auto };

	(void)arg;
	alarm(10);
	if (t_blocking_marker(MMEXT_REFPAGE_SYSFS) < 0)
		return T_NO_STANDIN;
	mmext_probe_reset();
	if (t_stuck_start(&s))
		return T_NOT_STUCK;
	/* Runs the library's destructors, if it has any, with the thread still inside. */
	exit(0);
}

/* exit() while another thread is inside a map: the process ends, now. */
TEST(exit_while_a_map_is_stuck)
{
	T_EXPECT_CHILD_OK(t_child_status(exit_while_stuck_mapping, NULL),
			  "cannot stand a marker file in (needs root and mount namespaces)");
}

TEST_F(pattern, reset_bad_input)
{
	EXPECT_EQ(-EINVAL, mmext_pattern_reset(self->p, self->addr + 1, self->psz));
	EXPECT_EQ(-EINVAL, mmext_pattern_reset(self->p, self->addr, 0));
	EXPECT_EQ(-EINVAL, mmext_pattern_reset(self->p, self->addr, self->len + self->psz));
	EXPECT_EQ(-EINVAL, mmext_pattern_reset(self->p, self->addr - self->psz, self->psz));
	EXPECT_EQ(-EINVAL, mmext_pattern_reset(self->p, self->addr, (size_t)-self->psz));
	EXPECT_EQ(-EFAULT, mmext_pattern_reset(NULL, self->addr, self->psz));
}

/* The emulation's VMA count is one per tile, as documented. */
TEST(emulated_vma_count_follows_tiles)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_EMULATED, .tile_pages = 4);
	size_t psz = t_psz();
	struct mmext_pattern *p;
	struct mmext_maps *m;
	struct mmext_vma v;
	uintptr_t a, end;
	int vmas = 0;

	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, 10 * psz, &o, &p));
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	end = (uintptr_t)mmext_pattern_addr(p) + mmext_pattern_len(p);
	for (a = (uintptr_t)mmext_pattern_addr(p); a < end; a = v.end) {
		ASSERT_EQ(0, mmext_maps_find(m, a, 0, &v));
		EXPECT_NE(NULL, strstr(v.name, "mmext-pattern"));
		vmas++;
	}
	EXPECT_EQ(3, vmas);	/* 4 + 4 + 2 pages */
	mmext_maps_close(m);
	mmext_pattern_unmap(p);
}

/*
 * Under an RLIMIT_FSIZE below the tile the emulation maps smaller tiles, and below
 * a page it fails: the kernel's SIGXFSZ for a memfd past the limit kills by default.
 */
static int child_maps_under_fsize_limit(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_EMULATED);
	struct rlimit rl = { .rlim_cur = 1 << 20, .rlim_max = RLIM_INFINITY };
	size_t psz = t_psz(), len = 8 << 20, i;
	struct mmext_pattern *p;
	char *a;

	(void)arg;
	if (setrlimit(RLIMIT_FSIZE, &rl) || mmext_pattern_map(pat8, 8, len, &o, &p))
		return 1;
	a = mmext_pattern_addr(p);
	for (i = 0; i < len; i += psz)
		if (memcmp(a + i, pat8, 8))
			return 2;
	mmext_pattern_unmap(p);
	rl.rlim_cur = psz - 1;
	if (setrlimit(RLIMIT_FSIZE, &rl) || mmext_pattern_map(pat8, 8, len, &o, &p) != -EFBIG)
		return 3;
	return 0;
}

TEST(emulated_respects_file_size_limit)
{
	int status = t_child_status(child_maps_under_fsize_limit, NULL);

	ASSERT_NE(-1, status);
	EXPECT_FALSE(WIFSIGNALED(status)) TH_LOG("killed by signal %d", WTERMSIG(status));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x", status);
}

/*
 * The library's memfd_create(): the system call, unless a test sets memfd_dir, where
 * an unlinked file stands in for the memfd (a file on a small tmpfs runs out of room
 * as a memfd does at the commit limit under vm.overcommit_memory=2).
 */
static const char *memfd_dir;

int memfd_create(const char *name, unsigned int flags)
{
	char path[256];
	int fd;

	if (!memfd_dir)
		return syscall(SYS_memfd_create, name, flags);
	snprintf(path, sizeof(path), "%s/memfd", memfd_dir);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0)
		unlink(path);
	return fd;
}

/* A tile the memfd has no room for: the map fails, and no SIGBUS kills the caller. */
static int child_maps_without_room(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_EMULATED);
	struct mmext_pattern *p;
	int ret;

	(void)arg;
	alarm(10);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, "size=64k"))
		return T_NO_STANDIN;
	memfd_dir = "/sys/kernel/mm";
	ret = mmext_pattern_map(pat8, 8, 4 << 20, &o, &p);
	if (ret != -ENOMEM) {
		fprintf(stderr, "#      map: %d\n", ret);
		return 1;
	}
	return 0;
}

TEST(emulated_memfd_out_of_room_is_enomem)
{
	T_EXPECT_CHILD_OK(t_child_status(child_maps_without_room, NULL),
			  "cannot mount a small tmpfs (needs root and mount namespaces)");
}

TEST(full_page_pattern)
{
	size_t psz = t_psz(), i;
	unsigned char *pat = malloc(psz), *a;
	struct mmext_pattern *p;

	ASSERT_NE(NULL, pat);
	for (i = 0; i < psz; i++)
		pat[i] = i * 7 + 3;
	ASSERT_EQ(0, mmext_pattern_map(pat, psz, 3 * psz, NULL, &p));
	a = mmext_pattern_addr(p);
	for (i = 0; i < 3; i++)
		EXPECT_EQ(0, memcmp(a + i * psz, pat, psz));
	mmext_pattern_unmap(p);
	free(pat);
}

TEST(read_only_mapping)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .prot = PROT_READ);
	static const unsigned char z = 0x42;
	struct mmext_pattern *p;
	struct mmext_maps *m;
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_pattern_map(&z, 1, t_psz(), &o, &p));
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)mmext_pattern_addr(p), 0, &v));
	EXPECT_EQ(MMEXT_VMA_READ, v.prot);
	EXPECT_EQ(0x42, *(unsigned char *)mmext_pattern_addr(p));
	mmext_maps_close(m);
	mmext_pattern_unmap(p);
}

TEST(map_bad_input)
{
	MMEXT_OPTS(mmext_pattern_opts, bad_backend, .backend = 3);
	MMEXT_OPTS(mmext_pattern_opts, bad_prot, .prot = 0x100);
	MMEXT_OPTS(mmext_pattern_opts, huge_tile, .tile_pages = UINT64_MAX);
	MMEXT_OPTS(mmext_pattern_opts, bad_flags, .flags = 2);
	T_OPTS_TAIL(mmext_pattern_opts) big;
	size_t psz = t_psz();
	struct mmext_pattern *p = NULL;
	unsigned char pat[3] = { 1, 2, 3 };

	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 3, psz, NULL, &p));	/* not a power of 2 */
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 0, psz, NULL, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 2 * psz, psz, NULL, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, 0, NULL, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, SIZE_MAX, NULL, &p));
	EXPECT_EQ(-EFAULT, mmext_pattern_map(NULL, 1, psz, NULL, &p));
	EXPECT_EQ(-EFAULT, mmext_pattern_map(pat, 1, psz, NULL, NULL));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, psz, &bad_backend, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, psz, &bad_prot, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, psz, &huge_tile, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, psz, &bad_flags, &p));
	/* Larger than the address space can hold. */
	EXPECT_EQ(-ENOMEM, mmext_pattern_map(pat, 1, SIZE_MAX / 16 * 15, NULL, &p));
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail = 2;
	EXPECT_EQ(-E2BIG, mmext_pattern_map(pat, 1, psz, &big.o, &p));
	big.o.sz = 0;
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat, 1, psz, &big.o, &p));
	EXPECT_EQ(NULL, p);
	EXPECT_EQ(NULL, mmext_pattern_addr(NULL));
	EXPECT_EQ(0, mmext_pattern_len(NULL));
	EXPECT_EQ(-EINVAL, mmext_pattern_backend(NULL));
	mmext_pattern_unmap(NULL);
}

/* NOCACHE: a page of the mapping's own, freed with it. */
TEST(kernel_nocache_page_goes_with_the_mapping)
{
	static const unsigned char c[2] = { 0x5a, 0xa5 };
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL,
		   .flags = MMEXT_PATTERN_NOCACHE);
	struct mmext_pattern *p, *q;
	long before;

	REQUIRE_REFPAGE_COUNT(before);
	ASSERT_EQ(0, mmext_pattern_map(c, 2, 2 * t_psz(), &o, &p));
	ASSERT_EQ(0, mmext_pattern_map(c, 2, 2 * t_psz(), &o, &q));
	EXPECT_EQ(before + 2, refpages_alive());
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(p), 2 * t_psz(), c, 2));
	mmext_pattern_unmap(p);
	mmext_pattern_unmap(q);
	EXPECT_EQ(before, refpages_alive());
}

/* The same bytes at another length are another key (documented). */
TEST(kernel_pattern_len_is_part_of_the_key)
{
	static const unsigned char d[4] = { 0x77, 0x77, 0x77, 0x77 };
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p, *q;
	long before;

	REQUIRE_REFPAGE_COUNT(before);
	ASSERT_EQ(0, mmext_pattern_map(d, 1, t_psz(), &o, &p));
	ASSERT_EQ(0, mmext_pattern_map(d, 4, t_psz(), &o, &q));
	EXPECT_EQ(before + 2, refpages_alive());
	mmext_pattern_unmap(p);
	mmext_pattern_unmap(q);
}

/*
 * Eight patterns fill the cache; with every mapping kept, a miss shows as a new
 * page, so the page count tells hits from misses and LRU from insertion order.
 */
TEST(kernel_cache_evicts_least_recently_used)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p[12];
	unsigned char pat[9];
	long before;
	int i, n = 0;

	REQUIRE_REFPAGE_COUNT(before);
	for (i = 0; i < 9; i++)
		pat[i] = 0xc0 + i;
	for (i = 0; i < 8; i++)
		ASSERT_EQ(0, mmext_pattern_map(&pat[i], 1, t_psz(), &o, &p[n++]));
	EXPECT_EQ(before + 8, refpages_alive());
	/* Pattern 0 used again: a hit, and now the most recently used. */
	ASSERT_EQ(0, mmext_pattern_map(&pat[0], 1, t_psz(), &o, &p[n++]));
	EXPECT_EQ(before + 8, refpages_alive());
	/* Pattern 8 evicts pattern 1, the least recently used (not 0, the first in). */
	ASSERT_EQ(0, mmext_pattern_map(&pat[8], 1, t_psz(), &o, &p[n++]));
	EXPECT_EQ(before + 9, refpages_alive());
	ASSERT_EQ(0, mmext_pattern_map(&pat[0], 1, t_psz(), &o, &p[n++]));
	EXPECT_EQ(before + 9, refpages_alive());
	ASSERT_EQ(0, mmext_pattern_map(&pat[1], 1, t_psz(), &o, &p[n++]));
	EXPECT_EQ(before + 10, refpages_alive());
	for (i = 0; i < n; i++) {
		EXPECT_EQ(pat[i < 8 ? i : i == 9 ? 8 : i == 11 ? 1 : 0],
			  *(unsigned char *)mmext_pattern_addr(p[i]));
		mmext_pattern_unmap(p[i]);
	}
	/* What stays is what the cache holds: eight pages. */
	EXPECT_EQ(before + 8, refpages_alive());
}

/* Each cached pattern holds one close-on-exec fd of the reference page. */
TEST(kernel_cached_fd_is_cloexec)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p;
	char link[64];
	struct dirent *e;
	int n = 0, fd;
	DIR *d;

	REQUIRE_FEATURE(MMEXT_FEAT_REFPAGE);
	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, t_psz(), &o, &p));
	mmext_pattern_unmap(p);
	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, t_psz(), &o, &p));
	d = opendir("/proc/self/fd");
	ASSERT_NE(NULL, d);
	while ((e = readdir(d))) {
		ssize_t len;

		len = readlinkat(dirfd(d), e->d_name, link, sizeof(link) - 1);
		if (len < 0)
			continue;
		link[len] = 0;
		if (strcmp(link, "anon_inode:[refpage]"))
			continue;
		n++;
		fd = atoi(e->d_name);
		EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
	}
	closedir(d);
	EXPECT_EQ(1, n);
	mmext_pattern_unmap(p);
}

/* A caller built before flags existed passes the shorter struct: still accepted. */
TEST(options_without_flags)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .prot = PROT_READ);
	struct mmext_pattern *p;

	o.sz = offsetof(struct mmext_pattern_opts, flags);
	o.flags = MMEXT_PATTERN_NOCACHE;	/* beyond sz: never read */
	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, t_psz(), &o, &p));
	EXPECT_EQ(pat8[0], *(unsigned char *)mmext_pattern_addr(p));
	mmext_pattern_unmap(p);
}

TEST(kernel_backend_forced_without_support)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p = NULL;

	REQUIRE_NO_FEATURE(MMEXT_FEAT_REFPAGE);
	EXPECT_EQ(-EOPNOTSUPP, mmext_pattern_map(pat8, 8, t_psz(), &o, &p));
	EXPECT_EQ(NULL, p);
}

/*
 * Every byte of the struct is a field the library knows: none is taken for an
 * unknown tail (-E2BIG), which hidden padding at the end would be.
 */
TEST(options_struct_has_no_hidden_tail)
{
	struct mmext_pattern_opts o;
	struct mmext_pattern *p = NULL;
	size_t i;
	int ret;

	for (i = sizeof(o.sz); i < sizeof(o); i++) {
		memset(&o, 0, sizeof(o));
		o.sz = sizeof(o);
		((unsigned char *)&o)[i] = 0x80;
		ret = mmext_pattern_map(pat8, 8, t_psz(), &o, &p);
		EXPECT_NE(-E2BIG, ret) TH_LOG("byte %zu of %zu", i, sizeof(o));
		if (!ret)
			mmext_pattern_unmap(p);
	}
}

/* sz far beyond the caller's memory: refused before reading past it. */
static int huge_sz_at_end_of_mapping(void *arg)
{
	size_t psz = t_psz();
	char *page = t_map(2 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_pattern_opts *o;
	struct mmext_pattern *p;

	if (!page || munmap(page + psz, psz))
		return 2;
	o = (void *)(page + psz - sizeof(*o));
	memset(o, 0, sizeof(*o));
	o->sz = 1 << 20;
	return mmext_pattern_map(pat8, 8, psz, o, &p) == -E2BIG ? 0 : 3;
}

TEST(options_size_is_bounded)
{
	int status = t_child_status(huge_sz_at_end_of_mapping, NULL);

	ASSERT_NE(-1, status);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

/* Clean emulated pages share the memfd's: they must not be charged as commit. */
TEST(emulated_tiles_are_noreserve)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_EMULATED, .tile_pages = 4);
	struct mmext_pattern *p;
	char flags[256];
	size_t i;

	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, 16 * t_psz(), &o, &p));
	for (i = 0; i < 16; i += 4) {
		ASSERT_EQ(0, t_vmflags((char *)mmext_pattern_addr(p) + i * t_psz(), flags,
				       sizeof(flags)));
		EXPECT_NE(NULL, strstr(flags, " nr")) TH_LOG("tile %zu: %s", i / 4, flags);
	}
	mmext_pattern_unmap(p);
}

/* The handle belongs to the process that mapped it. */
struct owned {
	struct mmext_pattern *p;
	char *addr;
};

static int child_uses_parents_handle(void *arg)
{
	struct owned *o = arg;

	if (mmext_pattern_addr(o->p) || mmext_pattern_len(o->p) ||
	    mmext_pattern_backend(o->p) != -ECHILD)
		return 1;
	if (mmext_pattern_reset(o->p, o->addr, t_psz()) != -ECHILD || o->addr[0] != 1)
		return 2;
	mmext_pattern_unmap(o->p);	/* releases the child's copy only */
	return 0;
}

TEST(handle_fails_in_a_child)
{
	struct owned o;

	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, 4 * t_psz(), NULL, &o.p));
	o.addr = mmext_pattern_addr(o.p);
	o.addr[0] = 1;
	EXPECT_TRUE(t_in_child(child_uses_parents_handle, &o));
	EXPECT_EQ(1, o.addr[0]);
	EXPECT_EQ(o.addr, mmext_pattern_addr(o.p));
	mmext_pattern_unmap(o.p);
}

/* The same as pid 1 of a pid namespace, whose child is pid 1 of another: its pid. */
static int pid1_forks_a_pid1_child(void *arg)
{
	struct owned o;
	int ret;

	(void)arg;
	if (mmext_pattern_map(pat8, 8, 4 * t_psz(), NULL, &o.p))
		return 1;
	o.addr = mmext_pattern_addr(o.p);
	o.addr[0] = 1;
	ret = t_exit_of(t_as_pid1(child_uses_parents_handle, &o));
	if (ret) {
		fprintf(stderr, "#      the pid 1 child's use of the handle: exit %d\n", ret);
		return 2;
	}
	if (o.addr[0] != 1 || mmext_pattern_addr(o.p) != o.addr)
		return 3;
	mmext_pattern_unmap(o.p);
	return 0;
}

TEST(handle_fails_in_a_child_with_the_same_pid)
{
	T_EXPECT_CHILD_OK(t_as_pid1(pid1_forks_a_pid1_child, NULL),
			  "cannot make a pid namespace (needs CAP_SYS_ADMIN)");
}

/* vm.max_map_count reached: -ENOMEM and nothing left behind. */
static int exhaust_map_count(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_EMULATED, .tile_pages = 1);
	struct mmext_pattern *p = NULL;
	long max = *(long *)arg;
	int ret;

	ret = mmext_pattern_map(pat8, 8, (size_t)(max + 10) * t_psz(), &o, &p);
	return ret == -ENOMEM && !p ? 0 : 1;
}

static long map_count_limit(const char *set)
{
	FILE *f = fopen("/proc/sys/vm/max_map_count", set ? "w" : "r");
	long max = -1;

	if (!f)
		return -1;
	if (set)
		max = fputs(set, f) < 0 ? -1 : 0;
	else if (fscanf(f, "%ld", &max) != 1)
		max = -1;
	return fclose(f) ? -1 : max;
}

/*
 * ~65k mmaps and their undoing take minutes on a KASAN kernel under TCG. In the
 * test guest (a throwaway machine, MMEXT_GUEST) root lowers the global limit
 * for the test; elsewhere it is left alone and the test runs at full size.
 */
FIXTURE(map_count) {
	char old[32];
};
FIXTURE_SETUP(map_count)
{
	long max = map_count_limit(NULL);

	self->old[0] = 0;
	if (getenv("MMEXT_GUEST") && !geteuid() && max > 4096) {
		snprintf(self->old, sizeof(self->old), "%ld", max);
		ASSERT_EQ(0, map_count_limit("4096"));
	}
}
FIXTURE_TEARDOWN(map_count)
{
	if (self->old[0])
		map_count_limit(self->old);
}

TEST_F_TIMEOUT(map_count, max_map_count_is_enomem, 600)
{
	long max = map_count_limit(NULL);

	ASSERT_LT(0, max);
	EXPECT_TRUE(t_in_child(exhaust_map_count, &max));
}

/* The VmFlags of addr's VMA hold the two-letter flag. */
static int has_vmflag(const void *addr, const char *flag)
{
	char line[512], want[8], *at;

	if (t_vmflags(addr, line, sizeof(line)))
		return 0;
	line[strcspn(line, "\n")] = ' ';
	snprintf(want, sizeof(want), " %s ", flag);
	at = strstr(line, want);
	return at != NULL;
}

/*
 * Names: reference pages are a file mapping, EBADF and nothing named; the
 * emulation's memfd tiles count as shared anonymous memory and take a name.
 */
TEST_F(pattern, naming)
{
	char name[32];

	REQUIRE_FEATURE(MMEXT_FEAT_ANON_NAME);
	if (self->backend == MMEXT_PATTERN_KERNEL) {
		EXPECT_EQ(-EBADF, mmext_name_set(self->addr, self->len, "pattern heap"));
		EXPECT_EQ(-ENODATA, mmext_name_get(0, self->addr, name, sizeof(name)));
	} else {
		EXPECT_EQ(0, mmext_name_set(self->addr, self->len, "pattern heap"));
		EXPECT_EQ(12, mmext_name_get(0, self->addr + self->len - 1, name, sizeof(name)));
		EXPECT_STREQ("pattern heap", name);
	}
	EXPECT_TRUE(is_pattern(self->addr, self->len, pat8, sizeof(pat8)));
}

/* Nor wiped on fork: EINVAL, and a child still sees what the parent wrote. */
static int child_sees_the_write(void *arg)
{
	FIXTURE_DATA(pattern) *self = arg;

	return self->addr[0] == 0x3c && is_pattern(self->addr + 8, self->len - 8, pat8, 8) ? 0 : 1;
}

TEST_F(pattern, wipeonfork_is_refused)
{
	self->addr[0] = 0x3c;
	errno = 0;
	EXPECT_EQ(-1, madvise(self->addr, self->len, MADV_WIPEONFORK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(has_vmflag(self->addr, "wf"));
	EXPECT_TRUE(t_in_child(child_sees_the_write, self));
}

static int watch(void *addr, size_t len, uint32_t backend, struct mmext_ww **w)
{
	MMEXT_OPTS(mmext_ww_opts, o, .backend = backend);

	return mmext_ww_open(addr, len, &o, w);
}

/* Exactly page 3 of w's range is reported written. */
static int only_page_3_written(struct mmext_ww *w, unsigned char *addr, size_t len)
{
	void *pages[8];
	size_t n = 8;
	int ret = mmext_ww_get(w, addr, len, 0, pages, &n);

	return !ret && n == 1 && pages[0] == addr + 3 * t_psz();
}

/*
 * PAGEMAP_SCAN needs userfaultfd write-protection, which reference pages refuse:
 * -EOPNOTSUPP, the range left as it was. The emulation's tiles can be watched.
 */
TEST_F(pattern, write_watch_pagemap_scan)
{
	struct mmext_ww *w = NULL;
	int ret;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	ret = watch(self->addr, self->len, MMEXT_WW_PAGEMAP_SCAN, &w);
	if (self->backend == MMEXT_PATTERN_KERNEL) {
		EXPECT_EQ(-EOPNOTSUPP, ret);
		EXPECT_EQ(NULL, w);
		EXPECT_FALSE(has_vmflag(self->addr, "uw"));
		EXPECT_FALSE(has_vmflag(self->addr, "nh"));
		return;
	}
	ASSERT_EQ(0, ret);
	self->addr[3 * self->psz] = 1;
	EXPECT_TRUE(only_page_3_written(w, self->addr, self->len));
	mmext_ww_close(w);
}

/* AUTO watches either backend's pattern memory, with soft-dirty for reference pages. */
TEST_F(pattern, write_watch_auto)
{
	struct mmext_feature_status wwst, sdst;
	struct mmext_ww *w = NULL;
	int ret;

	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_WRITEWATCH, &wwst));
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_SOFT_DIRTY, &sdst));
	ret = watch(self->addr, self->len, MMEXT_WW_AUTO, &w);
	if (!sdst.available && (self->backend == MMEXT_PATTERN_KERNEL || !wwst.available)) {
		EXPECT_EQ(-EOPNOTSUPP, ret);
		SKIP(return, "no write watch backend for this memory here: %s", sdst.detail);
	}
	ASSERT_EQ(0, ret);
	EXPECT_EQ(self->backend == MMEXT_PATTERN_KERNEL || !wwst.available ?
		  MMEXT_WW_SOFT_DIRTY : MMEXT_WW_PAGEMAP_SCAN, mmext_ww_backend(w));
	self->addr[3 * self->psz] = 1;
	EXPECT_TRUE(only_page_3_written(w, self->addr, self->len));
	mmext_ww_close(w);
}

/* Reference pages are never executable: AUTO maps PROT_EXEC with the emulation. */
TEST(exec_auto_uses_the_emulation)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .prot = PROT_READ | PROT_EXEC);
	long before = refpages_alive();
	struct mmext_pattern *p;
	struct mmext_maps *m;
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, 4 * t_psz(), &o, &p));
	EXPECT_EQ(MMEXT_PATTERN_EMULATED, mmext_pattern_backend(p));
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(p), 4 * t_psz(), pat8, 8));
	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)mmext_pattern_addr(p), 0, &v));
	EXPECT_EQ(MMEXT_VMA_READ | MMEXT_VMA_EXEC, v.prot);
	mmext_maps_close(m);
	/* No reference page was made for it, not even one left in the cache. */
	if (before >= 0)
		EXPECT_EQ(before, refpages_alive());
	mmext_pattern_unmap(p);
}

/* Forcing reference pages with PROT_EXEC: -EINVAL on every kernel, nothing made. */
TEST(exec_forced_kernel_is_einval)
{
	MMEXT_OPTS(mmext_pattern_opts, rx, .backend = MMEXT_PATTERN_KERNEL,
		   .prot = PROT_READ | PROT_EXEC);
	MMEXT_OPTS(mmext_pattern_opts, x, .backend = MMEXT_PATTERN_KERNEL, .prot = PROT_EXEC);
	long before = refpages_alive();
	struct mmext_pattern *p = NULL;

	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat8, 8, t_psz(), &rx, &p));
	EXPECT_EQ(-EINVAL, mmext_pattern_map(pat8, 8, t_psz(), &x, &p));
	EXPECT_EQ(NULL, p);
	if (before >= 0)
		EXPECT_EQ(before, refpages_alive());
}

/* Nor can a kernel-backend mapping be made executable afterwards. */
TEST(kernel_mapping_never_becomes_executable)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p;
	char flags[256];

	REQUIRE_FEATURE(MMEXT_FEAT_REFPAGE);
	ASSERT_EQ(0, mmext_pattern_map(pat8, 8, 2 * t_psz(), &o, &p));
	errno = 0;
	EXPECT_EQ(-1, mprotect(mmext_pattern_addr(p), 2 * t_psz(), PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	ASSERT_EQ(0, t_vmflags(mmext_pattern_addr(p), flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " ex")) TH_LOG("%s", flags);
	EXPECT_TRUE(is_pattern(mmext_pattern_addr(p), 2 * t_psz(), pat8, 8));
	mmext_pattern_unmap(p);
}

/* Whether this build may use the marker's number (what the library decides alike). */
#if defined(__x86_64__) && !defined(__ILP32__)
#define X86_64_BUILD 1
#else
#define X86_64_BUILD 0
#endif

/* An unused number for a stand-in marker; a filter makes sure it never runs. */
#define STANDIN_NR 1000
/* Exit statuses of the children below besides their checks' (1-19). */
#define CHILD_NO_MARKER 90
#define CHILD_NO_FILTER 91

/*
 * In a child: the number refpage_create() has here. Where the kernel has none, root
 * stands one in through a private mount namespace (a tmpfs over /sys/kernel/mm), so
 * that the library's paths past the marker run; a filter must then keep the number
 * from ever reaching the kernel.
 */
static long marker_or_standin(void)
{
	long nr;
	FILE *f = fopen(MMEXT_REFPAGE_SYSFS, "r");

	if (f) {
		nr = fscanf(f, "%ld", &nr) == 1 ? nr : -1;
		fclose(f);
		return nr;
	}
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, NULL) ||
	    mkdir("/sys/kernel/mm/refpage", 0755))
		return -1;
	f = fopen(MMEXT_REFPAGE_SYSFS, "w");
	if (!f)
		return -1;
	nr = fprintf(f, "%d\n", STANDIN_NR) > 0 ? STANDIN_NR : -1;
	return fclose(f) ? -1 : nr;
}

/* Answer nr, on any ABI, with action (SECCOMP_RET_*). */
static int filter_nr(long nr, uint32_t action)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static bool seccomp_filters(void)
{
	/* Without filter support a NULL program is EINVAL, with it EFAULT. */
	return !(prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) && errno == EINVAL);
}

/* 0 when an AUTO mapping with prot works and uses the emulation. */
static int auto_emulates(int prot)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .prot = prot);
	struct mmext_pattern *p;
	int ret;

	if (mmext_pattern_map(pat8, 8, 2 * t_psz(), &o, &p))
		return 1;
	ret = mmext_pattern_backend(p) == MMEXT_PATTERN_EMULATED &&
	      is_pattern(mmext_pattern_addr(p), 2 * t_psz(), pat8, 8) ? 0 : 2;
	mmext_pattern_unmap(p);
	return ret;
}

FIXTURE(filtered) {
	int pipe[2];	/* the kill variant's child says how far it got */
};

FIXTURE_VARIANT(filtered) {
	uint32_t action;
	int forced;	/* forced KERNEL's result under the filter (x86-64 builds) */
};

FIXTURE_VARIANT_ADD(filtered, errno_enosys) {
	.action = SECCOMP_RET_ERRNO | ENOSYS, .forced = -EOPNOTSUPP,
};
FIXTURE_VARIANT_ADD(filtered, errno_eperm) {
	.action = SECCOMP_RET_ERRNO | EPERM, .forced = -EPERM,
};
FIXTURE_VARIANT_ADD(filtered, kill) { .action = SECCOMP_RET_KILL_PROCESS };

FIXTURE_SETUP(filtered)
{
	if (!seccomp_filters())
		SKIP(return, "no seccomp filters in this kernel (CONFIG_SECCOMP_FILTER)");
	ASSERT_EQ(0, pipe(self->pipe));
}

FIXTURE_TEARDOWN(filtered)
{
	close(self->pipe[0]);
	close(self->pipe[1]);
}

static int filtered_child(FIXTURE_DATA(filtered) *self,
			  const FIXTURE_VARIANT(filtered) *variant)
{
	MMEXT_OPTS(mmext_pattern_opts, kernel, .backend = MMEXT_PATTERN_KERNEL);
	MMEXT_OPTS(mmext_pattern_opts, kernel_x, .backend = MMEXT_PATTERN_KERNEL,
		   .prot = PROT_READ | PROT_EXEC);
	struct mmext_pattern *p = NULL;
	struct mmext_feature_status st;
	long nr = marker_or_standin();

	if (nr < 0)
		return CHILD_NO_MARKER;
	/* The kill variant dies on purpose: no core file for it. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (filter_nr(nr, variant->action))
		return CHILD_NO_FILTER;
	mmext_probe_reset();
	/* The marker is there: the probe cannot see the filter. */
	if (mmext_probe(MMEXT_FEAT_REFPAGE, &st) || st.available != X86_64_BUILD)
		return 1;
	/* None of these issues the call, so the kill variant survives them. */
	if (auto_emulates(PROT_READ | PROT_EXEC))
		return 2;
	if (mmext_pattern_map(pat8, 8, t_psz(), &kernel_x, &p) != -EINVAL || p)
		return 3;
	if (variant->action == SECCOMP_RET_KILL_PROCESS) {
		if (write(self->pipe[1], "k", 1) != 1)
			return 4;
		/* Issues it (x86-64): cannot be survived, as documented. */
		return auto_emulates(PROT_READ | PROT_WRITE) ? 5 : 0;
	}
	if (auto_emulates(PROT_READ | PROT_WRITE))
		return 6;
	if (mmext_pattern_map(pat8, 8, t_psz(), &kernel, &p) !=
	    (X86_64_BUILD ? variant->forced : -EOPNOTSUPP) || p)
		return 7;
	return 0;
}

/*
 * A seccomp filter refusing refpage_create() with ENOSYS or EPERM: AUTO falls back
 * to the emulation, forcing the kernel backend says why. A filter that kills: the
 * paths that must not issue the call (PROT_EXEC) do not; AUTO does issue it, and
 * the process dies, the documented limit.
 */
TEST_F_TIMEOUT(filtered, refpage_create_refused, 60)
{
	int status;
	char got = 0;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(filtered_child(self, variant));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_NO_MARKER)
		SKIP(return, "no reference pages here, and no stand-in marker (needs root "
			     "and mount namespaces)");
	close(self->pipe[1]);
	self->pipe[1] = -1;
	if (variant->action == SECCOMP_RET_KILL_PROCESS && X86_64_BUILD) {
		EXPECT_EQ(1, read(self->pipe[0], &got, 1));
		EXPECT_EQ('k', got) TH_LOG("status %#x", status);
		EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
			TH_LOG("status %#x", status);
		return;
	}
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

static int abi_child(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, kernel, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p = NULL;
	struct mmext_feature_status st;
	long nr = marker_or_standin();

	if (nr < 0)
		return CHILD_NO_MARKER;
	/* Where filters exist, the number must not even be tried by other builds. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	if (seccomp_filters() && !X86_64_BUILD && filter_nr(nr, SECCOMP_RET_KILL_PROCESS))
		return CHILD_NO_FILTER;
	mmext_probe_reset();
	if (mmext_probe(MMEXT_FEAT_REFPAGE, &st))
		return 1;
	if (X86_64_BUILD)
		return st.available ? 0 : 2;
	if (st.available || st.reason != ENOSYS)
		return 3;
	if (mmext_pattern_map(pat8, 8, t_psz(), &kernel, &p) != -EOPNOTSUPP || p)
		return 4;
	return auto_emulates(PROT_READ | PROT_WRITE) ? 5 : 0;
}

/*
 * The marker's number is x86-64's: an ia32 or x32 build (make -C tests compat)
 * reports reference pages unavailable (ENOSYS) whatever the marker says, and never
 * issues the number; an x86-64 build trusts the marker.
 */
TEST(marker_number_is_for_x86_64_builds_only)
{
	int status = t_child_status(abi_child, NULL);

	ASSERT_NE(-1, status);
	if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_NO_MARKER)
		SKIP(return, "no reference pages here, and no stand-in marker (needs root "
			     "and mount namespaces)");
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	TH_LOG("%s build", X86_64_BUILD ? "x86-64" : "non-x86-64");
}

#if X86_64_BUILD
/*
 * The stand-in for refpage_create(page, REFPAGE_CLOEXEC): memfd_create(page,
 * MFD_CLOEXEC), an fd whose page the cache keeps as it would a reference page. The
 * patterns start with a NUL byte, so the memfd's name is empty.
 */
static int standin_memfd_marker(void)
{
	FILE *f;

	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, NULL) ||
	    mkdir("/sys/kernel/mm/refpage", 0755))
		return -1;
	f = fopen(MMEXT_REFPAGE_SYSFS, "w");
	if (!f)
		return -1;
	if (fprintf(f, "%d\n", (int)SYS_memfd_create) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/* A map of this length traps in mmap(): the handler reports the fd, waits, fails it. */
#define STUCK_PAGES 13
static int stuck_pipe[2], release_pipe[2];

static void stuck_in_mmap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	int fd = (int)uc->uc_mcontext.gregs[REG_R8];
	char c;

	(void)sig;
	(void)si;
	if (write(stuck_pipe[1], &fd, sizeof(fd)) != sizeof(fd) ||
	    read(release_pipe[0], &c, 1) != 1)
		_exit(3);
	uc->uc_mcontext.gregs[REG_RAX] = -EPERM;
}

/* Trap mmap() of STUCK_PAGES pages of a file, the map of the kernel backend. */
static int trap_stuck_mmap(void)
{
	uint32_t len = STUCK_PAGES * (uint32_t)t_psz();
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 5),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, len, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[4])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0xffffffffu, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };
	struct sigaction sa = { .sa_sigaction = stuck_in_mmap, .sa_flags = SA_SIGINFO };

	return sigaction(SIGSYS, &sa, NULL) || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

static void *map_stuck(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	static const unsigned char pat[2] = { 0, 0xa };
	struct mmext_pattern *p = NULL;

	(void)arg;
	mmext_pattern_map(pat, 2, STUCK_PAGES * t_psz(), &o, &p);
	mmext_pattern_unmap(p);
	return NULL;
}

/* C, pid 1 as P was: eight other patterns go through the cache, P's must go. */
static int child_evicts_the_stuck_slot(int fd, ino_t ino)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	unsigned char pat[2] = { 0, 0 };
	struct mmext_pattern *p;
	struct stat st;

	if (getpid() != 1)
		return T_NO_STANDIN;
	for (pat[1] = 1; pat[1] <= 8; pat[1]++) {
		if (mmext_pattern_map(pat, 2, t_psz(), &o, &p))
			return 2;
		mmext_pattern_unmap(p);
	}
	if (!fstat(fd, &st) && st.st_ino == ino) {
		fprintf(stderr, "#      the slot of the map in progress at the fork is kept\n");
		return 1;
	}
	return 0;
}

/*
 * P, pid 1 of a pid namespace, with a thread inside a map of the kernel backend (a
 * cache slot in use), forks C into a new pid namespace: C is pid 1 too.
 */
static int pid_one_child_while_mapping(void *arg)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	static const unsigned char zero[2];
	struct mmext_pattern *p;
	int status, fd = -1;
	struct stat st;
	pthread_t th;
	pid_t pid;

	(void)arg;
	alarm(10);
	if (standin_memfd_marker() || unshare(CLONE_NEWPID))
		return T_NO_STANDIN;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid)
		return waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
		       WEXITSTATUS(status) : 1;
	mmext_probe_reset();
	if (getpid() != 1 || mmext_pattern_map(zero, 2, t_psz(), &o, &p))
		_exit(T_NO_STANDIN);
	mmext_pattern_unmap(p);
	if (pipe(stuck_pipe) || pipe(release_pipe) || trap_stuck_mmap() ||
	    pthread_create(&th, NULL, map_stuck, NULL))
		_exit(T_NO_STANDIN);
	if (read(stuck_pipe[0], &fd, sizeof(fd)) != sizeof(fd) || fstat(fd, &st) ||
	    unshare(CLONE_NEWPID))
		_exit(T_NO_STANDIN);
	pid = fork();
	if (!pid)
		_exit(child_evicts_the_stuck_slot(fd, st.st_ino));
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		status = 1 << 8;
	if (write(release_pipe[1], "r", 1) != 1)
		_exit(1);
	pthread_join(th, NULL);
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 1);
}
#endif

/*
 * A fork child whose pid is its parent's (pid 1 in a new pid namespace) starts the
 * cache afresh: the slot a parent's thread was mapping from is evicted like any other.
 */
TEST(kernel_cache_child_with_its_parents_pid)
{
#if X86_64_BUILD
	T_EXPECT_CHILD_OK(t_child_status(pid_one_child_while_mapping, NULL),
			  "cannot stand memfd_create() in for refpage_create(), trap "
			  "mmap() or make a pid namespace (needs root)");
#else
	SKIP(return, "the stand-in marker's number is x86-64's");
#endif
}

TEST_HARNESS_MAIN
