// SPDX-License-Identifier: GPL-2.0
/*
 * Names for anonymous memory through libmmext: validation (everywhere), the clear
 * -EOPNOTSUPP on kernels without CONFIG_ANON_VMA_NAME, and set/rename/clear/get on
 * private and shared anonymous memory where the kernel can name it.
 */
#include <fcntl.h>

#include "helpers.h"
#include "harness.h"

TEST(check_accepts_good_names)
{
	char longest[MMEXT_NAME_MAX + 1];

	memset(longest, 'a', MMEXT_NAME_MAX);
	longest[MMEXT_NAME_MAX] = '\0';
	EXPECT_EQ(0, mmext_name_check("heap"));
	EXPECT_EQ(0, mmext_name_check("with spaces and ~!@#%^&*()_+{}|:\"<>?,./;'="));
	EXPECT_EQ(0, mmext_name_check(longest));
}

TEST(check_rejects_bad_names)
{
	static const char *const bad[] = {
		"", "a[b", "a]b", "a\\b", "a$b", "a`b", "tab\there", "nl\n", "del\x7f", "hi\x80",
		"\xff",
	};
	char toolong[MMEXT_NAME_MAX + 2];
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, mmext_name_check(bad[i])) TH_LOG("bad[%u]", i);
	memset(toolong, 'a', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = '\0';
	EXPECT_EQ(-ENAMETOOLONG, mmext_name_check(toolong));
	EXPECT_EQ(-EFAULT, mmext_name_check(NULL));
}

/* Argument errors are found before the kernel is asked, so they hold on any kernel. */
TEST(set_rejects_bad_ranges_and_names)
{
	size_t psz = t_psz();
	char *p = t_map(2 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	char toolong[MMEXT_NAME_MAX + 2];

	ASSERT_NE(NULL, p);
	memset(toolong, 'x', sizeof(toolong) - 1);
	toolong[sizeof(toolong) - 1] = '\0';
	EXPECT_EQ(-EINVAL, mmext_name_set(p + 1, psz, "unaligned"));
	EXPECT_EQ(-EINVAL, mmext_name_set(p, 0, "empty"));
	EXPECT_EQ(-EINVAL, mmext_name_set(p, (size_t)-psz, "wraps"));
	EXPECT_EQ(-EINVAL, mmext_name_set(p, (size_t)-1, "wraps"));
	EXPECT_EQ(-EINVAL, mmext_name_set(p, psz, "a$b"));
	EXPECT_EQ(-ENAMETOOLONG, mmext_name_set(p, psz, toolong));
	EXPECT_EQ(-EFAULT, mmext_name_set(p, psz, NULL));
	EXPECT_EQ(-EINVAL, mmext_name_clear(p + 1, psz));
	EXPECT_EQ(-EINVAL, mmext_name_clear(p, 0));
	munmap(p, 2 * psz);
}

TEST(unsupported_kernel_says_so)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	char buf[8];

	REQUIRE_NO_FEATURE(MMEXT_FEAT_ANON_NAME);
	ASSERT_NE(NULL, p);
	EXPECT_EQ(-EOPNOTSUPP, mmext_name_set(p, psz, "never"));
	EXPECT_EQ(-EOPNOTSUPP, mmext_name_clear(p, psz));
	/* Reading works anyway: nothing is named. */
	EXPECT_EQ(-ENODATA, mmext_name_get(0, p, buf, sizeof(buf)));
	munmap(p, psz);
}

