// SPDX-License-Identifier: GPL-2.0
/*
 * Write watch: the same behaviour tests on every backend (PAGEMAP_SCAN, soft-dirty,
 * and the automatic choice), each SKIPping where the kernel lacks it; then
 * backend-specific behaviour (EBUSY), argument errors, and what the library must
 * leave alone: signal handling, memory it was not given, a fork child's state.
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include <mmext/uapi.h>

#include "helpers.h"
#include "harness.h"

#define NPAGES 64

static const int ww_feature[] = {
	[MMEXT_WW_PAGEMAP_SCAN] = MMEXT_FEAT_WRITEWATCH,
	[MMEXT_WW_SOFT_DIRTY] = MMEXT_FEAT_SOFT_DIRTY,
};

FIXTURE(ww) {
	char *area;
	size_t psz, len;
	struct mmext_ww *w;
	void *pages[NPAGES];
};

FIXTURE_VARIANT(ww) {
	int backend;
};

FIXTURE_VARIANT_ADD(ww, pagemap_scan) { .backend = MMEXT_WW_PAGEMAP_SCAN };
FIXTURE_VARIANT_ADD(ww, soft_dirty) { .backend = MMEXT_WW_SOFT_DIRTY };
FIXTURE_VARIANT_ADD(ww, automatic) { .backend = MMEXT_WW_AUTO };

static int open_watch(void *addr, size_t len, int backend, struct mmext_ww **w)
{
	MMEXT_OPTS(mmext_ww_opts, o, .backend = backend);

	return mmext_ww_open(addr, len, &o, w);
}

FIXTURE_SETUP(ww)
{
	self->psz = t_psz();
	self->len = NPAGES * self->psz;
	if (variant->backend == MMEXT_WW_PAGEMAP_SCAN || variant->backend == MMEXT_WW_SOFT_DIRTY)
		REQUIRE_FEATURE(ww_feature[variant->backend]);
	self->area = t_map(self->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, self->area);
	/* Populate half before arming: arming must count it clean. */
	memset(self->area, 1, self->len / 2);
	if (variant->backend == MMEXT_WW_AUTO &&
	    open_watch(self->area, self->len, variant->backend, &self->w) == -EOPNOTSUPP)
		SKIP(return, "no kernel backend for AUTO");
	if (!self->w)
		ASSERT_EQ(0, open_watch(self->area, self->len, variant->backend, &self->w));
}

FIXTURE_TEARDOWN(ww)
{
	mmext_ww_close(self->w);
	if (self->area)
		munmap(self->area, self->len);
}

/* Get into self->pages; returns the count, checks the return code. */
static size_t get(struct __test_metadata *_metadata, FIXTURE_DATA(ww) *self, size_t first,
		  size_t n, unsigned int flags, size_t cap, int want_ret)
{
	size_t count = cap;

	EXPECT_EQ(want_ret, mmext_ww_get(self->w, self->area + first * self->psz,
					 n * self->psz, flags, self->pages, &count));
	return count;
}

static size_t idx(FIXTURE_DATA(ww) *self, size_t i)
{
	return ((char *)self->pages[i] - self->area) / self->psz;
}

TEST_F(ww, backend_is_the_one_asked_for)
{
	int b = mmext_ww_backend(self->w);

	if (variant->backend != MMEXT_WW_AUTO) {
		EXPECT_EQ(variant->backend, b);
	} else {
		struct mmext_feature_status st;

		ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_WRITEWATCH, &st));
		if (st.available) {
			EXPECT_EQ(MMEXT_WW_PAGEMAP_SCAN, b);
		} else {
			EXPECT_NE(MMEXT_WW_AUTO, b);
		}
	}
	TH_LOG("backend %s", mmext_ww_backend_name(b));
}

