// SPDX-License-Identifier: GPL-2.0
/*
 * Pattern memory: clean pages read as the pattern, written pages are private,
 * MADV_DONTNEED brings the pattern back, fork keeps it all; on every backend the
 * kernel allows (the kernel backend SKIPs without reference pages), and errors.
 */
#include <fcntl.h>

#include "helpers.h"
#include "kselftest_harness.h"

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

FIXTURE(pattern) {
	struct mmext_pattern *p;
	unsigned char *addr;
	size_t psz, len;
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
}

FIXTURE_TEARDOWN(pattern)
{
	mmext_pattern_unmap(self->p);
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
	/* Larger than the address space can hold. */
	EXPECT_EQ(-ENOMEM, mmext_pattern_map(pat, 1, (size_t)1 << 62, NULL, &p));
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

TEST(kernel_backend_forced_without_support)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = MMEXT_PATTERN_KERNEL);
	struct mmext_pattern *p = NULL;

	REQUIRE_NO_FEATURE(MMEXT_FEAT_REFPAGE);
	EXPECT_EQ(-EOPNOTSUPP, mmext_pattern_map(pat8, 8, t_psz(), &o, &p));
	EXPECT_EQ(NULL, p);
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

TEST_HARNESS_MAIN
