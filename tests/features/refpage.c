// SPDX-License-Identifier: GPL-2.0
/*
 * Reference pages where they differ from anonymous memory, because a
 * mapping of one is a private file mapping: each behaviour refpage_create(2)
 * documents is pinned here. VMAs do not merge across mmap() calls (offsets must
 * be 0) but do after a split; mremap() grows them in place; never THP; no anon
 * names (EBADF); no MADV_WIPEONFORK (EINVAL; MADV_DONTFORK works); userfaultfd
 * missing mode only, so PAGEMAP_SCAN cannot track writes, while soft-dirty can.
 * Every test SKIPs without the mmext refpage patch; HMM and CRIU are documented
 * only (the test kernels have no HMM device, the guests no CRIU).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/prctl.h>
#include <linux/userfaultfd.h>

#include "harness.h"
#include "markers.h"

#ifndef REFPAGE_CLOEXEC
#define REFPAGE_CLOEXEC 0x0001U
#endif
#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

#define HUGE_SZ (2UL << 20)

/* The VMA containing addr: bounds, and its maps line into line. 0, or -1 if none. */
static int vma_of(const void *addr, unsigned long *start, unsigned long *end, char *line,
		  size_t size)
{
	unsigned long a = (unsigned long)addr, s, e;
	char buf[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "%lx-%lx ", &s, &e) != 2 || a < s || a >= e)
			continue;
		if (start)
			*start = s;
		if (end)
			*end = e;
		if (line)
			snprintf(line, size, "%s", buf);
		ret = 0;
	}
	fclose(f);
	return ret;
}

/* A field of addr's VMA in smaps: the kB value, or for VmFlags the line in buf. */
static long smaps_field(const void *addr, const char *field, char *buf, size_t size)
{
	unsigned long a = (unsigned long)addr, s, e;
	char line[512];
	size_t flen = strlen(field);
	FILE *f = fopen("/proc/self/smaps", "r");
	bool in = false;
	long val = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, ' ') > strchr(line, '-')) {
			in = a >= s && a < e;
			continue;
		}
		if (!in || strncmp(line, field, flen) || line[flen] != ':')
			continue;
		if (buf)
			snprintf(buf, size, "%s", line);
		val = strtol(line + flen + 1, NULL, 10);
		break;
	}
	fclose(f);
	return val;
}

/* Whether VmFlags of addr's VMA holds the two-letter flag. */
static bool has_vmflag(const void *addr, const char *flag)
{
	char line[512], want[8];

	if (smaps_field(addr, "VmFlags", line, sizeof(line)) < 0)
		return false;
	snprintf(want, sizeof(want), " %s", flag);
	line[strcspn(line, "\n")] = ' ';
	return strstr(line, want) && strstr(line, want)[3] == ' ';
}