TEST_F(ww, fresh_watch_is_clean)
{
	volatile char sink = 0;
	size_t i;

	/* Reading, populated or not, is not writing. */
	for (i = 0; i < NPAGES; i++)
		sink += self->area[i * self->psz];
	(void)sink;
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

TEST_F(ww, written_pages_are_reported_in_order)
{
	static const size_t w[] = { 3, 10, 31, 32, 63 };
	size_t i, n;

	for (i = sizeof(w) / sizeof(w[0]); i-- > 0;)
		self->area[w[i] * self->psz + 7] = 2;
	n = get(_metadata, self, 0, NPAGES, 0, NPAGES, 0);
	ASSERT_EQ(5, n);
	for (i = 0; i < n; i++)
		EXPECT_EQ(w[i], idx(self, i));
	/* Without reset the answer does not change. */
	EXPECT_EQ(5, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

TEST_F(ww, get_with_reset_then_write_again)
{
	self->area[5 * self->psz] = 1;
	self->area[50 * self->psz] = 1;
	ASSERT_EQ(2, get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, NPAGES, 0));
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	self->area[50 * self->psz + 1] = 1;
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(50, idx(self, 0));
}

/* The GetWriteWatch/ResetWriteWatch pair: reset cleans what was written after the get. */
TEST_F(ww, reset_after_get_covers_later_writes)
{
	self->area[5 * self->psz] = 1;
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(5, idx(self, 0));
	self->area[7 * self->psz] = 1;		/* between the get and the reset */
	ASSERT_EQ(0, mmext_ww_reset(self->w, self->area, self->len));
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	self->area[9 * self->psz] = 1;
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(9, idx(self, 0));
}

/*
 * More separate runs of written pages than one PAGEMAP_SCAN vector (256) and than the
 * kernel's bounce buffer (512) hold: every page once, in order.
 */
TEST_F(ww, many_runs_reported_once)
{
	const size_t n = 1100;
	struct mmext_ww *w;
	void **pages;
	size_t i, count;
	char *p;

	p = t_map(n * self->psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	pages = calloc(n, sizeof(*pages));
	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, pages);
	ASSERT_EQ(0, open_watch(p, n * self->psz, variant->backend, &w));
	for (i = 0; i < n; i += 2)
		p[i * self->psz] = 1;
	count = n;
	ASSERT_EQ(0, mmext_ww_get(w, p, n * self->psz, 0, pages, &count));
	ASSERT_EQ(n / 2, count);
	for (i = 0; i < count; i++)
		ASSERT_EQ(p + 2 * i * self->psz, (char *)pages[i]) TH_LOG("entry %zu", i);
	count = n;
	ASSERT_EQ(0, mmext_ww_get(w, p, n * self->psz, MMEXT_WW_RESET, pages, &count));
	EXPECT_EQ(n / 2, count);
	count = n;
	EXPECT_EQ(0, mmext_ww_get(w, p, n * self->psz, 0, pages, &count));
	EXPECT_EQ(0, count);
	mmext_ww_close(w);
	munmap(p, n * self->psz);
	free(pages);
}

TEST_F(ww, reset_clears_only_its_range)
{
	self->area[3 * self->psz] = 1;
	self->area[40 * self->psz] = 1;
	ASSERT_EQ(0, mmext_ww_reset(self->w, self->area, 32 * self->psz));
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(40, idx(self, 0));
	ASSERT_EQ(0, mmext_ww_reset(self->w, self->area, self->len));
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

TEST_F(ww, subrange_get)
{
	self->area[2 * self->psz] = 1;
	self->area[9 * self->psz] = 1;
	self->area[20 * self->psz] = 1;
	ASSERT_EQ(1, get(_metadata, self, 8, 8, 0, NPAGES, 0));
	EXPECT_EQ(9, idx(self, 0));
}

TEST_F(ww, small_array_loses_nothing)
{
	size_t i, n, seen = 0;

	for (i = 0; i < 10; i++)
		self->area[(i * 6) * self->psz] = 1;
	/* Four at a time with reset: the rest stays written for the next call. */
	n = get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, 4, 1);
	ASSERT_EQ(4, n);
	EXPECT_EQ(0, idx(self, 0));
	EXPECT_EQ(18, idx(self, 3));
	seen += n;
	n = get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, 4, 1);
	ASSERT_EQ(4, n);
	EXPECT_EQ(24, idx(self, 0));
	seen += n;
	n = get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, 4, 0);
	ASSERT_EQ(2, n);
	EXPECT_EQ(54, idx(self, 1));
	seen += n;
	EXPECT_EQ(10, seen);
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

TEST_F(ww, zero_capacity_says_whether_any)
{
	size_t count = 0;

	EXPECT_EQ(0, mmext_ww_get(self->w, self->area, self->len, 0, NULL, &count));
	self->area[33 * self->psz] = 1;
	EXPECT_EQ(1, mmext_ww_get(self->w, self->area, self->len, 0, NULL, &count));
	EXPECT_EQ(0, count);
	/* Asking with no room resets nothing. */
	EXPECT_EQ(1, mmext_ww_get(self->w, self->area, self->len, MMEXT_WW_RESET, NULL, &count));
	EXPECT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

TEST_F(ww, huge_pages_are_turned_off)
{
	char line[512];

	ASSERT_EQ(0, t_vmflags(self->area, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, " nh")) TH_LOG("%s", line);
}

/*
 * The watch belongs to the process that opened it. A fork child's calls fail, so
 * they can neither read nor reset the parent's record; writes on both sides.
 */
static int child_uses_parents_watch(void *arg)
{
	FIXTURE_DATA(ww) *self = arg;
	size_t count = NPAGES;

	self->area[2 * self->psz] = 2;		/* the child's own write */
	if (mmext_ww_get(self->w, self->area, self->len, MMEXT_WW_RESET, self->pages,
			 &count) != -ECHILD)
		return 1;
	if (mmext_ww_reset(self->w, self->area, self->len) != -ECHILD)
		return 2;
	if (mmext_ww_backend(self->w) != -ECHILD)
		return 3;
	mmext_ww_close(self->w);		/* the child's copy only */
	self->area[3 * self->psz] = 3;
	return 0;
}

TEST_F(ww, handle_fails_in_a_child)
{
	self->area[1 * self->psz] = 1;
	EXPECT_TRUE(t_in_child(child_uses_parents_watch, self));
	self->area[5 * self->psz] = 1;
	ASSERT_EQ(2, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(1, idx(self, 0));
	EXPECT_EQ(5, idx(self, 1));
}

/*
 * The same as pid 1 of a pid namespace, whose child is pid 1 of another: the child
 * has the opener's pid, and must still find the watch not its own.
 */
struct pid1_watch {
	FIXTURE_DATA(ww) *self;
	int backend;
};

static int pid1_forks_a_pid1_child(void *arg)
{
	struct pid1_watch *pw = arg;
	FIXTURE_DATA(ww) *self = pw->self;
	size_t count = NPAGES;
	int ret;

	/* self->w is the test process's: this process opens one of its own. */
	ret = open_watch(self->area, self->len, pw->backend, &self->w);
	if (ret) {
		fprintf(stderr, "#      open as pid 1: %d\n", ret);
		return 1;
	}
	self->area[1 * self->psz] = 1;
	ret = t_exit_of(t_as_pid1(child_uses_parents_watch, self));
	if (ret) {
		fprintf(stderr, "#      the pid 1 child's use of the watch: exit %d\n", ret);
		return 2;
	}
	self->area[5 * self->psz] = 1;
	ret = mmext_ww_get(self->w, self->area, self->len, 0, self->pages, &count);
	if (ret || count != 2 || self->pages[0] != self->area + self->psz ||
	    self->pages[1] != self->area + 5 * self->psz) {
		fprintf(stderr, "#      the opener's get after the child: %d, %zu pages\n", ret,
			count);
		return 3;
	}
	return 0;
}

TEST_F(ww, handle_fails_in_a_child_with_the_same_pid)
{
	struct pid1_watch pw = { self, variant->backend };

	T_EXPECT_CHILD_OK(t_as_pid1(pid1_forks_a_pid1_child, &pw),
			  "cannot make a pid namespace (needs CAP_SYS_ADMIN)");
}

/* Memory of a file whose path is longer than PATH_MAX, which PROCMAP_QUERY does not give. */
TEST(file_with_a_path_longer_than_path_max)
{
	char path[T_LONG_DEPTH * (T_LONG_COMP + 1) + 64], base[64];
	size_t psz = t_psz(), count = 4;
	void *pages[4];
	struct mmext_ww *w;
	char *p;
	int ret;

	p = t_long_path_map(4 * psz, path, base);
	if (!p) {
		t_long_path_remove(base);
		SKIP(return, "cannot make a file with a path over PATH_MAX in /dev/shm");
	}
	ret = mmext_ww_open(p, 4 * psz, NULL, &w);
	if (ret == -EOPNOTSUPP) {
		munmap(p, 4 * psz);
		t_long_path_remove(base);
		SKIP(return, "no backend for shared memory");
	}
	EXPECT_EQ(0, ret);
	if (!ret) {
		p[2 * psz] = 1;
		EXPECT_EQ(0, mmext_ww_get(w, p, 4 * psz, 0, pages, &count));
		EXPECT_EQ(1, count);
		mmext_ww_close(w);
	}
	munmap(p, 4 * psz);
	t_long_path_remove(base);
}

#ifndef MAP_DROPPABLE
#define MAP_DROPPABLE 0x08
#endif

/*
 * Memory userfaultfd cannot register (MAP_DROPPABLE) has the open read smaps, for
 * hugetlb: a mapping elsewhere whose path is longer than any line buffer must not
 * change the answer.
 */
TEST(open_unaffected_by_a_long_path_elsewhere)
{
	char path[T_LONG_DEPTH * (T_LONG_COMP + 1) + 64], base[64];
	size_t psz = t_psz();
	struct mmext_ww *w;
	int before, after;
	char *d, *p;

	d = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_DROPPABLE | MAP_ANONYMOUS, -1, 0);
	if (d == MAP_FAILED)
		SKIP(return, "no MAP_DROPPABLE: %s", strerror(errno));
	before = mmext_ww_open(d, 4 * psz, NULL, &w);
	if (!before)
		mmext_ww_close(w);
	p = t_long_path_map(psz, path, base);
	if (!p) {
		t_long_path_remove(base);
		munmap(d, 4 * psz);
		SKIP(return, "cannot make a file with a path over PATH_MAX in /dev/shm");
	}
	after = mmext_ww_open(d, 4 * psz, NULL, &w);
	if (!after)
		mmext_ww_close(w);
	EXPECT_EQ(before, after) TH_LOG("%s, then %s", strerror(-before), strerror(-after));
	munmap(p, psz);
	t_long_path_remove(base);
	munmap(d, 4 * psz);
}

/* Several VMAs of different kinds under one watch. */
TEST_F(ww, range_spanning_several_vmas)
{
	char *mid = self->area + 16 * self->psz;

	/* Replace pages 16..31 by shared anonymous memory: a different VMA. */
	ASSERT_EQ(mid, mmap(mid, 16 * self->psz, PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	mmext_ww_close(self->w);
	ASSERT_EQ(0, open_watch(self->area, self->len, variant->backend, &self->w));
	self->area[1 * self->psz] = 1;
	self->area[20 * self->psz] = 1;
	self->area[40 * self->psz] = 1;
	ASSERT_EQ(3, get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, NPAGES, 0));
	EXPECT_EQ(1, idx(self, 0));
	EXPECT_EQ(20, idx(self, 1));
	EXPECT_EQ(40, idx(self, 2));
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

/* Memory unmapped after the open is a hole a get skips, as the header says. */
TEST_F(ww, unmapped_part_is_a_hole)
{
	self->area[3 * self->psz] = 1;
	self->area[40 * self->psz] = 1;
	ASSERT_EQ(0, munmap(self->area + 16 * self->psz, 16 * self->psz));
	ASSERT_EQ(2, get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, NPAGES, 0));
	EXPECT_EQ(3, idx(self, 0));
	EXPECT_EQ(40, idx(self, 1));
	EXPECT_EQ(0, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
}

/* The kernel writing on our behalf (read(2) into the range) counts as a write. */
TEST_F(ww, syscall_writes_are_recorded)
{
	int fds[2];

	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(3, write(fds[1], "abc", 3));
	ASSERT_EQ(3, read(fds[0], self->area + 44 * self->psz + 100, 3));
	close(fds[0]);
	close(fds[1]);
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(44, idx(self, 0));
}

struct writer {
	char *area;
	size_t psz;
	int done;
};

static void *write_each_page_once(void *arg)
{
	struct writer *wr = arg;
	size_t i;

	for (i = 0; i < NPAGES; i++) {
		((volatile char *)wr->area)[i * wr->psz + 11] = 1;
		if (i % 8 == 0)
			usleep(200);
	}
	__atomic_store_n(&wr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * A writer thread races with get+reset: no page is lost. A page may be reported
 * twice: the fault that records a write completes the store only after returning,
 * so a reset in between sees the retried store as a second write (documented).
 */
TEST_F(ww, concurrent_writer_loses_nothing)
{
	struct writer wr = { self->area, self->psz, 0 };
	int hits[NPAGES] = { 0 };
	pthread_t t;
	size_t i, n;
	int last;

	if (mmext_ww_backend(self->w) == MMEXT_WW_SOFT_DIRTY)
		SKIP(return, "soft-dirty reset is not atomic (documented)");
	ASSERT_EQ(0, pthread_create(&t, NULL, write_each_page_once, &wr));
	do {
		last = __atomic_load_n(&wr.done, __ATOMIC_ACQUIRE);
		n = get(_metadata, self, 0, NPAGES, MMEXT_WW_RESET, NPAGES, 0);
		for (i = 0; i < n; i++)
			hits[idx(self, i)]++;
	} while (!last);
	pthread_join(t, NULL);
	for (i = 0; i < NPAGES; i++)
		EXPECT_LE(1, hits[i]) TH_LOG("page %zu", i);
}

/* Written, then swapped out: still written. Needs swap. */
TEST_F(ww, swapped_out_pages_still_count)
{
	char line[256];
	FILE *f = fopen("/proc/swaps", "r");
	int swaps = 0, fd;
	uint64_t ent;

	ASSERT_NE(NULL, f);
	while (fgets(line, sizeof(line), f))
		swaps++;
	fclose(f);
	if (swaps < 2)
		SKIP(return, "no swap configured");
	self->area[60 * self->psz] = 1;
	ASSERT_EQ(0, madvise(self->area + 60 * self->psz, self->psz, MADV_PAGEOUT));
	fd = open("/proc/self/pagemap", O_RDONLY);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(8, pread(fd, &ent, 8, (uintptr_t)(self->area + 60 * self->psz) / self->psz * 8));
	close(fd);
	if (!(ent >> 62 & 1))
		SKIP(return, "the kernel did not swap the page out");
	ASSERT_EQ(1, get(_metadata, self, 0, NPAGES, 0, NPAGES, 0));
	EXPECT_EQ(60, idx(self, 0));
}

TEST_F(ww, get_and_reset_bad_input)
{
	size_t count = NPAGES;

	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area + 1, self->psz, 0, self->pages,
					&count));
	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area, 0, 0, self->pages, &count));
	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area, self->len + self->psz, 0,
					self->pages, &count));
	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area - self->psz, self->psz, 0,
					self->pages, &count));
	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area, (size_t)-self->psz, 0,
					self->pages, &count));
	EXPECT_EQ(-EINVAL, mmext_ww_get(self->w, self->area, self->len, 0x2, self->pages,
					&count));
	EXPECT_EQ(-EFAULT, mmext_ww_get(self->w, self->area, self->len, 0, self->pages, NULL));
	EXPECT_EQ(-EFAULT, mmext_ww_get(self->w, self->area, self->len, 0, NULL, &count));
	EXPECT_EQ(-EFAULT, mmext_ww_get(NULL, self->area, self->len, 0, self->pages, &count));
	EXPECT_EQ(NPAGES, count);	/* untouched on error */
	EXPECT_EQ(-EINVAL, mmext_ww_reset(self->w, self->area + self->len, self->psz));
	EXPECT_EQ(-EINVAL, mmext_ww_reset(self->w, self->area + 1, self->psz));
	EXPECT_EQ(-EINVAL, mmext_ww_reset(self->w, self->area, 0));
	EXPECT_EQ(-EFAULT, mmext_ww_reset(NULL, self->area, self->psz));
}

