// SPDX-License-Identifier: GPL-2.0
/*
 * PAGEMAP_SCAN on /proc/self/pagemap with userfaultfd async write-protection:
 * exact written-page tracking, atomic re-protection with PM_SCAN_WP_MATCHING,
 * resuming partial walks through walk_end, and argument validation.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>

#include "harness.h"

/* Pages under test; a page set is a bit mask in one uint64_t. */
#define NPAGES		64
#define ALL_PAGES	(~0ULL)
/* /proc/PID/pagemap entry bits (Documentation/admin-guide/mm/pagemap.rst). */
#define PM_UFFD_WP	(1ULL << 57)
#define PM_PRESENT	(1ULL << 63)

/* An address no user mapping can have on 64-bit, whatever the tagging. */
#define KERNEL_ADDR	0xffff800000000000ULL

static uint64_t page_bit(unsigned int i)
{
	return 1ULL << i;
}

static unsigned int npages_in(uint64_t set)
{
	return __builtin_popcountll(set);
}

/* Maximal runs of consecutive pages in a set. */
static unsigned int runs_in(uint64_t set)
{
	return npages_in(set & ~(set << 1));
}

/* The @n lowest pages of @set. */
static uint64_t lowest_pages(uint64_t set, unsigned int n)
{
	uint64_t out = 0;

	while (n-- && set) {
		out |= set & -set;
		set &= set - 1;
	}
	return out;
}

/* A random page set with between @min and NPAGES - @min pages. */
static uint64_t random_pages(unsigned int *seed, unsigned int min)
{
	uint64_t set;
	int i;

	do {
		set = 0;
		for (i = 0; i < NPAGES; i++)
			if (rand_r(seed) & 1)
				set |= page_bit(i);
	} while (npages_in(set) < min || npages_in(set) > NPAGES - min);
	return set;
}

/* Returns 0 if a valid, empty PAGEMAP_SCAN works on @fd, else the errno. */
static int pagemap_scan_supported(int fd, void *addr)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)addr,
		.end = (uintptr_t)addr,
		.return_mask = PAGE_IS_WRITTEN,
	};

	return ioctl(fd, PAGEMAP_SCAN, &arg) < 0 ? errno : 0;
}

/*
 * A userfaultfd for our own faults only. Unprivileged users get one only with
 * UFFD_USER_MODE_ONLY (vm.unprivileged_userfaultfd=0); kernels before 5.11 do
 * not know that flag, and root can also use /dev/userfaultfd.
 */
static int uffd_open(void)
{
	int fd, dev, err;

	fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd >= 0)
		return fd;
	err = errno;
	if (err == EINVAL) {
		fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK);
		if (fd >= 0)
			return fd;
	}
	dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -err;
	fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		err = errno;
	close(dev);
	return fd >= 0 ? fd : -err;
}

/*
 * Enables async write-protection. 6.12 turns WP_UNPOPULATED on with WP_ASYNC
 * anyway, but ask for it explicitly and retry without it in case a kernel
 * refuses it. Returns 0 or an errno; *unpopulated tells whether it was granted.
 */
static int uffd_enable_wp_async(int uffd, bool *unpopulated)
{
	struct uffdio_api api = {
		.api = UFFD_API,
		.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED,
	};

	*unpopulated = true;
	if (!ioctl(uffd, UFFDIO_API, &api))
		return 0;
	if (errno != EINVAL)
		return errno;
	*unpopulated = false;
	api.api = UFFD_API;
	api.features = UFFD_FEATURE_WP_ASYNC;
	return ioctl(uffd, UFFDIO_API, &api) ? errno : 0;
}

/* Fills the arguments of a written-page scan of [start, end). */
static struct pm_scan_arg written_scan(unsigned long start, unsigned long end,
				       struct page_region *vec, size_t vec_len,
				       __u64 flags)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.flags = flags,
		.start = start,
		.end = end,
		.vec = (uintptr_t)vec,
		.vec_len = vec_len,
		.category_mask = PAGE_IS_WRITTEN,
		.return_mask = PAGE_IS_WRITTEN,
	};

	return arg;
}