TEST(get_bad_input)
{
	size_t psz = t_psz();
	char *p = t_map(psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	char buf[MMEXT_NAME_MAX + 1];

	ASSERT_NE(NULL, p);
	EXPECT_EQ(-ENODATA, mmext_name_get(0, p, buf, sizeof(buf)));
	EXPECT_EQ(-ENOENT, mmext_name_get(0, t_hole(psz), buf, sizeof(buf)));
	EXPECT_EQ(-EINVAL, mmext_name_get(-1, p, buf, sizeof(buf)));
	EXPECT_EQ(-ESRCH, mmext_name_get(t_dead_pid(), p, buf, sizeof(buf)));
	EXPECT_EQ(-EFAULT, mmext_name_get(0, p, NULL, 4));
	munmap(p, psz);
}

FIXTURE(named) {
	char *area;	/* four pages with PROT_NONE guards on both sides */
	size_t psz;
};

FIXTURE_VARIANT(named) {
	int flags;
	int feature;
};

FIXTURE_VARIANT_ADD(named, private) {
	.flags = MAP_PRIVATE | MAP_ANONYMOUS,
	.feature = MMEXT_FEAT_ANON_NAME,
};

FIXTURE_VARIANT_ADD(named, shared) {
	.flags = MAP_SHARED | MAP_ANONYMOUS,
	.feature = MMEXT_FEAT_ANON_SHMEM_NAME,
};

FIXTURE_SETUP(named)
{
	self->psz = t_psz();
	REQUIRE_FEATURE(variant->feature);
	self->area = t_map(4 * self->psz, PROT_READ | PROT_WRITE, variant->flags);
	ASSERT_NE(NULL, self->area);
}

FIXTURE_TEARDOWN(named)
{
	if (self->area)
		munmap(self->area, 4 * self->psz);
}

TEST_F(named, set_get_rename_clear)
{
	char buf[MMEXT_NAME_MAX + 1];

	ASSERT_EQ(0, mmext_name_set(self->area + self->psz, 2 * self->psz, "first name"));
	EXPECT_EQ(10, mmext_name_get(0, self->area + self->psz, buf, sizeof(buf)));
	EXPECT_STREQ("first name", buf);
	EXPECT_EQ(-ENODATA, mmext_name_get(0, self->area, buf, sizeof(buf)));
	EXPECT_EQ(-ENODATA, mmext_name_get(0, self->area + 3 * self->psz, buf, sizeof(buf)));

	ASSERT_EQ(0, mmext_name_set(self->area + self->psz, 2 * self->psz, "second"));
	EXPECT_EQ(6, mmext_name_get(0, self->area + 2 * self->psz, buf, sizeof(buf)));
	EXPECT_STREQ("second", buf);

	ASSERT_EQ(0, mmext_name_clear(self->area + self->psz, 2 * self->psz));
	EXPECT_EQ(-ENODATA, mmext_name_get(0, self->area + self->psz, buf, sizeof(buf)));
}

TEST_F(named, longest_name_and_small_buffer)
{
	char name[MMEXT_NAME_MAX + 1], buf[MMEXT_NAME_MAX + 1];

	memset(name, 'n', MMEXT_NAME_MAX);
	name[MMEXT_NAME_MAX] = '\0';
	ASSERT_EQ(0, mmext_name_set(self->area, self->psz, name));
	EXPECT_EQ(MMEXT_NAME_MAX, mmext_name_get(0, self->area, buf, sizeof(buf)));
	EXPECT_STREQ(name, buf);
	EXPECT_EQ(-ERANGE, mmext_name_get(0, self->area, buf, MMEXT_NAME_MAX));
	EXPECT_EQ(-ERANGE, mmext_name_get(0, self->area, NULL, 0));
}

TEST_F(named, length_is_rounded_up_to_pages)
{
	char buf[16];

	ASSERT_EQ(0, mmext_name_set(self->area, 1, "rounded"));
	EXPECT_EQ(7, mmext_name_get(0, self->area + self->psz - 1, buf, sizeof(buf)));
	EXPECT_EQ(-ENODATA, mmext_name_get(0, self->area + self->psz, buf, sizeof(buf)));
}

TEST_F(named, read_from_another_process)
{
	char buf[32];
	int status;
	pid_t pid;

	ASSERT_EQ(0, mmext_name_set(self->area, self->psz, "seen by parent"));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	EXPECT_EQ(14, mmext_name_get(pid, self->area, buf, sizeof(buf)));
	EXPECT_STREQ("seen by parent", buf);
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
}

TEST_F(named, unmapped_range_is_enomem)
{
	ASSERT_EQ(0, munmap(self->area + 3 * self->psz, self->psz));
	EXPECT_EQ(-ENOMEM, mmext_name_set(self->area + 3 * self->psz, self->psz, "hole"));
	EXPECT_EQ(-ENOMEM, mmext_name_clear(self->area + 2 * self->psz, 2 * self->psz));
}

/*
 * The file stays linked until mapped: shmem treats a mapping of an unlinked tmpfs file
 * (the guest's /tmp) as anonymous shared memory, which can be named.
 */
TEST_F(named, file_mapping_is_ebadf)
{
	char path[] = "/tmp/mmext-names-XXXXXX";
	int fd = mkstemp(path);
	char *p;

	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, self->psz));
	p = mmap(NULL, self->psz, PROT_READ, MAP_PRIVATE, fd, 0);
	unlink(path);
	close(fd);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-EBADF, mmext_name_set(p, self->psz, "file"));
	munmap(p, self->psz);
}

TEST_HARNESS_MAIN