TEST(open_bad_input)
{
	MMEXT_OPTS(mmext_ww_opts, bad_backend, .backend = 9);
	MMEXT_OPTS(mmext_ww_opts, bad_flags, .flags = 1);
	T_OPTS_TAIL(mmext_ww_opts) big;
	size_t psz = t_psz();
	char *p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w = NULL;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, munmap(p + 4 * psz, 4 * psz));
	EXPECT_EQ(-EINVAL, mmext_ww_open(p + 1, psz, NULL, &w));
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, 0, NULL, &w));
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, (size_t)-psz, NULL, &w));
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, SIZE_MAX, NULL, &w));
	EXPECT_EQ(-ENOMEM, mmext_ww_open(t_hole(psz), psz, NULL, &w));
	EXPECT_EQ(-ENOMEM, mmext_ww_open(p, 8 * psz, NULL, &w));	/* runs past the end */
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, psz, &bad_backend, &w));
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, psz, &bad_flags, &w));
	EXPECT_EQ(-EFAULT, mmext_ww_open(p, psz, NULL, NULL));
	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail = 0xff;
	EXPECT_EQ(-E2BIG, mmext_ww_open(p, psz, &big.o, &w));
	big.o.sz = 3;
	EXPECT_EQ(-EINVAL, mmext_ww_open(p, psz, &big.o, &w));
	EXPECT_EQ(NULL, w);
	big.o.sz = sizeof(big);
	big.tail = 0;
	ASSERT_EQ(0, mmext_ww_open(p, psz, &big.o, &w));
	mmext_ww_close(w);
	mmext_ww_close(NULL);
	munmap(p, 4 * psz);
}