/*
 * Runs one scan that must succeed and adds the pages it reports to *@set
 * (page i is at base + i * psz). Checks the regions are well formed: page
 * aligned, non-empty, ascending, disjoint, not adjacent to one another (equal
 * neighbours are merged), inside [start, walk_end) and carrying exactly @cats.
 * Returns the number of regions.
 */
static long scan_into(struct __test_metadata *_metadata, int fd,
		      struct pm_scan_arg *arg, unsigned long base, size_t psz,
		      __u64 cats, uint64_t *set)
{
	struct page_region *vec = (struct page_region *)(uintptr_t)arg->vec;
	unsigned long addr, prev_end = 0;
	long n, i;

	n = ioctl(fd, PAGEMAP_SCAN, arg);
	ASSERT_GE(n, 0) TH_LOG("PAGEMAP_SCAN failed: %s", strerror(errno));
	ASSERT_LE(n, arg->vec_len);
	ASSERT_GE(arg->walk_end, arg->start);
	ASSERT_LE(arg->walk_end, (arg->end + psz - 1) & ~(psz - 1));
	for (i = 0; i < n; i++) {
		ASSERT_EQ(vec[i].start % psz, 0);
		ASSERT_EQ(vec[i].end % psz, 0);
		ASSERT_LT(vec[i].start, vec[i].end);
		ASSERT_GE(vec[i].start, arg->start);
		ASSERT_LE(vec[i].end, arg->walk_end);
		if (i)
			ASSERT_GT(vec[i].start, prev_end);
		ASSERT_EQ(vec[i].categories, cats);
		for (addr = vec[i].start; addr < vec[i].end; addr += psz) {
			ASSERT_GE(addr, base);
			ASSERT_LT((addr - base) / psz, NPAGES);
			*set |= page_bit((addr - base) / psz);
		}
		prev_end = vec[i].end;
	}
	return n;
}

FIXTURE(wp)
{
	int pagemap;
	int uffd;
	char *mem;	/* NPAGES write-protected pages, then an unregistered one */
	size_t psz;
	size_t len;	/* of the registered part */
	unsigned int seed;	/* state of the random page sets */
	unsigned int seed0;	/* its initial value, logged on failure */
};

FIXTURE_VARIANT(wp)
{
	int map_flags;
};

FIXTURE_VARIANT_ADD(wp, anon)
{
	.map_flags = MAP_PRIVATE | MAP_ANONYMOUS,
};

FIXTURE_VARIANT_ADD(wp, shmem)
{
	.map_flags = MAP_SHARED | MAP_ANONYMOUS,
};

FIXTURE_SETUP(wp)
{
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	const char *seed;
	bool unpopulated;
	int err;

	self->psz = getpagesize();
	self->len = NPAGES * self->psz;
	/* Random page sets; PAGEMAP_SCAN_SEED=<seed> replays a logged run. */
	seed = getenv("PAGEMAP_SCAN_SEED");
	self->seed0 = seed ? strtoul(seed, NULL, 0) : time(NULL) ^ getpid();
	self->seed = self->seed0;
	self->uffd = -1;

	self->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(self->pagemap, 0);
	self->mem = mmap(NULL, self->len + self->psz, PROT_READ | PROT_WRITE,
			 variant->map_flags, -1, 0);
	ASSERT_NE(self->mem, MAP_FAILED);

	err = pagemap_scan_supported(self->pagemap, self->mem);
	if (err == ENOTTY || err == EINVAL)
		SKIP(return, "no PAGEMAP_SCAN: %s", strerror(err));
	ASSERT_EQ(err, 0);

	self->uffd = uffd_open();
	if (self->uffd < 0)
		SKIP(return, "no userfaultfd: %s", strerror(-self->uffd));
	err = uffd_enable_wp_async(self->uffd, &unpopulated);
	if (err)
		SKIP(return, "no UFFD_FEATURE_WP_ASYNC: %s", strerror(err));
	/* Without markers on empty ptes, anonymous memory is not WPALLOWED. */
	if (!unpopulated && !(variant->map_flags & MAP_SHARED))
		SKIP(return, "no UFFD_FEATURE_WP_UNPOPULATED for anonymous memory");

	/* Keep the pages small: THP splitting is not what is under test. */
	if (madvise(self->mem, self->len + self->psz, MADV_NOHUGEPAGE))
		ASSERT_EQ(errno, EINVAL);	/* !CONFIG_TRANSPARENT_HUGEPAGE */

	reg.range.start = (uintptr_t)self->mem;
	reg.range.len = self->len;
	if (ioctl(self->uffd, UFFDIO_REGISTER, &reg)) {
		err = errno;
		if (err == EINVAL)
			SKIP(return, "uffd-wp unsupported on this memory: %s",
			     strerror(err));
		ASSERT_EQ(err, 0) TH_LOG("UFFDIO_REGISTER: %s", strerror(err));
	}
	wp.range = reg.range;
	ASSERT_EQ(ioctl(self->uffd, UFFDIO_WRITEPROTECT, &wp), 0)
		TH_LOG("UFFDIO_WRITEPROTECT: %s", strerror(errno));
}