/* A userfaultfd (user-mode faults only, else /dev/userfaultfd) with features. */
static int uffd_open(uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };
	int fd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);

	if (fd < 0) {
		int dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);

		if (dev < 0)
			return -1;
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC);
		close(dev);
		if (fd < 0)
			return -1;
	}
	if (ioctl(fd, UFFDIO_API, &api)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int uffd_register(int uffd, void *addr, size_t len, uint64_t mode)
{
	struct uffdio_register reg = {
		.range = { .start = (uintptr_t)addr, .len = len },
		.mode = mode,
	};

	return ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
}

FIXTURE(refpage) {
	long nr;
	size_t psz;
	unsigned char *content;
	int fd;
};

FIXTURE_SETUP(refpage)
{
	self->fd = -1;
	self->content = NULL;
	self->nr = t_refpage_nr();
	if (self->nr < 0)
		SKIP(return, "no reference pages: neither " T_REFPAGE_NR_FILE " nor "
		     T_REFPAGE_PAGES_FILE " (not an mmext kernel)");
	self->psz = getpagesize();
	self->content = aligned_alloc(self->psz, self->psz);
	ASSERT_NE(NULL, self->content);
	memset(self->content, 0xa5, self->psz);
	self->fd = syscall(self->nr, self->content, REFPAGE_CLOEXEC);
	ASSERT_LE(0, self->fd) TH_LOG("refpage_create: %s", strerror(errno));
}

FIXTURE_TEARDOWN(refpage)
{
	if (self->fd >= 0)
		close(self->fd);
	free(self->content);
}

static unsigned char *map_at(FIXTURE_DATA(refpage) *self, void *addr, size_t len, int flags)
{
	void *p = mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | flags, self->fd, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Every byte of [p, p + len) reads as the reference page (all 0xa5). */
static bool clean(const unsigned char *p, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != 0xa5)
			return false;
	return true;
}

/* Two mmap()s of the same fd side by side: both at offset 0, so never one VMA. */
TEST_F(refpage, adjacent_mappings_do_not_merge)
{
	size_t len = 4 * self->psz;
	unsigned char *res, *a, *b;
	unsigned long s, e;
	char line[512];

	res = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	a = map_at(self, res, len, MAP_FIXED);
	b = map_at(self, res + len, len, MAP_FIXED);
	ASSERT_EQ(res, a);
	ASSERT_EQ(res + len, b);
	a[0] = 1;
	b[0] = 2;
	ASSERT_EQ(0, vma_of(a, &s, &e, line, sizeof(line)));
	EXPECT_EQ((unsigned long)a, s);
	EXPECT_EQ((unsigned long)b, e);
	EXPECT_NE(NULL, strstr(line, "[refpage]")) TH_LOG("%s", line);
	ASSERT_EQ(0, vma_of(b, &s, &e, NULL, 0));
	EXPECT_EQ((unsigned long)b, s);
	EXPECT_EQ((unsigned long)b + len, e);
	munmap(res, 2 * len);
}

/* The pieces of one mapping, split and put back as they were, are one VMA again. */
TEST_F(refpage, split_mapping_merges_again)
{
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	unsigned long s, e;

	ASSERT_NE(NULL, a);
	memset(a, 1, len);	/* with an anon_vma, as a used heap has */
	ASSERT_EQ(0, mprotect(a + self->psz, self->psz, PROT_READ));
	ASSERT_EQ(0, vma_of(a, &s, &e, NULL, 0));
	EXPECT_EQ((unsigned long)a + self->psz, e);
	ASSERT_EQ(0, mprotect(a + self->psz, self->psz, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, vma_of(a, &s, &e, NULL, 0));
	EXPECT_EQ((unsigned long)a, s);
	EXPECT_EQ((unsigned long)a + len, e);
	munmap(a, len);
}

/* Growing with mremap() in place needs no new VMA; the new pages read as the page. */
TEST_F(refpage, mremap_grows_in_place)
{
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, 2 * len, 0), *g;
	unsigned long s, e;

	ASSERT_NE(NULL, a);
	ASSERT_EQ(0, munmap(a + len, len));
	a[0] = 1;
	g = mremap(a, len, 2 * len, 0);
	ASSERT_EQ(a, g) TH_LOG("mremap: %s", strerror(errno));
	ASSERT_EQ(0, vma_of(a, &s, &e, NULL, 0));
	EXPECT_EQ((unsigned long)a, s);
	EXPECT_EQ((unsigned long)a + 2 * len, e);
	EXPECT_EQ(1, a[0]);
	EXPECT_TRUE(clean(a + 1, 2 * len - 1));
	munmap(a, 2 * len);
}

/* A nonzero offset is refused and maps nothing where it was asked to map. */
TEST_F(refpage, nonzero_offset_maps_nothing)
{
	size_t len = 4 * self->psz;
	unsigned char *hole = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int flags[] = { 0, MAP_FIXED_NOREPLACE };
	void *p;
	int i;

	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, len));
	for (i = 0; i < 2; i++) {
		errno = 0;
		p = mmap(hole, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | flags[i], self->fd,
			 self->psz);
		EXPECT_EQ(MAP_FAILED, p);
		EXPECT_EQ(EINVAL, errno);
		if (p != MAP_FAILED)
			munmap(p, len);
		EXPECT_EQ(-1, vma_of(hole, NULL, NULL, NULL, 0));
		EXPECT_EQ(-1, vma_of(hole + len - 1, NULL, NULL, NULL, 0));
	}
}

/* Whether anonymous memory gets a huge page here: what never_thp is compared with. */
static bool anon_gets_thp(void)
{
	char *res = mmap(NULL, 2 * HUGE_SZ, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *a;
	bool ret;

	if (res == MAP_FAILED)
		return false;
	a = (char *)(((uintptr_t)res + HUGE_SZ - 1) & ~(HUGE_SZ - 1));
	madvise(a, HUGE_SZ, MADV_HUGEPAGE);
	memset(a, 1, HUGE_SZ);
	ret = smaps_field(a, "AnonHugePages", NULL, 0) > 0;
	munmap(res, 2 * HUGE_SZ);
	return ret;
}

/* Written whole and aligned, with MADV_HUGEPAGE and MADV_COLLAPSE: still base pages. */
TEST_F(refpage, never_thp_even_fully_written)
{
	unsigned char *res, *a;
	long kb;

	if (!anon_gets_thp())
		SKIP(return, "anonymous memory gets no huge page here either (THP off or "
			     "no free huge page): nothing to compare with");
	res = mmap(NULL, 3 * HUGE_SZ, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, res);
	a = (unsigned char *)(((uintptr_t)res + HUGE_SZ - 1) & ~(HUGE_SZ - 1));
	ASSERT_EQ(a, map_at(self, a, 2 * HUGE_SZ, MAP_FIXED));
	EXPECT_EQ(0, madvise(a, 2 * HUGE_SZ, MADV_HUGEPAGE));
	memset(a, 0x5a, 2 * HUGE_SZ);
	kb = smaps_field(a, "AnonHugePages", NULL, 0);
	EXPECT_EQ(0, kb);
	EXPECT_EQ(2 * HUGE_SZ / 1024, smaps_field(a, "Anonymous", NULL, 0));
	errno = 0;
	EXPECT_EQ(-1, madvise(a, 2 * HUGE_SZ, MADV_COLLAPSE));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, smaps_field(a, "AnonHugePages", NULL, 0));
	EXPECT_EQ(0x5a, a[HUGE_SZ + 17]);
	munmap(res, 3 * HUGE_SZ);
}