TEST(backend_names)
{
	EXPECT_STREQ("pagemap_scan", mmext_ww_backend_name(MMEXT_WW_PAGEMAP_SCAN));
	EXPECT_STREQ("soft_dirty", mmext_ww_backend_name(MMEXT_WW_SOFT_DIRTY));
	EXPECT_STREQ("mprotect", mmext_ww_backend_name(MMEXT_WW_MPROTECT));
	EXPECT_STREQ("auto", mmext_ww_backend_name(MMEXT_WW_AUTO));
	EXPECT_EQ(NULL, mmext_ww_backend_name(4));
	EXPECT_EQ(NULL, mmext_ww_backend_name(-1));
	EXPECT_EQ(-EINVAL, mmext_ww_backend(NULL));
}

/* Forcing a backend the kernel lacks fails instead of quietly using another. */
TEST(forced_missing_backend_fails)
{
	static const int b[] = { MMEXT_WW_PAGEMAP_SCAN, MMEXT_WW_SOFT_DIRTY };
	struct mmext_feature_status st;
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	int i, tested = 0;

	ASSERT_NE(NULL, p);
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mmext_probe(ww_feature[b[i]], &st));
		if (st.available)
			continue;
		EXPECT_EQ(-EOPNOTSUPP, open_watch(p, psz, b[i], &w));
		tested++;
	}
	munmap(p, psz);
	if (!tested)
		SKIP(return, "every kernel backend is available here");
}

TEST(pagemap_scan_range_cannot_be_watched_twice)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *a, *b;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_watch(p, psz, MMEXT_WW_PAGEMAP_SCAN, &a));
	EXPECT_EQ(-EBUSY, open_watch(p, psz, MMEXT_WW_PAGEMAP_SCAN, &b));
	mmext_ww_close(a);
	ASSERT_EQ(0, open_watch(p, psz, MMEXT_WW_PAGEMAP_SCAN, &b));
	mmext_ww_close(b);
	munmap(p, psz);
}

/* Run fn(arg) in a child with an alarm; its wait status. */
static int t_status_of(int (*fn)(void *), void *arg, unsigned int seconds)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		alarm(seconds);
		_exit(fn(arg));
	}
	return waitpid(pid, &status, 0) == pid ? status : -1;
}

#define EXPECT_EXIT0(expr) do {						\
	int __st = (expr);							\
	EXPECT_TRUE(WIFEXITED(__st) && WEXITSTATUS(__st) == 0)			\
		TH_LOG("status %#x (signal %d, exit %d)", __st,			\
		       WIFSIGNALED(__st) ? WTERMSIG(__st) : 0,			\
		       WIFEXITED(__st) ? WEXITSTATUS(__st) : -1);		\
} while (0)

/* A seccomp filter that denies userfaultfd, also through /dev/userfaultfd (Docker's). */
static int deny_userfaultfd(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_userfaultfd, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, USERFAULTFD_IOC_NEW, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	       prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* The automatic choice under a seccomp filter that denies userfaultfd. */
static int auto_without_userfaultfd(void *arg)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct sigaction before, sa;
	struct mmext_ww *w;
	int ret;

	/* Compared with what was there: sanitizers install a SIGSEGV handler of their own. */
	if (!p || sigaction(SIGSEGV, NULL, &before) || deny_userfaultfd())
		return 10;
	mmext_probe_reset();
	ret = open_watch(p, 4 * psz, MMEXT_WW_AUTO, &w);
	if (ret && ret != -EOPNOTSUPP)
		return 2;
	if (sigaction(SIGSEGV, NULL, &sa) || sa.sa_handler != before.sa_handler)
		return 3;	/* a handler was installed behind our back */
	return 0;
}

TEST(auto_never_installs_a_signal_handler)
{
	/* Without filter support a NULL program is EINVAL, with it EFAULT. */
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) && errno == EINVAL)
		SKIP(return, "no seccomp filters in this kernel (CONFIG_SECCOMP_FILTER)");
	EXPECT_EXIT0(t_status_of(auto_without_userfaultfd, NULL, 10));
}

