// SPDX-License-Identifier: GPL-2.0
/*
 * PROCMAP_QUERY ioctl on /proc/self/maps: VMA lookup (exact, covering-or-next,
 * permission and file-backed filters), the reported fields, names and ELF build
 * IDs with their buffer-size rules, and argument validation.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/fs.h>
#include <linux/prctl.h>

#include "harness.h"

#define R	PROCMAP_QUERY_VMA_READABLE
#define W	PROCMAP_QUERY_VMA_WRITABLE
#define X	PROCMAP_QUERY_VMA_EXECUTABLE
#define S	PROCMAP_QUERY_VMA_SHARED
#define NEXT	PROCMAP_QUERY_COVERING_OR_NEXT_VMA
#define FILE_ONLY PROCMAP_QUERY_FILE_BACKED_VMA

#define AREA_PAGES	8	/* test pages, between two PROT_NONE guard pages */
#define FILE_PAGES	4
#define MAX_BUILD_ID	64
#define FILL		0x5a

#ifndef offsetofend
#define offsetofend(type, member) \
	(offsetof(type, member) + sizeof(((type *)0)->member))
#endif

/* A user address no mapping can have on 64-bit. */
#define KERNEL_ADDR	0xffff800000000000ULL

FIXTURE(pq)
{
	int maps;
	size_t psz;
	char *guard;	/* AREA_PAGES + 2 pages reserved PROT_NONE */
	char *area;	/* guard + psz: where tests place their mappings */
	int file;	/* FILE_PAGES pages of non-ELF data in /tmp */
	char path[64];
	char name[PATH_MAX];
};

FIXTURE_SETUP(pq)
{
	struct procmap_query q = {
		.size = sizeof(q),
		.query_addr = (uintptr_t)__builtin_frame_address(0),
	};
	char *buf;

	self->psz = getpagesize();
	self->file = -1;
	self->maps = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	ASSERT_GE(self->maps, 0);
	if (ioctl(self->maps, PROCMAP_QUERY, &q)) {
		if (errno == ENOTTY)
			SKIP(return, "no PROCMAP_QUERY");
		ASSERT_EQ(errno, 0) TH_LOG("PROCMAP_QUERY: %s", strerror(errno));
	}

	self->guard = mmap(NULL, (AREA_PAGES + 2) * self->psz, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(self->guard, MAP_FAILED);
	self->area = self->guard + self->psz;

	strcpy(self->path, "/tmp/procmap_query.XXXXXX");
	self->file = mkstemp(self->path);
	ASSERT_GE(self->file, 0) TH_LOG("mkstemp: %s", strerror(errno));
	buf = malloc(FILE_PAGES * self->psz);
	ASSERT_NE(buf, NULL);
	memset(buf, 'x', FILE_PAGES * self->psz);
	ASSERT_EQ(write(self->file, buf, FILE_PAGES * self->psz),
		  FILE_PAGES * self->psz);
	free(buf);
}

FIXTURE_TEARDOWN(pq)
{
	munmap(self->guard, (AREA_PAGES + 2) * self->psz);
	close(self->file);
	unlink(self->path);
	close(self->maps);
}

static struct procmap_query query_at(unsigned long addr, __u64 flags)
{
	struct procmap_query q = {
		.size = sizeof(q),
		.query_flags = flags,
		.query_addr = addr,
	};

	return q;
}

/* Runs the query; returns 0 or the errno. */
static int query(int fd, void *q)
{
	return ioctl(fd, PROCMAP_QUERY, q) ? errno : 0;
}

static unsigned long page_of(FIXTURE_DATA(pq) *self, int i)
{
	return (uintptr_t)self->area + (unsigned long)i * self->psz;
}

/* Maps @npages at area page @i (MAP_FIXED); @fd < 0 means anonymous. */
static void *place(struct __test_metadata *_metadata, FIXTURE_DATA(pq) *self,
		   int i, int npages, int prot, int flags, int fd, off_t off)
{
	void *p = mmap((void *)page_of(self, i), npages * self->psz, prot,
		       flags | MAP_FIXED | (fd < 0 ? MAP_ANONYMOUS : 0), fd, off);

	ASSERT_NE(p, MAP_FAILED) TH_LOG("mmap: %s", strerror(errno));
	return p;
}

/* The name of the VMA at @addr; asserts the query succeeds. */
static const char *name_at(struct __test_metadata *_metadata,
			   FIXTURE_DATA(pq) *self, unsigned long addr,
			   struct procmap_query *q)
{
	*q = query_at(addr, 0);
	memset(self->name, FILL, sizeof(self->name));
	q->vma_name_addr = (uintptr_t)self->name;
	q->vma_name_size = sizeof(self->name);
	ASSERT_EQ(query(self->maps, q), 0);
	if (!q->vma_name_size)
		return "";
	ASSERT_LE(q->vma_name_size, sizeof(self->name));
	/* The size covers the string and its NUL, and nothing more. */
	ASSERT_EQ(self->name[q->vma_name_size - 1], '\0');
	ASSERT_EQ(strlen(self->name) + 1, q->vma_name_size);
	return self->name;
}

static bool untouched(const char *buf, size_t len)
{
	while (len--)
		if (buf[len] != FILL)
			return false;
	return true;
}

TEST_F(pq, anon_lookup_reports_vma)
{
	struct procmap_query q;

	place(_metadata, self, 1, 3, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	q = query_at(page_of(self, 2) + 123, 0);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 1));
	EXPECT_EQ(q.vma_end, page_of(self, 4));
	EXPECT_EQ(q.vma_flags, R | W);
	EXPECT_EQ(q.vma_page_size, self->psz);
	EXPECT_EQ(q.vma_offset, 0);
	EXPECT_EQ(q.inode, 0);
	EXPECT_EQ(q.dev_major, 0);
	EXPECT_EQ(q.dev_minor, 0);
	/* Inputs are left as they were. */
	EXPECT_EQ(q.query_addr, page_of(self, 2) + 123);
	EXPECT_EQ(q.query_flags, 0);
	EXPECT_EQ(q.size, sizeof(q));
}