FIXTURE_TEARDOWN(wp)
{
	munmap(self->mem, self->len + self->psz);
	if (self->uffd >= 0)
		close(self->uffd);
	close(self->pagemap);
}

static unsigned long page_addr(FIXTURE_DATA(wp) *self, unsigned int i)
{
	return (uintptr_t)self->mem + (unsigned long)i * self->psz;
}

/* Writes @val + page index to the first byte of every page in @set. */
static void write_pages(FIXTURE_DATA(wp) *self, uint64_t set, char val)
{
	unsigned int i;

	for (i = 0; i < NPAGES; i++)
		if (set & page_bit(i))
			*(volatile char *)page_addr(self, i) = val + i;
}

static void read_pages(FIXTURE_DATA(wp) *self, uint64_t set)
{
	unsigned int i;

	for (i = 0; i < NPAGES; i++)
		if (set & page_bit(i))
			(void)*(volatile char *)page_addr(self, i);
}

/* One full scan of the registered range for written pages. */
static uint64_t written_now(struct __test_metadata *_metadata,
			    FIXTURE_DATA(wp) *self, __u64 flags, long *nregions)
{
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES),
					      vec, NPAGES, flags);
	uint64_t set = 0;
	long n;

	n = scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		      self->psz, PAGE_IS_WRITTEN, &set);
	EXPECT_EQ(arg.walk_end, arg.end);
	if (nregions)
		*nregions = n;
	return set;
}

TEST_F(wp, registered_range_is_wpallowed)
{
	struct page_region vec[4];
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = page_addr(self, 0),
		.end = page_addr(self, NPAGES + 1),	/* with the tail page */
		.vec = (uintptr_t)vec,
		.vec_len = 4,
		.category_mask = PAGE_IS_WPALLOWED,
		.return_mask = PAGE_IS_WPALLOWED,
	};

	ASSERT_EQ(ioctl(self->pagemap, PAGEMAP_SCAN, &arg), 1);
	EXPECT_EQ(vec[0].start, page_addr(self, 0));
	EXPECT_EQ(vec[0].end, page_addr(self, NPAGES));
	EXPECT_EQ(vec[0].categories, PAGE_IS_WPALLOWED);
	EXPECT_EQ(arg.walk_end, arg.end);
}

TEST_F(wp, fresh_protection_reports_nothing_written)
{
	long n;

	EXPECT_EQ(written_now(_metadata, self, 0, &n), 0);
	EXPECT_EQ(n, 0);
}

TEST_F(wp, written_pages_reported_exactly)
{
	uint64_t want = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;
	uint64_t got;
	long n;

	write_pages(self, want, 1);
	got = written_now(_metadata, self, 0, &n);
	ASSERT_EQ(got, want) TH_LOG("seed %u", seed);
	/* Consecutive written pages come back as one region. */
	EXPECT_EQ(n, runs_in(want)) TH_LOG("seed %u", seed);
}

TEST_F(wp, reads_not_reported_as_written)
{
	uint64_t reads = random_pages(&self->seed, 1);
	uint64_t writes = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;

	read_pages(self, reads);
	write_pages(self, writes, 1);
	read_pages(self, ~writes);
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), writes)
		TH_LOG("seed %u", seed);
}