/* PAGEMAP_SCAN forced where userfaultfd is denied: -EPERM, as documented. */
static int forced_without_userfaultfd(void *arg)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w = NULL;
	int ret;

	(void)arg;
	if (!p || deny_userfaultfd())
		return 10;
	mmext_probe_reset();
	ret = open_watch(p, 4 * psz, MMEXT_WW_PAGEMAP_SCAN, &w);
	if (ret != -EPERM || w) {
		fprintf(stderr, "#      open: %d (%s)\n", ret, strerror(-ret));
		return 1;
	}
	return 0;
}

TEST(pagemap_scan_forced_without_userfaultfd_is_eperm)
{
	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL, 0, 0) && errno == EINVAL)
		SKIP(return, "no seccomp filters in this kernel (CONFIG_SECCOMP_FILTER)");
	EXPECT_EXIT0(t_status_of(forced_without_userfaultfd, NULL, 10));
}

/* A userfaultfd of the test's own, registered on [p, p + len) for missing pages. */
static int foreign_uffd(char *p, size_t len)
{
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)p, .len = len },
		.mode = UFFDIO_REGISTER_MODE_MISSING,
	};
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (fd < 0)
		return -1;
	if (ioctl(fd, UFFDIO_API, &api) || ioctl(fd, UFFDIO_REGISTER, &reg)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* A failed open leaves the range as it found it: no MADV_NOHUGEPAGE behind. */
TEST(failed_open_leaves_huge_pages_alone)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	char flags[256];
	int fd;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	ASSERT_NE(NULL, p);
	fd = foreign_uffd(p, 4 * psz);
	if (fd < 0)
		SKIP(munmap(p, 4 * psz); return, "userfaultfd: %s", strerror(errno));
	EXPECT_EQ(-EBUSY, open_watch(p, 4 * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	ASSERT_EQ(0, t_vmflags(p, flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " nh")) TH_LOG("%s", flags);
	/* The other userfaultfd's registration is still there. */
	EXPECT_NE(NULL, strstr(flags, " um")) TH_LOG("%s", flags);
	close(fd);
	munmap(p, 4 * psz);
}

struct churn {
	volatile char *area;
	size_t len;
	volatile int stop;
};

static void *write_all_the_time(void *arg)
{
	struct churn *c = arg;
	size_t i = 0;

	while (!c->stop)
		c->area[(i++ * 4096) % c->len] = 1;
	return NULL;
}

/* Opening and closing watches while another thread writes there: never a crash. */
static int close_under_writes(void *arg)
{
	size_t psz = t_psz();
	struct churn c = { .len = 64 * psz };
	struct mmext_ww *w;
	pthread_t t;
	int i;

	c.area = t_map(c.len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	if (!c.area || pthread_create(&t, NULL, write_all_the_time, &c))
		return 10;
	for (i = 0; i < 200; i++) {
		if (open_watch((void *)c.area, c.len, MMEXT_WW_AUTO, &w))
			return 1;
		usleep(100);
		mmext_ww_close(w);
	}
	c.stop = 1;
	pthread_join(t, NULL);
	return 0;
}

TEST(close_while_another_thread_writes)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;

	ASSERT_NE(NULL, p);
	if (open_watch(p, psz, MMEXT_WW_AUTO, &w))
		SKIP(munmap(p, psz); return, "no kernel backend for AUTO");
	mmext_ww_close(w);
	munmap(p, psz);
	EXPECT_EXIT0(t_status_of(close_under_writes, NULL, 20));
}

/* The VMA of a small malloc() block: [heap] unless a sanitizer's allocator serves it. */
static int malloc_vma(volatile char *x, struct mmext_vma *v)
{
	struct mmext_maps *m;
	int ret;

	if (!x || mmext_maps_open(0, NULL, &m))
		return -1;
	ret = mmext_maps_find(m, (uintptr_t)x, 0, v);
	mmext_maps_close(m);
	return ret;
}

/* A watch with backend over [heap]: 0, 10 when malloc() does not use [heap], else 1. */
static int watch_heap(int backend, struct mmext_vma *v, struct mmext_ww **w)
{
	volatile char *x = malloc(64);

	if (malloc_vma(x, v) || v->kind != MMEXT_VMA_HEAP)
		return 10;
	return open_watch((void *)(uintptr_t)v->start, v->end - v->start, backend, w) ? 1 : 0;
}

/* Watching [heap]: the library's own record must not live there. */
static int watch_the_heap(void *arg)
{
	volatile char *x;
	struct mmext_vma v;
	struct mmext_ww *w;
	void *pages[8];
	size_t count = 8;
	int ret = watch_heap(MMEXT_WW_AUTO, &v, &w);

	(void)arg;
	if (ret)
		return ret;
	x = malloc(64);
	x[0] = 1;
	if (mmext_ww_get(w, (void *)(uintptr_t)v.start, v.end - v.start, 0, pages, &count) < 0 ||
	    !count)
		return 2;
	mmext_ww_close(w);
	return 0;
}

/* Soft-dirty over [heap], nothing written: a get+reset, then a get that finds nothing. */
static int sd_heap_stays_clean(void *arg)
{
	struct mmext_vma v;
	struct mmext_ww *w;
	void *pages[8];
	size_t count = 8;
	int ret = watch_heap(MMEXT_WW_SOFT_DIRTY, &v, &w);

	(void)arg;
	if (ret)
		return ret;
	if (mmext_ww_get(w, (void *)(uintptr_t)v.start, v.end - v.start, MMEXT_WW_RESET,
			 pages, &count) < 0)
		return 2;
	count = 8;
	ret = mmext_ww_get(w, (void *)(uintptr_t)v.start, v.end - v.start, 0, pages, &count);
	if (ret < 0 || count) {
		fprintf(stderr, "#      %d, %zu pages written, the first at %p\n", ret, count,
			count ? pages[0] : NULL);
		return 3;
	}
	mmext_ww_close(w);
	return 0;
}

/* fn in a child, where feature f is available and malloc() uses [heap]. */
static void heap_test(struct __test_metadata *_metadata, int f, int (*fn)(void *))
{
	char *x = malloc(64);
	struct mmext_vma v;

	REQUIRE_FEATURE(f);
	ASSERT_EQ(0, malloc_vma(x, &v));
	free(x);
	if (v.kind != MMEXT_VMA_HEAP)
		SKIP(return, "malloc() does not use [heap] here (a sanitizer's allocator)");
	EXPECT_EXIT0(t_status_of(fn, NULL, 10));
}

/* The library's own stores during a get must not show as writes to a watched heap. */
TEST(soft_dirty_get_writes_nothing_to_the_heap)
{
	heap_test(_metadata, MMEXT_FEAT_SOFT_DIRTY, sd_heap_stays_clean);
}

TEST(heap_can_be_watched)
{
	heap_test(_metadata, MMEXT_FEAT_WRITEWATCH, watch_the_heap);
}

/*
 * Every backend value, MPROTECT included: the safety tests below hold each backend
 * that opens on this kernel to the same rules, and skip the others.
 */
static const int every_backend[] = {
	MMEXT_WW_PAGEMAP_SCAN, MMEXT_WW_SOFT_DIRTY, MMEXT_WW_MPROTECT,
};

/*
 * A watch sees writes through this process's page tables only: a fork child's store
 * to shared memory in the range, or pwrite() to the file mapped there, changes the
 * pages without being reported, as the header says.
 */
TEST(writes_by_others_to_shared_memory_are_not_seen)
{
	size_t psz = t_psz(), count;
	int fd = memfd_create("mmext-ww-shared", MFD_CLOEXEC), b, tested = 0, status;
	char *p;
	void *pages[4];
	struct mmext_ww *w;
	pid_t pid;

	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ftruncate(fd, 4 * psz));
	p = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	memset(p, 1, 4 * psz);
	for (b = 0; b < (int)ARRAY_SIZE(every_backend); b++) {
		if (open_watch(p, 4 * psz, every_backend[b], &w))
			continue;
		tested++;
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			p[psz] = 2;
			_exit(0);
		}
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(1, pwrite(fd, "\3", 1, 2 * psz));
		EXPECT_EQ(2, p[psz]);
		EXPECT_EQ(3, p[2 * psz]);
		count = 4;
		EXPECT_EQ(0, mmext_ww_get(w, p, 4 * psz, 0, pages, &count));
		EXPECT_EQ(0, count) TH_LOG("%s", mmext_ww_backend_name(every_backend[b]));
		p[3 * psz] = 4;
		count = 4;
		EXPECT_EQ(0, mmext_ww_get(w, p, 4 * psz, 0, pages, &count));
		EXPECT_EQ(1, count);
		mmext_ww_close(w);
	}
	munmap(p, 4 * psz);
	close(fd);
	if (!tested)
		SKIP(return, "no backend can watch here");
}