TEST_F(pq, vma_flags_follow_protections)
{
	static const struct { int prot, flags; __u64 want; } maps[] = {
		{ PROT_READ, MAP_PRIVATE, R },
		{ PROT_NONE, MAP_PRIVATE, 0 },
		{ PROT_READ | PROT_WRITE, MAP_PRIVATE, R | W },
		{ PROT_READ | PROT_EXEC, MAP_PRIVATE, R | X },
		{ PROT_READ | PROT_WRITE, MAP_SHARED, R | W | S },
		{ PROT_READ, MAP_SHARED, R | S },
	};
	struct procmap_query q;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(maps); i++)
		place(_metadata, self, i, 1, maps[i].prot, maps[i].flags, -1, 0);
	for (i = 0; i < ARRAY_SIZE(maps); i++) {
		q = query_at(page_of(self, i), 0);
		ASSERT_EQ(query(self->maps, &q), 0);
		EXPECT_EQ(q.vma_start, page_of(self, i)) TH_LOG("mapping %u", i);
		EXPECT_EQ(q.vma_end, page_of(self, i + 1)) TH_LOG("mapping %u", i);
		EXPECT_EQ(q.vma_flags, maps[i].want) TH_LOG("mapping %u", i);
	}
}

TEST_F(pq, file_mapping_reports_offset_dev_inode)
{
	struct procmap_query q;
	struct stat st;

	ASSERT_EQ(fstat(self->file, &st), 0);
	place(_metadata, self, 2, 2, PROT_READ, MAP_PRIVATE, self->file, self->psz);
	q = query_at(page_of(self, 3), 0);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 2));
	EXPECT_EQ(q.vma_end, page_of(self, 4));
	EXPECT_EQ(q.vma_flags, R);
	EXPECT_EQ(q.vma_offset, self->psz);
	EXPECT_EQ(q.vma_page_size, self->psz);
	EXPECT_EQ(q.inode, st.st_ino);
	EXPECT_EQ(q.dev_major, major(st.st_dev));
	EXPECT_EQ(q.dev_minor, minor(st.st_dev));
}