/* PR_SET_VMA_ANON_NAME: EBADF as for any file mapping, and the VMA keeps its name. */
TEST_F(refpage, anon_name_is_ebadf)
{
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	char *anon = mmap(NULL, self->psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[512];
	int ret;

	ASSERT_NE(NULL, a);
	ASSERT_NE(MAP_FAILED, anon);
	ret = prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)anon, self->psz,
		    (unsigned long)"probe") ? errno : 0;
	munmap(anon, self->psz);
	if (ret == EINVAL)
		SKIP(goto out, "kernel has no anonymous VMA names (CONFIG_ANON_VMA_NAME off)");
	ASSERT_EQ(0, ret);
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)a, len,
			    (unsigned long)"pattern heap"));
	EXPECT_EQ(EBADF, errno);
	ASSERT_EQ(0, vma_of(a + self->psz, NULL, NULL, line, sizeof(line)));
	EXPECT_NE(NULL, strstr(line, "anon_inode:[refpage]")) TH_LOG("%s", line);
	EXPECT_EQ(NULL, strstr(line, "pattern heap"));
out:
	munmap(a, len);
}

static int child_sees(unsigned char *a, size_t psz)
{
	return a[0] == 0x11 && clean(a + 1, 2 * psz - 1) ? 0 : 1;
}

/* MADV_WIPEONFORK: EINVAL, and the child inherits the contents as before. */
TEST_F(refpage, wipeonfork_is_einval)
{
	size_t len = 2 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	int status;
	pid_t pid;

	ASSERT_NE(NULL, a);
	a[0] = 0x11;
	errno = 0;
	EXPECT_EQ(-1, madvise(a, len, MADV_WIPEONFORK));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_FALSE(has_vmflag(a, "wf"));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(child_sees(a, self->psz));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	munmap(a, len);
}

/* The documented alternative: MADV_DONTFORK leaves the child nothing there. */
TEST_F(refpage, dontfork_works)
{
	size_t len = 2 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0), vec[2];
	int status;
	pid_t pid;

	ASSERT_NE(NULL, a);
	a[0] = 0x11;
	ASSERT_EQ(0, madvise(a, len, MADV_DONTFORK));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(mincore(a, len, vec) && errno == ENOMEM ? 0 : 1);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	EXPECT_EQ(0x11, a[0]);
	munmap(a, len);
}

/*
 * userfaultfd: write-protect and minor modes are refused (also asynchronous
 * write-protect, which any other memory type accepts) and leave the range
 * unregistered; missing mode works. Anonymous memory is the control.
 */
TEST_F(refpage, uffd_wp_and_minor_are_einval)
{
	uint64_t async = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int sync = uffd_open(0), wp = uffd_open(async);

	ASSERT_NE(NULL, a);
	ASSERT_NE(MAP_FAILED, anon);
	if (sync < 0)
		SKIP(goto out, "no userfaultfd for this process: %s", strerror(errno));
	if (wp < 0 || uffd_register(wp, anon, len, UFFDIO_REGISTER_MODE_WP))
		SKIP(goto out, "no asynchronous userfaultfd write-protect in this kernel");
	EXPECT_EQ(-EINVAL, uffd_register(sync, a, len, UFFDIO_REGISTER_MODE_WP));
	EXPECT_EQ(-EINVAL, uffd_register(sync, a, len, UFFDIO_REGISTER_MODE_MINOR));
	EXPECT_EQ(-EINVAL, uffd_register(wp, a, len, UFFDIO_REGISTER_MODE_WP));
	EXPECT_FALSE(has_vmflag(a, "uw"));
	EXPECT_FALSE(has_vmflag(a, "ui"));
	EXPECT_FALSE(has_vmflag(a, "um"));
	/* Nothing half-registered: writes and reads go on without a handler. */
	a[0] = 1;
	EXPECT_TRUE(clean(a + 1, len - 1));
	EXPECT_EQ(0, uffd_register(sync, a, len, UFFDIO_REGISTER_MODE_MISSING));
	EXPECT_TRUE(has_vmflag(a, "um"));
out:
	if (sync >= 0)
		close(sync);
	if (wp >= 0)
		close(wp);
	munmap(anon, len);
	munmap(a, len);
}