/* The generic (non fast-path) walk, reporting more categories. */
TEST_F(wp, written_page_categories)
{
	uint64_t want = random_pages(&self->seed, 1), got = 0;
	unsigned int seed = self->seed0;
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES),
					      vec, NPAGES, 0);
	__u64 cats = PAGE_IS_WRITTEN | PAGE_IS_PRESENT | PAGE_IS_WPALLOWED;

	/* shmem pages are page cache pages, not anonymous ones. */
	if (variant->map_flags & MAP_SHARED)
		cats |= PAGE_IS_FILE;
	arg.return_mask = PAGE_IS_WRITTEN | PAGE_IS_PRESENT |
			  PAGE_IS_WPALLOWED | PAGE_IS_FILE;
	write_pages(self, want, 1);
	scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		  self->psz, cats, &got);
	ASSERT_EQ(got, want) TH_LOG("seed %u", seed);
}

TEST_F(wp, unwritten_pages_via_inverted_category)
{
	uint64_t written = random_pages(&self->seed, 1), got = 0;
	unsigned int seed = self->seed0;
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES),
					      vec, NPAGES, 0);

	arg.category_inverted = PAGE_IS_WRITTEN;
	write_pages(self, written, 1);
	/* Returned categories are not inverted: WRITTEN reads as 0. */
	scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		  self->psz, 0, &got);
	ASSERT_EQ(got, ~written) TH_LOG("seed %u", seed);
}

TEST_F(wp, wp_matching_reprotects_reported_pages)
{
	uint64_t first = random_pages(&self->seed, 1);
	uint64_t second = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0, i;
	char want;

	write_pages(self, first, 1);
	ASSERT_EQ(written_now(_metadata, self, PM_SCAN_WP_MATCHING, NULL), first)
		TH_LOG("seed %u", seed);
	/* Everything reported is protected again, nothing else changed. */
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), 0);
	write_pages(self, second, 65);
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), second)
		TH_LOG("seed %u", seed);
	/* Re-protection kept the data. */
	for (i = 0; i < NPAGES; i++) {
		want = second & page_bit(i) ? 65 + i : first & page_bit(i) ? 1 + i : 0;
		ASSERT_EQ(*(char *)page_addr(self, i), want)
			TH_LOG("page %u, seed %u", i, seed);
	}
}

TEST_F(wp, wp_matching_without_output_vector)
{
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES),
					      NULL, 0, PM_SCAN_WP_MATCHING);
	uint64_t set = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;

	write_pages(self, set, 1);
	ASSERT_EQ(ioctl(self->pagemap, PAGEMAP_SCAN, &arg), 0);
	EXPECT_EQ(arg.walk_end, arg.end);
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), 0) TH_LOG("seed %u", seed);
	write_pages(self, set, 2);
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), set) TH_LOG("seed %u", seed);
}

/* Only the pages reported under max_pages get protected again. */
TEST_F(wp, wp_matching_stops_at_max_pages)
{
	uint64_t written = random_pages(&self->seed, 8), got = 0, first;
	unsigned int seed = self->seed0, k = 5;
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES),
					      vec, NPAGES, PM_SCAN_WP_MATCHING);

	arg.max_pages = k;
	write_pages(self, written, 1);
	first = lowest_pages(written, k);
	scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		  self->psz, PAGE_IS_WRITTEN, &got);
	ASSERT_EQ(got, first) TH_LOG("seed %u", seed);
	/* Stopped after the last reported page, before the next written one. */
	EXPECT_GE(arg.walk_end, page_addr(self, 63 - __builtin_clzll(first) + 1));
	EXPECT_LE(arg.walk_end,
		  page_addr(self, __builtin_ctzll(written & ~first)));
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), written & ~first)
		TH_LOG("seed %u", seed);
}

/*
 * Scans [start, end) in as many calls as it takes, resuming at walk_end, and
 * returns the union of the reports. Each call must make progress and respect
 * vec_len and max_pages.
 */
static uint64_t scan_in_pieces(struct __test_metadata *_metadata,
			       FIXTURE_DATA(wp) *self, size_t vec_len,
			       __u64 max_pages, __u64 flags)
{
	unsigned long start = page_addr(self, 0), end = page_addr(self, NPAGES);
	struct page_region vec[NPAGES];
	uint64_t all = 0, got;
	int calls = 0;

	while (start < end) {
		struct pm_scan_arg arg = written_scan(start, end, vec, vec_len,
						      flags);

		arg.max_pages = max_pages;
		got = 0;
		scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
			  self->psz, PAGE_IS_WRITTEN, &got);
		if (max_pages)
			ASSERT_LE(npages_in(got), max_pages);
		ASSERT_EQ(got & all, 0);	/* nothing reported twice */
		ASSERT_GT(arg.walk_end, start);	/* progress */
		if (!got)
			ASSERT_EQ(arg.walk_end, end);
		all |= got;
		start = arg.walk_end;
		ASSERT_LT(++calls, 2 * NPAGES + 2);
	}
	ASSERT_EQ(start, end);
	return all;
}