TEST_F(pq, file_mapping_name_is_path)
{
	char link[64], want[PATH_MAX];
	struct procmap_query q;
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", self->file);
	n = readlink(link, want, sizeof(want) - 1);
	ASSERT_GT(n, 0);
	want[n] = '\0';
	place(_metadata, self, 1, 1, PROT_READ, MAP_SHARED, self->file, 0);
	EXPECT_STREQ(name_at(_metadata, self, page_of(self, 1), &q), want);
	EXPECT_EQ(q.vma_name_size, strlen(want) + 1);
	/* mkstemp() made it in /tmp under the name we gave. */
	EXPECT_NE(strstr(want, strrchr(self->path, '/')), NULL);
	EXPECT_EQ(q.vma_flags, R | S);
}

TEST_F(pq, deleted_file_name_has_suffix)
{
	char want[PATH_MAX];
	struct procmap_query q;

	place(_metadata, self, 1, 1, PROT_READ, MAP_PRIVATE, self->file, 0);
	snprintf(want, sizeof(want), "%s", name_at(_metadata, self, page_of(self, 1), &q));
	ASSERT_EQ(unlink(self->path), 0);
	strcat(want, " (deleted)");
	EXPECT_STREQ(name_at(_metadata, self, page_of(self, 1), &q), want);
}

TEST_F(pq, memfd_name_is_reported)
{
	struct procmap_query q;
	struct stat st;
	int fd = memfd_create("mmext-pq", MFD_CLOEXEC);

	ASSERT_GE(fd, 0);
	ASSERT_EQ(ftruncate(fd, self->psz), 0);
	ASSERT_EQ(fstat(fd, &st), 0);
	place(_metadata, self, 1, 1, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	EXPECT_STREQ(name_at(_metadata, self, page_of(self, 1), &q),
		     "/memfd:mmext-pq (deleted)");
	EXPECT_EQ(q.vma_flags, R | W | S);
	EXPECT_EQ(q.inode, st.st_ino);
}

TEST_F(pq, name_buffer_exact_size_fits)
{
	struct procmap_query q;
	size_t len;

	place(_metadata, self, 1, 1, PROT_READ, MAP_PRIVATE, self->file, 0);
	len = strlen(name_at(_metadata, self, page_of(self, 1), &q)) + 1;
	q = query_at(page_of(self, 1), 0);
	memset(self->name, FILL, sizeof(self->name));
	q.vma_name_addr = (uintptr_t)self->name;
	q.vma_name_size = len;
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_name_size, len);
	EXPECT_EQ(self->name[len - 1], '\0');
	EXPECT_TRUE(untouched(self->name + len, 16));
}

/* The uapi comment says E2BIG, but 6.12 code returns ENAMETOOLONG. */
TEST_F(pq, name_buffer_too_small_enametoolong)
{
	struct procmap_query q;
	size_t len;

	place(_metadata, self, 1, 1, PROT_READ, MAP_PRIVATE, self->file, 0);
	len = strlen(name_at(_metadata, self, page_of(self, 1), &q));
	q = query_at(page_of(self, 1), 0);
	memset(self->name, FILL, sizeof(self->name));
	q.vma_name_addr = (uintptr_t)self->name;
	q.vma_name_size = len;	/* no room for the NUL */
	EXPECT_EQ(query(self->maps, &q), ENAMETOOLONG);
	EXPECT_TRUE(untouched(self->name, sizeof(self->name)));
}

TEST_F(pq, special_name_buffer_too_small_enametoolong)
{
	struct procmap_query q = query_at((uintptr_t)__builtin_frame_address(0), 0);

	memset(self->name, FILL, sizeof(self->name));
	q.vma_name_addr = (uintptr_t)self->name;
	q.vma_name_size = strlen("[stack]");
	EXPECT_EQ(query(self->maps, &q), ENAMETOOLONG);
	EXPECT_TRUE(untouched(self->name, sizeof(self->name)));
}