static long scan(int pagemap, void *addr, size_t len, uint64_t flags, struct page_region *r,
		 size_t n)
{
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.flags = flags,
		.start = (uintptr_t)addr,
		.end = (uintptr_t)addr + len,
		.vec = (uintptr_t)r,
		.vec_len = n,
		.category_mask = PAGE_IS_WRITTEN,
		.return_mask = PAGE_IS_WRITTEN,
	};
	long ret = ioctl(pagemap, PAGEMAP_SCAN, &arg);

	return ret < 0 ? -errno : ret;
}

/* So PAGEMAP_SCAN cannot track writes there: refused when asked to, else skipped. */
TEST_F(refpage, pagemap_scan_cannot_track_writes)
{
	uint64_t async = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	char *anon = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int wp = uffd_open(async), pagemap = open("/proc/self/pagemap", O_RDONLY);
	struct page_region r[4];

	ASSERT_NE(NULL, a);
	ASSERT_NE(MAP_FAILED, anon);
	ASSERT_LE(0, pagemap);
	if (wp < 0 || uffd_register(wp, anon, len, UFFDIO_REGISTER_MODE_WP))
		SKIP(goto out, "no asynchronous userfaultfd write-protect in this kernel");
	/* The control: anonymous memory, once armed, reports its one written page. */
	ASSERT_LE(0, scan(pagemap, anon, len, PM_SCAN_CHECK_WPASYNC | PM_SCAN_WP_MATCHING, r, 4));
	anon[self->psz] = 1;
	ASSERT_EQ(1, scan(pagemap, anon, len, PM_SCAN_CHECK_WPASYNC, r, 4));
	EXPECT_EQ((uintptr_t)anon + self->psz, r[0].start);
	EXPECT_EQ(-EINVAL, uffd_register(wp, a, len, UFFDIO_REGISTER_MODE_WP));
	a[self->psz] = 1;
	EXPECT_EQ(-EPERM, scan(pagemap, a, len, PM_SCAN_CHECK_WPASYNC | PM_SCAN_WP_MATCHING,
			       r, 4));
	EXPECT_EQ(0, scan(pagemap, a, len, PM_SCAN_WP_MATCHING, r, 4));
out:
	if (wp >= 0)
		close(wp);
	close(pagemap);
	munmap(anon, len);
	munmap(a, len);
}

#define PM_SOFT_DIRTY (1ULL << 55)

static uint64_t pagemap_entry(int pagemap, const void *addr)
{
	uint64_t ent = 0;
	long psz = getpagesize();

	if (pread(pagemap, &ent, sizeof(ent), (uintptr_t)addr / psz * sizeof(ent)) !=
	    sizeof(ent))
		return ~0ULL;
	return ent;
}

static int clear_soft_dirty(void)
{
	int fd = open("/proc/self/clear_refs", O_WRONLY);
	int ret = fd >= 0 && write(fd, "4", 1) == 1 ? 0 : -1;

	if (fd >= 0)
		close(fd);
	return ret;
}

/* What write tracking there is: soft-dirty marks exactly the pages written since. */
TEST_F(refpage, soft_dirty_tracks_writes)
{
	size_t len = 4 * self->psz;
	unsigned char *a = map_at(self, NULL, len, 0);
	volatile unsigned char *probe;
	int pagemap = open("/proc/self/pagemap", O_RDONLY), i;
	uint64_t ent;

	ASSERT_NE(NULL, a);
	ASSERT_LE(0, pagemap);
	probe = mmap(NULL, self->psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, probe);
	*probe = 1;
	ent = pagemap_entry(pagemap, (void *)probe);
	munmap((void *)probe, self->psz);
	if (!(ent & PM_SOFT_DIRTY) || clear_soft_dirty())
		SKIP(goto out, "no soft-dirty tracking in this kernel (CONFIG_MEM_SOFT_DIRTY)");
	(void)*(volatile unsigned char *)a;	/* read, then written: a copy of a mapped page */
	a[self->psz] = 1;
	ASSERT_EQ(0, clear_soft_dirty());
	(void)*(volatile unsigned char *)(a + 2 * self->psz);
	a[3 * self->psz] = 2;
	a[0] = 3;
	for (i = 0; i < 4; i++) {
		ent = pagemap_entry(pagemap, a + i * self->psz);
		EXPECT_EQ(i == 0 || i == 3, !!(ent & PM_SOFT_DIRTY)) TH_LOG("page %d: %#llx", i,
									  (unsigned long long)ent);
	}
out:
	close(pagemap);
	munmap(a, len);
}

TEST_HARNESS_MAIN