TEST_F(wp, walk_end_resume_with_tiny_vec)
{
	uint64_t want = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;
	size_t vec_len;

	write_pages(self, want, 1);
	for (vec_len = 1; vec_len <= 2; vec_len++)
		ASSERT_EQ(scan_in_pieces(_metadata, self, vec_len, 0, 0), want)
			TH_LOG("vec_len %zu, seed %u", vec_len, seed);
}

TEST_F(wp, walk_end_resume_with_max_pages)
{
	static const struct { size_t vec_len; __u64 max_pages; } cases[] = {
		{ NPAGES, 1 }, { NPAGES, 3 }, { 2, 5 }, { 1, 2 },
	};
	uint64_t want = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0, i;

	write_pages(self, want, 1);
	for (i = 0; i < ARRAY_SIZE(cases); i++)
		ASSERT_EQ(scan_in_pieces(_metadata, self, cases[i].vec_len,
					 cases[i].max_pages, 0), want)
			TH_LOG("vec_len %zu, max_pages %llu, seed %u",
			       cases[i].vec_len,
			       (unsigned long long)cases[i].max_pages, seed);
}

TEST_F(wp, walk_end_resume_with_wp_matching)
{
	uint64_t want = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;

	write_pages(self, want, 1);
	ASSERT_EQ(scan_in_pieces(_metadata, self, 1, 3, PM_SCAN_WP_MATCHING),
		  want) TH_LOG("seed %u", seed);
	ASSERT_EQ(written_now(_metadata, self, 0, NULL), 0) TH_LOG("seed %u", seed);
}

TEST_F(wp, unaligned_end_rounded_up)
{
	struct page_region vec[2];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES - 1) + 1,
					      vec, 2, 0);
	uint64_t got = 0;

	write_pages(self, page_bit(NPAGES - 1), 1);
	scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		  self->psz, PAGE_IS_WRITTEN, &got);
	EXPECT_EQ(got, page_bit(NPAGES - 1));
	EXPECT_EQ(arg.walk_end, page_addr(self, NPAGES));
}

TEST_F(wp, empty_range_returns_nothing)
{
	struct page_region vec[2];
	struct pm_scan_arg arg = written_scan(page_addr(self, 1),
					      page_addr(self, 1), vec, 2, 0);

	write_pages(self, ALL_PAGES, 1);
	ASSERT_EQ(ioctl(self->pagemap, PAGEMAP_SCAN, &arg), 0);
	EXPECT_EQ(arg.walk_end, arg.end);
}

TEST_F(wp, check_wpasync_registered_range_succeeds)
{
	uint64_t set = random_pages(&self->seed, 1);
	unsigned int seed = self->seed0;

	write_pages(self, set, 1);
	ASSERT_EQ(written_now(_metadata, self, PM_SCAN_CHECK_WPASYNC, NULL), set)
		TH_LOG("seed %u", seed);
}

TEST_F(wp, check_wpasync_partly_unregistered_eperm)
{
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES + 1),
					      vec, NPAGES, PM_SCAN_CHECK_WPASYNC);

	ASSERT_EQ(ioctl(self->pagemap, PAGEMAP_SCAN, &arg), -1);
	EXPECT_EQ(errno, EPERM);
}