TEST_F(pq, anon_vma_has_no_name)
{
	struct procmap_query q;

	place(_metadata, self, 1, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	EXPECT_STREQ(name_at(_metadata, self, page_of(self, 1), &q), "");
	EXPECT_EQ(q.vma_name_size, 0);
	EXPECT_TRUE(untouched(self->name, sizeof(self->name)));
}

TEST_F(pq, stack_vma_named_stack)
{
	struct procmap_query q;

	EXPECT_STREQ(name_at(_metadata, self,
			     (uintptr_t)__builtin_frame_address(0), &q), "[stack]");
	EXPECT_EQ(q.vma_flags & (R | W), R | W);
}

TEST_F(pq, heap_vma_named_heap)
{
	struct procmap_query q;
	char *brk = sbrk(self->psz);

	if (brk == (void *)-1)
		SKIP(return, "sbrk: %s", strerror(errno));
	brk[0] = 1;
	EXPECT_STREQ(name_at(_metadata, self, (uintptr_t)brk, &q), "[heap]");
	EXPECT_LE(q.vma_start, (uintptr_t)brk);
	EXPECT_GE(q.vma_end, (uintptr_t)brk + self->psz);
	sbrk(-(intptr_t)self->psz);
}

TEST_F(pq, vdso_vma_named_vdso)
{
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	struct procmap_query q;

	if (!vdso)
		SKIP(return, "no vDSO");
	EXPECT_STREQ(name_at(_metadata, self, vdso, &q), "[vdso]");
	EXPECT_EQ(q.vma_start, vdso);
	EXPECT_EQ(q.vma_flags & X, X);
}

TEST_F(pq, anon_vma_name_from_prctl)
{
	struct procmap_query q;

	place(_metadata, self, 1, 2, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, page_of(self, 1),
		  2 * self->psz, "mmext-pq"))
		SKIP(return, "PR_SET_VMA_ANON_NAME: %s", strerror(errno));
	EXPECT_STREQ(name_at(_metadata, self, page_of(self, 2), &q),
		     "[anon:mmext-pq]");
	EXPECT_EQ(q.vma_start, page_of(self, 1));
	EXPECT_EQ(q.vma_end, page_of(self, 3));
}

TEST_F(pq, gap_without_covering_flag_enoent)
{
	struct procmap_query q;

	place(_metadata, self, 1, 3, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	ASSERT_EQ(munmap((void *)page_of(self, 2), self->psz), 0);
	q = query_at(page_of(self, 2) + 8, 0);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
}

TEST_F(pq, gap_with_covering_flag_returns_next)
{
	struct procmap_query q;

	place(_metadata, self, 1, 3, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	ASSERT_EQ(munmap((void *)page_of(self, 2), self->psz), 0);
	q = query_at(page_of(self, 2) + 8, NEXT);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 3));
	EXPECT_EQ(q.vma_end, page_of(self, 4));
	EXPECT_EQ(q.vma_flags, R | W);
}

TEST_F(pq, covering_flag_prefers_covering_vma)
{
	struct procmap_query q;

	place(_metadata, self, 1, 1, PROT_READ, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 2, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	q = query_at(page_of(self, 1) + self->psz - 1, NEXT);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 1));
	EXPECT_EQ(q.vma_flags, R);
}

/* Walks every VMA with COVERING_OR_NEXT; returns the end of the last one. */
static unsigned long last_vma_end(struct __test_metadata *_metadata, int fd)
{
	struct procmap_query q;
	unsigned long addr = 0;
	int n = 0;

	for (;;) {
		q = query_at(addr, NEXT);
		if (query(fd, &q))
			break;
		ASSERT_GE(q.vma_end, addr);
		ASSERT_LT(q.vma_start, q.vma_end);
		addr = q.vma_end;
		ASSERT_LT(++n, 1 << 16);
	}
	ASSERT_EQ(errno, ENOENT);
	ASSERT_GT(n, 0);
	return addr;
}

