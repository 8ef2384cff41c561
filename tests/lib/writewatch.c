// SPDX-License-Identifier: GPL-2.0
/*
 * Write watch: the same behaviour tests on every backend (PAGEMAP_SCAN, soft-dirty,
 * mprotect, and the automatic choice), each SKIPping where the kernel lacks it; then
 * backend-specific behaviour (SIGSEGV chaining, EFAULT from system calls, EBUSY) and
 * argument errors.
 */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>

#include "helpers.h"
#include "kselftest_harness.h"

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
FIXTURE_VARIANT_ADD(ww, mprotect) { .backend = MMEXT_WW_MPROTECT };
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
	char line[512], range[64];
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0, found = 0;

	ASSERT_NE(NULL, f);
	snprintf(range, sizeof(range), "%lx-", (unsigned long)self->area);
	while (fgets(line, sizeof(line), f)) {
		if (strchr(line, '-') && strchr(line, ' ') < strchr(line, '-') + 20 &&
		    line[0] != 'V' && strchr("0123456789abcdef", line[0]))
			in = !strncmp(line, range, strlen(range));
		if (in && !strncmp(line, "VmFlags:", 8)) {
			found = 1;
			EXPECT_NE(NULL, strstr(line, " nh")) TH_LOG("%s", line);
		}
	}
	fclose(f);
	EXPECT_TRUE(found);
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

/* The kernel writing on our behalf (read(2) into the range) counts as a write. */
TEST_F(ww, syscall_writes_are_recorded)
{
	int fds[2];

	if (mmext_ww_backend(self->w) == MMEXT_WW_MPROTECT)
		SKIP(return, "mprotect: such system calls fail with EFAULT (documented)");
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

TEST(mprotect_needs_read_write)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;

	ASSERT_NE(NULL, p);
	EXPECT_EQ(-EINVAL, open_watch(p, psz, MMEXT_WW_MPROTECT, &w));
	munmap(p, psz);
}

TEST(mprotect_syscall_into_clean_page_is_efault)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	int fds[2];

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, open_watch(p, psz, MMEXT_WW_MPROTECT, &w));
	ASSERT_EQ(1, write(fds[1], "x", 1));
	errno = 0;
	EXPECT_EQ(-1, read(fds[0], p, 1));
	EXPECT_EQ(EFAULT, errno);
	mmext_ww_close(w);
	/* Closed: the page is writable again. */
	EXPECT_EQ(1, read(fds[0], p, 1));
	close(fds[0]);
	close(fds[1]);
	munmap(p, psz);
}

static sigjmp_buf jump;
static volatile int prev_calls;

static void prev_handler(int sig, siginfo_t *si, void *uc)
{
	prev_calls++;
	siglongjmp(jump, 1);
}

/* Faults the watch does not own reach the handler installed before it. */
TEST(mprotect_chains_to_previous_handler)
{
	struct sigaction sa = { .sa_sigaction = prev_handler, .sa_flags = SA_SIGINFO };
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	char *none = t_map(psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;
	size_t count = 1;
	void *page;

	ASSERT_NE(NULL, p);
	ASSERT_NE(NULL, none);
	sigemptyset(&sa.sa_mask);
	ASSERT_EQ(0, sigaction(SIGSEGV, &sa, NULL));
	ASSERT_EQ(0, open_watch(p, psz, MMEXT_WW_MPROTECT, &w));
	p[0] = 1;			/* ours: recorded, not passed on */
	EXPECT_EQ(0, prev_calls);
	if (!sigsetjmp(jump, 1))
		((volatile char *)none)[0] = 1;	/* not ours */
	EXPECT_EQ(1, prev_calls);
	ASSERT_EQ(0, mmext_ww_get(w, p, psz, 0, &page, &count));
	EXPECT_EQ(1, count);
	EXPECT_EQ(p, page);
	mmext_ww_close(w);
}

static int crash_outside_watch(void *arg)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	char *none = t_map(psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_ww *w;

	signal(SIGSEGV, SIG_DFL);
	if (!p || !none || open_watch(p, psz, MMEXT_WW_MPROTECT, &w))
		return 2;
	((volatile char *)none)[0] = 1;
	return 3;	/* must not get here */
}

TEST(mprotect_default_action_still_kills)
{
	int status;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(crash_outside_watch(NULL));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFSIGNALED(status)) TH_LOG("status %#x", status);
	if (WIFSIGNALED(status))
		EXPECT_EQ(SIGSEGV, WTERMSIG(status));
}

TEST_HARNESS_MAIN
