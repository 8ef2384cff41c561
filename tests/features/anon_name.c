// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous VMA names: prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) on private and shared
 * anonymous memory, as seen in /proc/self/maps and smaps, and its errors.
 * Every test SKIPs when the kernel is built without CONFIG_ANON_VMA_NAME.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/prctl.h>

#include "harness.h"

#define NAME_MAX_LEN 80 /* kernel's ANON_VMA_NAME_MAX_LEN, including the NUL */

static long psz;

static int set_name(void *addr, size_t len, const char *name)
{
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)addr, len,
		  (unsigned long)name))
		return -errno;
	return 0;
}

/*
 * Copy the maps (or smaps header) line of the VMA containing addr into line; return the
 * VMA's start and end through *start and *end. Returns 0, or -1 when addr is unmapped.
 */
static int vma_line(const char *file, const void *addr, char *line, size_t size,
		    unsigned long *start, unsigned long *end)
{
	unsigned long a = (unsigned long)addr, s, e;
	char buf[4096];
	FILE *f = fopen(file, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(buf, sizeof(buf), f)) {
		if (sscanf(buf, "%lx-%lx ", &s, &e) != 2 || a < s || a >= e)
			continue;
		snprintf(line, size, "%s", buf);
		line[strcspn(line, "\n")] = '\0';
		if (start)
			*start = s;
		if (end)
			*end = e;
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

/* The name field of addr's VMA in /proc/self/maps ("" when unnamed). */
static const char *vma_name(const void *addr, unsigned long *start, unsigned long *end)
{
	static char line[4096];
	char *p = line;
	int field;

	if (vma_line("/proc/self/maps", addr, line, sizeof(line), start, end))
		return NULL;
	/* address perms offset dev inode name */
	for (field = 0; field < 5 && p; field++) {
		p = strchr(p, ' ');
		while (p && *p == ' ')
			p++;
	}
	return p ? p : "";
}

/*
 * Copy /proc/self/maps into buf with read(2) only: allocating here would grow the heap
 * and change the very maps being compared.
 */
static const char *maps_snapshot(char *buf, size_t size)
{
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	while (fd >= 0 && len < size - 1 && (n = read(fd, buf + len, size - 1 - len)) > 0)
		len += n;
	if (fd >= 0)
		close(fd);
	buf[len] = '\0';
	return buf;
}

static char maps_before[1 << 16], maps_after[1 << 16];

FIXTURE(anon) {
	char *area;	/* four pages, the middle two named in most tests */
	size_t len;
};

FIXTURE_VARIANT(anon) {
	int flags;
	const char *prefix;
};

FIXTURE_VARIANT_ADD(anon, private) {
	.flags = MAP_PRIVATE | MAP_ANONYMOUS,
	.prefix = "[anon:",
};

FIXTURE_VARIANT_ADD(anon, shared) {
	.flags = MAP_SHARED | MAP_ANONYMOUS,
	.prefix = "[anon_shmem:",
};

FIXTURE_SETUP(anon)
{
	int ret;

	psz = sysconf(_SC_PAGESIZE);
	self->len = 4 * psz;
	self->area = mmap(NULL, self->len, PROT_READ | PROT_WRITE, variant->flags, -1, 0);
	ASSERT_NE(MAP_FAILED, self->area);
	ret = set_name(self->area, psz, "mmext-probe");
	if (ret == -EINVAL)
		SKIP(return, "kernel has no anonymous VMA names (CONFIG_ANON_VMA_NAME off)");
	ASSERT_EQ(0, ret);
	ASSERT_EQ(0, set_name(self->area, psz, NULL));
}

FIXTURE_TEARDOWN(anon)
{
	munmap(self->area, self->len);
}

static void expect_named(struct __test_metadata *_metadata, const char *prefix,
			 const void *addr, const char *name)
{
	char want[256];
	const char *got = vma_name(addr, NULL, NULL);

	snprintf(want, sizeof(want), "%s%s]", prefix, name);
	ASSERT_NE(NULL, got);
	EXPECT_STREQ(want, got);
}

TEST_F(anon, name_shows_in_maps)
{
	unsigned long s, e;

	ASSERT_EQ(0, set_name(self->area + psz, 2 * psz, "mmext test heap"));
	expect_named(_metadata, variant->prefix, self->area + psz, "mmext test heap");
	vma_name(self->area + psz, &s, &e);
	EXPECT_EQ((unsigned long)self->area + psz, s);
	EXPECT_EQ((unsigned long)self->area + 3 * psz, e);
	/* The neighbours keep no name. */
	EXPECT_EQ(NULL, strstr(vma_name(self->area, NULL, NULL), "mmext"));
	EXPECT_EQ(NULL, strstr(vma_name(self->area + 3 * psz, NULL, NULL), "mmext"));
}

TEST_F(anon, name_shows_in_smaps)
{
	char line[4096], want[256];

	ASSERT_EQ(0, set_name(self->area, self->len, "smaps-name"));
	ASSERT_EQ(0, vma_line("/proc/self/smaps", self->area, line, sizeof(line), NULL, NULL));
	snprintf(want, sizeof(want), "%ssmaps-name]", variant->prefix);
	EXPECT_NE(NULL, strstr(line, want)) TH_LOG("smaps line: %s", line);
}

TEST_F(anon, rename_replaces_name)
{
	ASSERT_EQ(0, set_name(self->area, self->len, "first"));
	ASSERT_EQ(0, set_name(self->area, self->len, "second"));
	expect_named(_metadata, variant->prefix, self->area, "second");
}

TEST_F(anon, longest_name_is_kept_whole)
{
	char name[NAME_MAX_LEN];

	memset(name, 'n', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	ASSERT_EQ(0, set_name(self->area, self->len, name));
	expect_named(_metadata, variant->prefix, self->area, name);
}

TEST_F(anon, inherited_by_fork)
{
	pid_t pid;
	int status;

	ASSERT_EQ(0, set_name(self->area, self->len, "inherited"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (pid == 0) {
		const char *got = vma_name(self->area, NULL, NULL);
		char want[64];

		snprintf(want, sizeof(want), "%sinherited]", variant->prefix);
		_exit(got && !strcmp(got, want) ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST_F(anon, same_names_merge_different_dont)
{
	unsigned long s, e, base = (unsigned long)self->area;

	ASSERT_EQ(0, set_name(self->area, psz, "left"));
	ASSERT_EQ(0, set_name(self->area + psz, psz, "right"));
	vma_name(self->area, &s, &e);
	EXPECT_EQ(base, s);
	EXPECT_EQ(base + psz, e);

	ASSERT_EQ(0, set_name(self->area + psz, psz, "left"));
	expect_named(_metadata, variant->prefix, self->area + psz, "left");
	vma_name(self->area, &s, &e);
	EXPECT_EQ(base, s);
	EXPECT_EQ(base + 2 * psz, e);
}

TEST_F(anon, null_clears_and_remerges)
{
	unsigned long s, e, base = (unsigned long)self->area;

	ASSERT_EQ(0, set_name(self->area + psz, psz, "temporary"));
	ASSERT_EQ(0, set_name(self->area + psz, psz, NULL));
	EXPECT_EQ(NULL, strchr(vma_name(self->area + psz, &s, &e), '['));
	EXPECT_EQ(base, s);
	EXPECT_EQ(base + self->len, e);
}

TEST_F(anon, zero_length_is_a_noop)
{
	maps_snapshot(maps_before, sizeof(maps_before));
	ASSERT_EQ(0, set_name(self->area, 0, "nothing"));
	EXPECT_STREQ(maps_before, maps_snapshot(maps_after, sizeof(maps_after)));
}

/* Bad input: each call fails with the documented error and leaves maps unchanged. */
static void expect_rejected(struct __test_metadata *_metadata, void *addr, size_t len,
			    const char *name, int err)
{
	maps_snapshot(maps_before, sizeof(maps_before));
	EXPECT_EQ(-err, set_name(addr, len, name));
	EXPECT_STREQ(maps_before, maps_snapshot(maps_after, sizeof(maps_after)));
}

TEST_F(anon, too_long_name_is_rejected)
{
	char name[NAME_MAX_LEN + 1];

	memset(name, 'x', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	expect_rejected(_metadata, self->area, self->len, name, EINVAL);
}

TEST_F(anon, forbidden_characters_are_rejected)
{
	static const char *const bad[] = {
		"a[b", "a]b", "a\\b", "a$b", "a`b", "tab\there", "nl\n", "del\x7f", "hi\x80",
	};
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		expect_rejected(_metadata, self->area, self->len, bad[i], EINVAL);
}

TEST_F(anon, unaligned_start_is_rejected)
{
	expect_rejected(_metadata, self->area + 1, psz, "unaligned", EINVAL);
}

TEST_F(anon, wrapping_length_is_rejected)
{
	expect_rejected(_metadata, self->area, (size_t)-psz, "wraps", EINVAL);
	expect_rejected(_metadata, self->area, (size_t)-1, "wraps", EINVAL);
}

TEST_F(anon, bad_name_pointer_is_rejected)
{
	expect_rejected(_metadata, self->area, self->len, (const char *)8, EFAULT);
}

TEST_F(anon, unmapped_range_is_rejected)
{
	char *hole = mmap(NULL, psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(MAP_FAILED, hole);
	ASSERT_EQ(0, munmap(hole, psz));
	expect_rejected(_metadata, hole, psz, "hole", ENOMEM);
}

TEST_F(anon, unknown_pr_set_vma_option_is_rejected)
{
	errno = 0;
	EXPECT_EQ(-1, prctl(PR_SET_VMA, 0x4d4d, (unsigned long)self->area, self->len,
			    (unsigned long)"x"));
	EXPECT_EQ(EINVAL, errno);
}

/*
 * A range that is only partly mapped: like madvise(), the mapped part is named and the
 * call still reports ENOMEM. Documented here so a change in that behaviour is noticed.
 */
TEST_F(anon, partly_unmapped_range_names_mapped_part)
{
	ASSERT_EQ(0, munmap(self->area + 3 * psz, psz));
	EXPECT_EQ(-ENOMEM, set_name(self->area + 2 * psz, 2 * psz, "partial"));
	expect_named(_metadata, variant->prefix, self->area + 2 * psz, "partial");
}

/*
 * The file stays linked while mapped: shmem treats a mapping of an unlinked tmpfs file as
 * anonymous shared memory, which can be named.
 */
TEST(file_backed_mapping_is_rejected)
{
	char path[] = "/tmp/mmext-anon-name-XXXXXX";
	long psz = sysconf(_SC_PAGESIZE);
	void *p, *probe;
	int fd;

	probe = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, probe);
	if (set_name(probe, psz, "probe") == -EINVAL)
		SKIP(return, "kernel has no anonymous VMA names (CONFIG_ANON_VMA_NAME off)");
	munmap(probe, psz);

	fd = mkstemp(path);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, psz));
	p = mmap(NULL, psz, PROT_READ, MAP_PRIVATE, fd, 0);
	unlink(path);
	ASSERT_NE(MAP_FAILED, p);
	maps_snapshot(maps_before, sizeof(maps_before));
	EXPECT_EQ(-EBADF, set_name(p, psz, "file"));
	EXPECT_STREQ(maps_before, maps_snapshot(maps_after, sizeof(maps_after)));
	munmap(p, psz);
	close(fd);
}

TEST_HARNESS_MAIN