TEST_F(pq, past_last_vma_enoent)
{
	unsigned long end = last_vma_end(_metadata, self->maps);
	struct procmap_query q;

	q = query_at(end, NEXT);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
	q = query_at(end, 0);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
	q = query_at(~0ULL, NEXT);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
}

/* One line of /proc/self/maps, parsed. */
struct maps_entry {
	unsigned long start, end;
	char perms[5];
	unsigned long long offset;
	unsigned int major, minor;
	unsigned long inode;
	const char *name;
};

static bool parse_maps_line(char *line, struct maps_entry *e)
{
	int pos = 0;

	if (sscanf(line, "%lx-%lx %4s %llx %x:%x %lu %n", &e->start, &e->end,
		   e->perms, &e->offset, &e->major, &e->minor, &e->inode,
		   &pos) < 7 || !pos)
		return false;
	e->name = line + pos;
	return true;
}

/* Grows the stack now so that it does not change while maps are compared. */
static void __attribute__((noinline)) touch_stack(size_t bytes)
{
	volatile char buf[bytes];

	buf[0] = buf[bytes - 1] = 0;
}

/* Walking all VMAs gives what the text of /proc/self/maps shows. */
TEST_F(pq, walk_matches_proc_maps)
{
	size_t cap = 1 << 20, len = 0;
	char *text = malloc(cap), *line, *next;
	struct procmap_query q;
	struct maps_entry e;
	unsigned long addr = 0;
	char perms[5];
	int fd, lines = 0;
	ssize_t n;

	ASSERT_NE(text, NULL);
	memset(text, 0, cap);
	touch_stack(64 << 10);
	fd = open("/proc/self/maps", O_RDONLY);
	ASSERT_GE(fd, 0);
	while ((n = read(fd, text + len, cap - 1 - len)) > 0)
		len += n;
	close(fd);
	ASSERT_LT(len, cap - 1);
	text[len] = '\0';

	for (line = text; *line; line = next) {
		next = strchr(line, '\n');
		ASSERT_NE(next, NULL);
		*next++ = '\0';
		ASSERT_TRUE(parse_maps_line(line, &e)) TH_LOG("%s", line);
		/* The vsyscall page is a gate area, not a VMA. */
		if (!strcmp(e.name, "[vsyscall]"))
			continue;
		lines++;

		q = query_at(addr, NEXT);
		q.vma_name_addr = (uintptr_t)self->name;
		q.vma_name_size = sizeof(self->name);
		ASSERT_EQ(query(self->maps, &q), 0) TH_LOG("after %lx", addr);
		snprintf(perms, sizeof(perms), "%c%c%c%c",
			 q.vma_flags & R ? 'r' : '-', q.vma_flags & W ? 'w' : '-',
			 q.vma_flags & X ? 'x' : '-', q.vma_flags & S ? 's' : 'p');
		EXPECT_EQ(q.vma_start, e.start) TH_LOG("%s", line);
		EXPECT_EQ(q.vma_end, e.end) TH_LOG("%s", line);
		EXPECT_STREQ(perms, e.perms) TH_LOG("%s", line);
		EXPECT_EQ(q.vma_offset, e.offset) TH_LOG("%s", line);
		EXPECT_EQ(q.dev_major, e.major) TH_LOG("%s", line);
		EXPECT_EQ(q.dev_minor, e.minor) TH_LOG("%s", line);
		EXPECT_EQ(q.inode, e.inode) TH_LOG("%s", line);
		EXPECT_STREQ(q.vma_name_size ? self->name : "", e.name)
			TH_LOG("%s", line);
		addr = q.vma_end;
	}
	EXPECT_GT(lines, 0);
	q = query_at(addr, NEXT);
	EXPECT_EQ(query(self->maps, &q), ENOENT) TH_LOG("VMA not in maps");
	free(text);
}