/* Without CHECK_WPASYNC, WP_MATCHING quietly skips what uffd does not cover. */
TEST_F(wp, wp_matching_skips_unregistered_vma)
{
	uint64_t set = random_pages(&self->seed, 1), got = 0, entry;
	unsigned int seed = self->seed0;
	struct page_region vec[NPAGES];
	struct pm_scan_arg arg = written_scan(page_addr(self, 0),
					      page_addr(self, NPAGES + 1),
					      vec, NPAGES, PM_SCAN_WP_MATCHING);
	char *tail = (char *)page_addr(self, NPAGES);

	write_pages(self, set, 1);
	*(volatile char *)tail = 1;
	scan_into(_metadata, self->pagemap, &arg, page_addr(self, 0),
		  self->psz, PAGE_IS_WRITTEN, &got);
	ASSERT_EQ(got, set) TH_LOG("seed %u", seed);

	/*
	 * The tail was left alone: still present and not write-protected. Read
	 * from its pagemap entry: PAGEMAP_SCAN reports pages outside uffd-wp
	 * VMAs as written up to 6.18 and as not written in 7.3.
	 */
	ASSERT_EQ(pread(self->pagemap, &entry, sizeof(entry),
			(uintptr_t)tail / self->psz * sizeof(entry)), sizeof(entry));
	EXPECT_TRUE(entry & PM_PRESENT);
	EXPECT_FALSE(entry & PM_UFFD_WP);
	EXPECT_EQ(written_now(_metadata, self, 0, NULL), 0);
}

/* Argument checking, on memory not registered with userfaultfd. */
FIXTURE(args)
{
	int pagemap;
	char *mem;	/* ARGS_PAGES pages, all written */
	size_t psz;
	struct page_region vec[4];
	struct pm_scan_arg arg;	/* a valid scan of mem */
};

#define ARGS_PAGES 4

FIXTURE_SETUP(args)
{
	int err;

	self->psz = getpagesize();
	self->pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(self->pagemap, 0);
	self->mem = mmap(NULL, ARGS_PAGES * self->psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(self->mem, MAP_FAILED);
	memset(self->mem, 1, ARGS_PAGES * self->psz);

	err = pagemap_scan_supported(self->pagemap, self->mem);
	if (err == ENOTTY || err == EINVAL)
		SKIP(return, "no PAGEMAP_SCAN: %s", strerror(err));
	ASSERT_EQ(err, 0);

	/* Present, not written: 7.3 reports no page outside uffd-wp VMAs as written. */
	self->arg = written_scan((uintptr_t)self->mem,
				 (uintptr_t)self->mem + ARGS_PAGES * self->psz,
				 self->vec, 4, 0);
	self->arg.category_mask = PAGE_IS_PRESENT;
	self->arg.return_mask = PAGE_IS_PRESENT;
}

FIXTURE_TEARDOWN(args)
{
	munmap(self->mem, ARGS_PAGES * self->psz);
	close(self->pagemap);
}

static int scan_errno(int fd, void *arg)
{
	return ioctl(fd, PAGEMAP_SCAN, arg) < 0 ? errno : 0;
}

/* The control for the tests below: the unmodified arguments work. */
TEST_F(args, valid_scan_succeeds)
{
	ASSERT_EQ(ioctl(self->pagemap, PAGEMAP_SCAN, &self->arg), 1);
	EXPECT_EQ(self->vec[0].start, (uintptr_t)self->mem);
	EXPECT_EQ(self->vec[0].end, (uintptr_t)self->mem + ARGS_PAGES * self->psz);
	EXPECT_EQ(self->vec[0].categories, PAGE_IS_PRESENT);
	EXPECT_EQ(self->arg.walk_end, self->arg.end);
}

TEST_F(args, size_zero_einval)
{
	self->arg.size = 0;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
}

TEST_F(args, size_smaller_than_struct_einval)
{
	self->arg.size = sizeof(self->arg) - sizeof(__u64);
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
}

/*
 * Unlike most extensible ioctls, PAGEMAP_SCAN does not use
 * copy_struct_from_user(): any size but its own is EINVAL, even with a tail
 * of zeroes.
 */
TEST_F(args, size_larger_than_struct_einval)
{
	struct {
		struct pm_scan_arg arg;
		__u64 tail[2];
	} big = { .arg = self->arg };

	big.arg.size = sizeof(big);
	EXPECT_EQ(scan_errno(self->pagemap, &big), EINVAL);
	big.tail[1] = 1;
	EXPECT_EQ(scan_errno(self->pagemap, &big), EINVAL);
}

TEST_F(args, unknown_flags_einval)
{
	self->arg.flags = PM_SCAN_CHECK_WPASYNC << 1;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
	self->arg.flags = 1ULL << 63;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
}

/* Returns the arguments with @bits added to one of the four category masks. */
static struct pm_scan_arg with_category_bits(struct pm_scan_arg arg, int which,
					     __u64 bits)
{
	__u64 *masks[] = { &arg.category_inverted, &arg.category_mask,
			   &arg.category_anyof_mask, &arg.return_mask };

	*masks[which] |= bits;
	return arg;
}

TEST_F(args, unknown_category_bits_einval)
{
	struct pm_scan_arg arg;
	int which;

	for (which = 0; which < 4; which++) {
		arg = with_category_bits(self->arg, which, 1ULL << 63);
		EXPECT_EQ(scan_errno(self->pagemap, &arg), EINVAL)
			TH_LOG("mask %d", which);
		arg = with_category_bits(self->arg, which, 1ULL << 40);
		EXPECT_EQ(scan_errno(self->pagemap, &arg), EINVAL)
			TH_LOG("mask %d", which);
	}
}

/* Whether the running kernel is at least @major.@minor. */
static bool kernel_at_least(unsigned int major, unsigned int minor)
{
	struct utsname u;
	unsigned int ma = 0, mi = 0;

	if (uname(&u) || sscanf(u.release, "%u.%u", &ma, &mi) != 2)
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/*
 * Bit 8 follows PAGE_IS_SOFT_DIRTY, the last category in 6.12, so 6.12 rejects
 * it. 6.15 made it PAGE_IS_GUARD (guard regions), so newer kernels take it.
 */
TEST_F(args, category_bit_after_soft_dirty)
{
	bool known = kernel_at_least(6, 15);
	struct pm_scan_arg arg;
	int which;

	for (which = 0; which < 4; which++) {
		arg = with_category_bits(self->arg, which, PAGE_IS_SOFT_DIRTY << 1);
		EXPECT_EQ(scan_errno(self->pagemap, &arg), known ? 0 : EINVAL)
			TH_LOG("mask %d", which);
	}
}

TEST_F(args, all_known_category_bits_accepted)
{
	self->arg.return_mask = (PAGE_IS_SOFT_DIRTY << 1) - 1;
	self->arg.category_anyof_mask = self->arg.return_mask;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), 0);
}