/* The permissions column of the /proc/self/maps line of addr into perms[5]; 0 or -1. */
static int t_perms(const void *addr, char perms[5])
{
	unsigned long a = (unsigned long)addr, start, end;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx %4s", &start, &end, perms) == 3 && start <= a && a < end)
			ret = 0;
	fclose(f);
	return ret;
}

struct churn_ww {
	int backend;
	volatile int stop;
};

/* Open and close watches on memory of its own until told to stop. */
static void *open_close_loop(void *arg)
{
	struct churn_ww *c = arg;
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;

	while (p && !c->stop) {
		if (!open_watch(p, 4 * psz, c->backend, &w)) {
			p[psz]++;
			mmext_ww_close(w);
		}
	}
	if (p)
		munmap(p, 4 * psz);
	return NULL;
}

/* pid's wait status within ms milliseconds, or -1 after killing it. */
static int t_wait_ms(pid_t pid, int ms)
{
	int status, i;

	for (i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/*
 * A fork child may close the watches it inherited, whatever the parent's other
 * threads were doing in the library at the time of the fork: the close must finish.
 */
TEST(fork_child_closes_while_threads_open_and_close)
{
	size_t psz = t_psz();
	char *p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct churn_ww c;
	struct mmext_ww *w;
	pthread_t t[2];
	int i, b, k, status, tested = 0;

	ASSERT_NE(NULL, p);
	for (b = 0; b < (int)ARRAY_SIZE(every_backend); b++) {
		if (open_watch(p, 8 * psz, every_backend[b], &w))
			continue;
		tested++;
		c.backend = every_backend[b];
		c.stop = 0;
		for (k = 0; k < 2; k++)
			ASSERT_EQ(0, pthread_create(&t[k], NULL, open_close_loop, &c));
		for (i = 0; i < 40; i++) {
			pid_t pid = fork();

			ASSERT_GE(pid, 0);
			if (!pid) {
				alarm(4);
				mmext_ww_close(w);
				_exit(0);
			}
			status = t_wait_ms(pid, 5000);
			EXPECT_TRUE(status != -1 && WIFEXITED(status) && !WEXITSTATUS(status))
				TH_LOG("%s: fork %d: the child's close did not finish (status %#x)",
				       mmext_ww_backend_name(c.backend), i, status);
			if (_metadata->exit_code == KSFT_FAIL)
				break;
			usleep(1000);
		}
		c.stop = 1;
		for (k = 0; k < 2; k++)
			pthread_join(t[k], NULL);
		mmext_ww_close(w);
		if (_metadata->exit_code == KSFT_FAIL)
			break;
	}
	munmap(p, 8 * psz);
	if (!tested)
		SKIP(return, "no backend can watch here");
}

/*
 * Pid 1 of a pid namespace, watching with soft-dirty, forks pid 1 of another; that
 * child closes the fds it inherited and opens others, as daemons do, and watches
 * memory of its own. The parent's watches are not on the child's list, so it never
 * reads their fds.
 */
static int sd_child_with_its_parents_pid(void *arg)
{
	size_t psz = t_psz();
	char *p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	int status, ret, i;
	pid_t pid;

	(void)arg;
	if (!p || unshare(CLONE_NEWPID))
		return T_NO_STANDIN;
	pid = fork();
	if (pid)
		return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
		       WEXITSTATUS(status) : 1;
	if (open_watch(p, 4 * psz, MMEXT_WW_SOFT_DIRTY, &w))
		_exit(2);
	if (unshare(CLONE_NEWPID))
		_exit(T_NO_STANDIN);
	pid = fork();
	if (!pid) {
		if (getpid() != 1)
			_exit(3);
		syscall(SYS_close_range, 3, ~0U, 0);
		for (i = 0; i < 16; i++)
			open("/dev/null", O_RDONLY);
		ret = open_watch(p + 4 * psz, 4 * psz, MMEXT_WW_SOFT_DIRTY, &w);
		if (ret)
			fprintf(stderr, "#      the child's open: %d (%s)\n", ret, strerror(-ret));
		_exit(ret != 0);
	}
	_exit(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) ?
	      WEXITSTATUS(status) : 1);
}

TEST(soft_dirty_child_with_its_parents_pid)
{
	REQUIRE_FEATURE(MMEXT_FEAT_SOFT_DIRTY);
	T_EXPECT_CHILD_OK(t_status_of(sd_child_with_its_parents_pid, NULL, 10),
			  "cannot make a pid namespace (needs root)");
}

/*
 * A watch whose memory was unmapped and replaced by someone else's: neither the
 * calls on it nor its close may change the new mapping.
 */
TEST(replaced_memory_is_left_alone)
{
	size_t psz = t_psz(), count;
	char *p, *q, perms[5], flags[512];
	struct mmext_ww *w;
	void *pages[8];
	int b, tested = 0;

	for (b = 0; b < (int)ARRAY_SIZE(every_backend); b++) {
		p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
		ASSERT_NE(NULL, p);
		if (open_watch(p, 8 * psz, every_backend[b], &w)) {
			munmap(p, 8 * psz);
			continue;
		}
		tested++;
		p[psz] = 1;
		ASSERT_EQ(0, munmap(p, 8 * psz));
		q = mmap(p, 8 * psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
			 -1, 0);
		ASSERT_EQ(p, q);
		count = 8;
		mmext_ww_get(w, p, 8 * psz, MMEXT_WW_RESET, pages, &count);
		mmext_ww_reset(w, p, 8 * psz);
		mmext_ww_close(w);
		ASSERT_EQ(0, t_perms(p, perms));
		EXPECT_STREQ("r--p", perms) TH_LOG("%s", mmext_ww_backend_name(every_backend[b]));
		ASSERT_EQ(0, t_vmflags(p, flags, sizeof(flags)));
		EXPECT_EQ(NULL, strstr(flags, " nh")) TH_LOG("%s: %s",
			mmext_ww_backend_name(every_backend[b]), flags);
		EXPECT_EQ(NULL, strstr(flags, " uw")) TH_LOG("%s: %s",
			mmext_ww_backend_name(every_backend[b]), flags);
		munmap(p, 8 * psz);
	}
	if (!tested)
		SKIP(return, "no backend can watch here");
}

/*
 * "Is anything written?" on memory the watch did not arm fails as a full get does,
 * rather than calling the new mapping's pages written.
 */
TEST(zero_capacity_get_on_replaced_memory_fails)
{
	size_t psz = t_psz(), count = 0;
	struct mmext_ww *w;
	char *p, *q;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_watch(p, 8 * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	ASSERT_EQ(0, munmap(p, 8 * psz));
	q = mmap(p, 8 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p, q);
	q[0] = 1;
	EXPECT_EQ(-EPERM, mmext_ww_get(w, p, 8 * psz, 0, NULL, &count));
	EXPECT_EQ(0, count);
	mmext_ww_close(w);
	munmap(p, 8 * psz);
}

/*
 * Closing a PAGEMAP_SCAN watch after part of its memory was replaced keeps another
 * userfaultfd's registration of the new memory, and releases the part still watched.
 */
TEST(close_keeps_another_userfaultfds_registration)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_MISSING };
	struct uffdio_api api = { .api = UFFD_API };
	size_t psz = t_psz();
	char *p, *q, flags[512];
	struct mmext_ww *w;
	int uffd;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	p = t_map(8 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_watch(p, 8 * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	ASSERT_EQ(0, munmap(p + 4 * psz, 4 * psz));
	q = mmap(p + 4 * psz, 4 * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	ASSERT_EQ(p + 4 * psz, q);
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (uffd < 0)
		SKIP(mmext_ww_close(w); munmap(p, 8 * psz); return, "userfaultfd: %s",
		     strerror(errno));
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_API, &api));
	reg.range.start = (uintptr_t)q;
	reg.range.len = 4 * psz;
	ASSERT_EQ(0, ioctl(uffd, UFFDIO_REGISTER, &reg));
	mmext_ww_close(w);
	ASSERT_EQ(0, t_vmflags(q, flags, sizeof(flags)));
	EXPECT_NE(NULL, strstr(flags, " um")) TH_LOG("%s", flags);
	ASSERT_EQ(0, t_vmflags(p, flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " uw")) TH_LOG("%s", flags);
	close(uffd);
	munmap(p, 8 * psz);
}

/* The mprotect backend is reserved: asking for it fails and changes nothing. */
TEST(mprotect_backend_is_refused)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct sigaction before, after;
	char perms[5], flags[512];
	struct mmext_ww *w = NULL;
	int ret;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, sigaction(SIGSEGV, NULL, &before));
	ret = open_watch(p, 4 * psz, MMEXT_WW_MPROTECT, &w);
	EXPECT_EQ(-EOPNOTSUPP, ret);
	if (!ret)
		mmext_ww_close(w);
	else
		EXPECT_EQ(NULL, w);
	ASSERT_EQ(0, t_perms(p, perms));
	EXPECT_STREQ("rw-p", perms);
	ASSERT_EQ(0, t_vmflags(p, flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " nh")) TH_LOG("%s", flags);
	ASSERT_EQ(0, sigaction(SIGSEGV, NULL, &after));
	EXPECT_TRUE(before.sa_handler == after.sa_handler) TH_LOG("a SIGSEGV handler was installed");
	munmap(p, 4 * psz);
}