TEST_F(pq, file_backed_filter_skips_anon)
{
	struct procmap_query q;

	place(_metadata, self, 1, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 2, 1, PROT_READ, MAP_PRIVATE, self->file, 0);
	q = query_at(page_of(self, 1), FILE_ONLY | NEXT);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 2));
	EXPECT_NE(q.inode, 0);
	/* Without COVERING_OR_NEXT the covering VMA must itself match. */
	q = query_at(page_of(self, 1), FILE_ONLY);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
	q = query_at(page_of(self, 2), FILE_ONLY);
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.vma_start, page_of(self, 2));
}

TEST_F(pq, permission_filters_skip_nonmatching)
{
	static const struct { __u64 filter; int page; } cases[] = {
		{ R, 1 }, { W, 2 }, { X, 3 }, { S, 4 }, { W | S, 4 },
		{ R | X, 3 }, { R | W, 2 },
	};
	struct procmap_query q;
	unsigned int i;

	place(_metadata, self, 1, 1, PROT_READ, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 2, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 3, 1, PROT_READ | PROT_EXEC, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 4, 1, PROT_READ | PROT_WRITE, MAP_SHARED, -1, 0);
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		q = query_at(page_of(self, 1), cases[i].filter | NEXT);
		ASSERT_EQ(query(self->maps, &q), 0);
		EXPECT_EQ(q.vma_start, page_of(self, cases[i].page))
			TH_LOG("filter %#llx", (unsigned long long)cases[i].filter);
		EXPECT_EQ(q.vma_flags & cases[i].filter, cases[i].filter);
	}
	/* Without COVERING_OR_NEXT a non-matching covering VMA is ENOENT. */
	q = query_at(page_of(self, 1), W);
	EXPECT_EQ(query(self->maps, &q), ENOENT);
	q = query_at(page_of(self, 2), R | W);
	EXPECT_EQ(query(self->maps, &q), 0);
}

/* The GNU build ID note of the object holding @addr, from its loaded notes. */
struct build_id_search {
	unsigned long addr;
	unsigned char id[MAX_BUILD_ID];
	size_t len;
};

static int find_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	struct build_id_search *s = data;
	const ElfW(Phdr) *ph;
	bool mine = false;
	int i;

	(void)size;
	for (i = 0; i < info->dlpi_phnum; i++) {
		ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && s->addr >= info->dlpi_addr + ph->p_vaddr &&
		    s->addr < info->dlpi_addr + ph->p_vaddr + ph->p_memsz)
			mine = true;
	}
	if (!mine)
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		size_t align, off = 0;
		const char *notes;

		ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_NOTE)
			continue;
		notes = (const char *)(info->dlpi_addr + ph->p_vaddr);
		align = ph->p_align == 8 ? 8 : 4;
		while (off + sizeof(ElfW(Nhdr)) <= ph->p_memsz) {
			const ElfW(Nhdr) *nh = (const void *)(notes + off);
			size_t name = off + sizeof(*nh);
			size_t desc = name + ((nh->n_namesz + align - 1) & ~(align - 1));

			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    !memcmp(notes + name, "GNU", 4) &&
			    nh->n_descsz <= MAX_BUILD_ID) {
				memcpy(s->id, notes + desc, nh->n_descsz);
				s->len = nh->n_descsz;
				return 1;
			}
			off = desc + ((nh->n_descsz + align - 1) & ~(align - 1));
		}
	}
	return 1;
}

/* Our own build ID, or 0 bytes when the binary was linked without one. */
static size_t own_build_id(unsigned char *id)
{
	struct build_id_search s = { .addr = (uintptr_t)&own_build_id };

	dl_iterate_phdr(find_build_id, &s);
	memcpy(id, s.id, s.len);
	return s.len;
}