TEST_F(args, unaligned_start_einval)
{
	self->arg.start += 1;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
}

/* end - start wraps around and fails the access_ok() check on the range. */
TEST_F(args, end_before_start_efault)
{
	self->arg.end = self->arg.start - self->psz;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
}

TEST_F(args, kernel_range_efault)
{
	self->arg.start = KERNEL_ADDR;
	self->arg.end = KERNEL_ADDR + self->psz;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
}

TEST_F(args, vec_null_with_len_einval)
{
	self->arg.vec = 0;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EINVAL);
}

TEST_F(args, vec_len_overflow_efault)
{
	self->arg.vec_len = 1ULL << 60;	/* * sizeof(page_region) overflows */
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
}

TEST_F(args, vec_kernel_address_efault)
{
	self->arg.vec = KERNEL_ADDR;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
}

TEST_F(args, vec_unmapped_efault)
{
	void *hole = mmap(NULL, self->psz, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(hole, MAP_FAILED);
	ASSERT_EQ(munmap(hole, self->psz), 0);
	self->arg.vec = (uintptr_t)hole;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
}

TEST_F(args, vec_read_only_efault)
{
	void *ro = mmap(NULL, self->psz, PROT_READ,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(ro, MAP_FAILED);
	self->arg.vec = (uintptr_t)ro;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EFAULT);
	munmap(ro, self->psz);
}

TEST_F(args, arg_unmapped_efault)
{
	void *hole = mmap(NULL, self->psz, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(hole, MAP_FAILED);
	ASSERT_EQ(munmap(hole, self->psz), 0);
	EXPECT_EQ(scan_errno(self->pagemap, hole), EFAULT);
	EXPECT_EQ(scan_errno(self->pagemap, NULL), EFAULT);
}

TEST_F(args, check_wpasync_unregistered_eperm)
{
	self->arg.flags = PM_SCAN_CHECK_WPASYNC;
	EXPECT_EQ(scan_errno(self->pagemap, &self->arg), EPERM);
}

TEST_HARNESS_MAIN