/*
 * A get with reset that fails partway (here: the second half of the range was
 * replaced by memory the watch does not cover) still reports the pages it reset.
 */
TEST(failed_get_reports_what_it_reset)
{
	size_t psz = t_psz(), count = NPAGES;
	char *p = t_map(NPAGES * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	void *pages[NPAGES];
	int ret;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, open_watch(p, NPAGES * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	p[1 * psz] = 1;
	p[2 * psz] = 1;
	p[40 * psz] = 1;
	ASSERT_EQ(p + 32 * psz, mmap(p + 32 * psz, 32 * psz, PROT_READ | PROT_WRITE,
				     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	ret = mmext_ww_get(w, p, NPAGES * psz, MMEXT_WW_RESET, pages, &count);
	EXPECT_GT(0, ret) TH_LOG("returned %d", ret);
	ASSERT_EQ(2, count);
	EXPECT_EQ(p + psz, (char *)pages[0]);
	EXPECT_EQ(p + 2 * psz, (char *)pages[1]);
	/* Reported once: they were reset. */
	count = NPAGES;
	EXPECT_EQ(0, mmext_ww_get(w, p, 32 * psz, 0, pages, &count));
	EXPECT_EQ(0, count);
	mmext_ww_close(w);
	munmap(p, NPAGES * psz);
}

/* Huge pages for the hugetlb tests, reserved by the fixture and given back after. */
FIXTURE(hugetlb) {
	long saved;		/* vm.nr_hugepages before, or -1 when unchanged */
	size_t hpsz;
	char *p;
};

static long read_long(const char *path, const char *key)
{
	char line[256];
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!key && sscanf(line, "%ld", &v) == 1)
			break;
		if (key && !strncmp(line, key, strlen(key)) &&
		    sscanf(line + strlen(key), " %ld", &v) == 1)
			break;
	}
	fclose(f);
	return v;
}

static int write_long(const char *path, long v)
{
	FILE *f = fopen(path, "w");
	int ret;

	if (!f)
		return -1;
	ret = fprintf(f, "%ld\n", v) < 0;
	return fclose(f) || ret ? -1 : 0;
}

#define NR_HUGEPAGES "/proc/sys/vm/nr_hugepages"

FIXTURE_SETUP(hugetlb)
{
	long n = read_long(NR_HUGEPAGES, NULL);

	self->saved = -1;
	self->hpsz = read_long("/proc/meminfo", "Hugepagesize:") * 1024;
	if (n < 0 || self->hpsz <= 0)
		SKIP(return, "no hugetlb support in this kernel");
	if (read_long("/proc/meminfo", "HugePages_Free:") < 2) {
		if (write_long(NR_HUGEPAGES, n + 2))
			SKIP(return, "cannot reserve huge pages: %s: %s", NR_HUGEPAGES,
			     strerror(errno));
		self->saved = n;
	}
	self->p = mmap(NULL, 2 * self->hpsz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (self->p == MAP_FAILED) {
		self->p = NULL;
		if (self->saved >= 0)
			write_long(NR_HUGEPAGES, self->saved);
		SKIP(return, "no free huge pages (%s)", strerror(errno));
	}
	memset(self->p, 1, 2 * self->hpsz);
}

FIXTURE_TEARDOWN(hugetlb)
{
	if (self->p)
		munmap(self->p, 2 * self->hpsz);
	if (self->saved >= 0)
		EXPECT_EQ(0, write_long(NR_HUGEPAGES, self->saved));
}

/*
 * hugetlb memory cannot be reset page by page (a huge page is write-protected whole)
 * and soft-dirty never clears it: every backend refuses it, and leaves it as it was.
 */
TEST_F(hugetlb, hugetlb_range_is_refused)
{
	struct mmext_ww *w = NULL;
	int b, ret, tested = 0;
	char flags[512];
	void *pages[4];
	size_t count;

	for (b = MMEXT_WW_AUTO; b <= MMEXT_WW_MPROTECT; b++) {
		ret = open_watch(self->p, 2 * self->hpsz, b, &w);
		if (ret == -EOPNOTSUPP)
			continue;
		tested++;
		EXPECT_EQ(-EINVAL, ret) TH_LOG("backend %s", mmext_ww_backend_name(b));
		if (ret)
			continue;
		if (mmext_ww_backend(w) == MMEXT_WW_PAGEMAP_SCAN) {
			/* What a watch that took it does with fewer slots than a huge page has. */
			self->p[5] = 2;
			count = 4;
			ret = mmext_ww_get(w, self->p, 2 * self->hpsz, MMEXT_WW_RESET, pages,
					   &count);
			TH_LOG("%s: get+reset with 4 slots: %d (%s)", mmext_ww_backend_name(b),
			       ret, ret < 0 ? strerror(-ret) : "ok");
		}
		mmext_ww_close(w);
	}
	ASSERT_EQ(0, t_vmflags(self->p, flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " uw")) TH_LOG("%s", flags);
	EXPECT_EQ(NULL, strstr(flags, " nh")) TH_LOG("%s", flags);
	if (!tested)
		SKIP(return, "no backend can watch here");
}

/* A range with normal pages before the hugetlb ones is refused as a whole. */
TEST_F(hugetlb, range_ending_in_hugetlb_is_refused)
{
	size_t psz = t_psz();
	char *before = mmap(self->p - psz, psz, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	struct mmext_ww *w;
	int ret;

	if (before != self->p - psz)
		SKIP(return, "the page before the huge pages is taken");
	ret = open_watch(before, psz + self->hpsz, MMEXT_WW_AUTO, &w);
	if (ret == -EOPNOTSUPP)
		SKIP(munmap(before, psz); return, "no kernel backend for AUTO");
	EXPECT_EQ(-EINVAL, ret);
	if (!ret)
		mmext_ww_close(w);
	munmap(before, psz);
}

/* A range inside hugetlb memory but not aligned to its huge pages: the same -EINVAL. */
TEST_F(hugetlb, unaligned_range_in_hugetlb_is_refused)
{
	int backends[] = { MMEXT_WW_AUTO, MMEXT_WW_PAGEMAP_SCAN }, b, ret;
	size_t psz = t_psz();
	struct mmext_ww *w;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	for (b = 0; b < (int)ARRAY_SIZE(backends); b++) {
		ret = open_watch(self->p + psz, psz, backends[b], &w);
		EXPECT_EQ(-EINVAL, ret) TH_LOG("%s", mmext_ww_backend_name(backends[b]));
		if (!ret)
			mmext_ww_close(w);
	}
}

/*
 * A fork child's copy of a PAGEMAP_SCAN watch's userfaultfd must not keep the
 * parent's range registered once the parent closed the watch.
 */
TEST(close_releases_the_range_while_a_child_lives)
{
	size_t psz = t_psz();
	char *p = t_map(4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	char flags[256];
	int fds[2];
	pid_t pid;

	REQUIRE_FEATURE(MMEXT_FEAT_WRITEWATCH);
	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, open_watch(p, 4 * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		close(fds[1]);
		read(fds[0], flags, 1);		/* until the parent is done */
		_exit(0);
	}
	close(fds[0]);
	mmext_ww_close(w);
	ASSERT_EQ(0, t_vmflags(p, flags, sizeof(flags)));
	EXPECT_EQ(NULL, strstr(flags, " uw")) TH_LOG("%s", flags);
	w = NULL;
	EXPECT_EQ(0, open_watch(p, 4 * psz, MMEXT_WW_PAGEMAP_SCAN, &w));
	mmext_ww_close(w);
	close(fds[1]);
	waitpid(pid, NULL, 0);
	munmap(p, 4 * psz);
}

TEST_HARNESS_MAIN