TEST_F(pq, build_id_of_own_text)
{
	unsigned char want[MAX_BUILD_ID], got[MAX_BUILD_ID];
	size_t len = own_build_id(want);
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);
	char exe[PATH_MAX];
	ssize_t n;

	if (!len)
		SKIP(return, "binary has no GNU build ID note");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	ASSERT_GT(n, 0);
	exe[n] = '\0';

	memset(got, FILL, sizeof(got));
	q.build_id_addr = (uintptr_t)got;
	q.build_id_size = sizeof(got);
	q.vma_name_addr = (uintptr_t)self->name;
	q.vma_name_size = sizeof(self->name);
	ASSERT_EQ(query(self->maps, &q), 0);
	ASSERT_EQ(q.build_id_size, len);
	EXPECT_EQ(memcmp(got, want, len), 0);
	EXPECT_TRUE(untouched((char *)got + len, sizeof(got) - len));
	EXPECT_STREQ(self->name, exe);
	EXPECT_EQ(q.vma_flags & (X | W), X);

	/* A buffer of exactly the ID's size is enough. */
	q = query_at((uintptr_t)&own_build_id, 0);
	q.build_id_addr = (uintptr_t)got;
	q.build_id_size = len;
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_EQ(q.build_id_size, len);
}

/* The uapi comment says E2BIG, but 6.12 code returns ENAMETOOLONG. */
TEST_F(pq, build_id_buffer_too_small_enametoolong)
{
	unsigned char want[MAX_BUILD_ID], got[MAX_BUILD_ID];
	size_t len = own_build_id(want);
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);

	if (!len)
		SKIP(return, "binary has no GNU build ID note");
	memset(got, FILL, sizeof(got));
	q.build_id_addr = (uintptr_t)got;
	q.build_id_size = len - 1;
	EXPECT_EQ(query(self->maps, &q), ENAMETOOLONG);
	EXPECT_TRUE(untouched((char *)got, sizeof(got)));
}

/* No build ID to give is not an error: the size comes back as 0. */
TEST_F(pq, build_id_empty_without_elf_file)
{
	unsigned char got[MAX_BUILD_ID];
	struct procmap_query q;
	int i;

	place(_metadata, self, 1, 1, PROT_READ | PROT_WRITE, MAP_PRIVATE, -1, 0);
	place(_metadata, self, 2, 1, PROT_READ, MAP_PRIVATE, self->file, 0);
	for (i = 1; i <= 2; i++) {
		memset(got, FILL, sizeof(got));
		q = query_at(page_of(self, i), 0);
		q.build_id_addr = (uintptr_t)got;
		q.build_id_size = sizeof(got);
		ASSERT_EQ(query(self->maps, &q), 0) TH_LOG("page %d", i);
		EXPECT_EQ(q.build_id_size, 0) TH_LOG("page %d", i);
		EXPECT_TRUE(untouched((char *)got, sizeof(got)));
	}
}

TEST_F(pq, size_below_first_version_einval)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);
	__u64 sizes[] = { 0, 8, offsetofend(struct procmap_query, query_addr) - 1 };
	unsigned int i;

	for (i = 0; i < 3; i++) {
		q.size = sizes[i];
		EXPECT_EQ(query(self->maps, &q), EINVAL) TH_LOG("size %llu",
			(unsigned long long)sizes[i]);
	}
}

/* The first version ends at query_addr, and only that much is written back. */
TEST_F(pq, first_version_size_accepted)
{
	size_t v0 = offsetofend(struct procmap_query, query_addr);
	struct procmap_query q;

	memset(&q, FILL, sizeof(q));
	q.size = v0;
	q.query_flags = 0;
	q.query_addr = (uintptr_t)&own_build_id;
	ASSERT_EQ(query(self->maps, &q), 0);
	EXPECT_TRUE(untouched((char *)&q + v0, sizeof(q) - v0));
}

TEST_F(pq, larger_size_with_zero_tail_accepted)
{
	struct {
		struct procmap_query q;
		__u64 tail[2];
	} big = { .q = query_at((uintptr_t)&own_build_id, 0) };

	big.q.size = sizeof(big);
	ASSERT_EQ(query(self->maps, &big), 0);
	EXPECT_LE(big.q.vma_start, (uintptr_t)&own_build_id);
	EXPECT_GT(big.q.vma_end, (uintptr_t)&own_build_id);
	EXPECT_EQ(big.tail[0], 0);
	EXPECT_EQ(big.tail[1], 0);
}

TEST_F(pq, larger_size_with_nonzero_tail_e2big)
{
	struct {
		struct procmap_query q;
		__u64 tail[2];
	} big = { .q = query_at((uintptr_t)&own_build_id, 0) };

	big.q.size = sizeof(big);
	big.tail[1] = 1;
	EXPECT_EQ(query(self->maps, &big), E2BIG);
}

/* Sizes above a page are refused before anything else is read. */
TEST_F(pq, size_above_page_e2big)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);

	q.size = self->psz + 1;
	EXPECT_EQ(query(self->maps, &q), E2BIG);
	q.size = 1ULL << 40;
	EXPECT_EQ(query(self->maps, &q), E2BIG);
}

TEST_F(pq, unknown_query_flags_einval)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, FILE_ONLY << 1);

	EXPECT_EQ(query(self->maps, &q), EINVAL);
	q.query_flags = 1ULL << 63;
	EXPECT_EQ(query(self->maps, &q), EINVAL);
}

TEST_F(pq, name_pointer_and_size_mismatch_einval)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);

	q.vma_name_size = 16;
	EXPECT_EQ(query(self->maps, &q), EINVAL);
	q.vma_name_size = 0;
	q.vma_name_addr = (uintptr_t)self->name;
	EXPECT_EQ(query(self->maps, &q), EINVAL);
}

TEST_F(pq, build_id_pointer_and_size_mismatch_einval)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);

	q.build_id_size = 20;
	EXPECT_EQ(query(self->maps, &q), EINVAL);
	q.build_id_size = 0;
	q.build_id_addr = (uintptr_t)self->name;
	EXPECT_EQ(query(self->maps, &q), EINVAL);
}

static void *unmapped_page(size_t psz)
{
	void *p = mmap(NULL, psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p != MAP_FAILED)
		munmap(p, psz);
	return p;
}

TEST_F(pq, bad_arg_pointer_efault)
{
	void *hole = unmapped_page(self->psz);

	ASSERT_NE(hole, MAP_FAILED);
	EXPECT_EQ(query(self->maps, hole), EFAULT);
	EXPECT_EQ(query(self->maps, NULL), EFAULT);
	EXPECT_EQ(query(self->maps, (void *)KERNEL_ADDR), EFAULT);
}

/* The result is written back into the argument, so it must be writable. */
TEST_F(pq, read_only_arg_efault)
{
	struct procmap_query *q = mmap(NULL, self->psz, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	ASSERT_NE(q, MAP_FAILED);
	*q = query_at((uintptr_t)&own_build_id, 0);
	ASSERT_EQ(mprotect(q, self->psz, PROT_READ), 0);
	EXPECT_EQ(query(self->maps, q), EFAULT);
	munmap(q, self->psz);
}

TEST_F(pq, bad_name_buffer_efault)
{
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);
	void *hole = unmapped_page(self->psz);

	ASSERT_NE(hole, MAP_FAILED);
	q.vma_name_addr = (uintptr_t)hole;
	q.vma_name_size = 64;
	EXPECT_EQ(query(self->maps, &q), EFAULT);
	q.vma_name_addr = KERNEL_ADDR;
	q.vma_name_size = 64;
	EXPECT_EQ(query(self->maps, &q), EFAULT);
}

TEST_F(pq, bad_build_id_buffer_efault)
{
	unsigned char want[MAX_BUILD_ID];
	struct procmap_query q = query_at((uintptr_t)&own_build_id, 0);
	void *hole = unmapped_page(self->psz);

	if (!own_build_id(want))
		SKIP(return, "binary has no GNU build ID note");
	ASSERT_NE(hole, MAP_FAILED);
	q.build_id_addr = (uintptr_t)hole;
	q.build_id_size = MAX_BUILD_ID;
	EXPECT_EQ(query(self->maps, &q), EFAULT);
}

TEST_HARNESS_MAIN
