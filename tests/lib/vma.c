// SPDX-License-Identifier: GPL-2.0
/*
 * VMA queries: mmext_maps_find/next on both backends (text and PROCMAP_QUERY), the
 * text parser on its own, and the errors. Each fixture test runs once per backend;
 * the ioctl variant SKIPs on kernels before 6.11.
 */
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sched.h>
#include <signal.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "helpers.h"
#include "harness.h"

static struct mmext_maps *open_maps(struct __test_metadata *_metadata, pid_t pid,
				    uint32_t backend, uint32_t flags)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = backend, .flags = flags);
	struct mmext_maps *m = NULL;
	int ret = mmext_maps_open(pid, &o, &m);

	EXPECT_EQ(0, ret);
	return m;
}

FIXTURE(maps) {
	struct mmext_maps *m;
	char *guarded;		/* five pages: ---, rw-, r--, rw-, --- */
	char *area;		/* the middle three, so exactly three VMAs of ours */
	size_t psz;
};

FIXTURE_VARIANT(maps) {
	uint32_t backend;
};

FIXTURE_VARIANT_ADD(maps, text) { .backend = MMEXT_MAPS_TEXT };
FIXTURE_VARIANT_ADD(maps, ioctl) { .backend = MMEXT_MAPS_IOCTL };
FIXTURE_VARIANT_ADD(maps, automatic) { .backend = MMEXT_MAPS_AUTO };

FIXTURE_SETUP(maps)
{
	self->psz = t_psz();
	if (variant->backend == MMEXT_MAPS_IOCTL)
		REQUIRE_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	/* PROT_NONE guards keep the area from merging with a neighbour. */
	self->guarded = t_map(5 * self->psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, self->guarded);
	self->area = self->guarded + self->psz;
	ASSERT_EQ(0, mprotect(self->area, 3 * self->psz, PROT_READ | PROT_WRITE));
	ASSERT_EQ(0, mprotect(self->area + self->psz, self->psz, PROT_READ));
	self->m = open_maps(_metadata, 0, variant->backend, 0);
	ASSERT_NE(NULL, self->m);
}

FIXTURE_TEARDOWN(maps)
{
	mmext_maps_close(self->m);
	if (self->guarded)
		munmap(self->guarded, 5 * self->psz);
}

TEST_F(maps, backend_is_reported)
{
	int b = mmext_maps_backend(self->m);

	if (variant->backend == MMEXT_MAPS_AUTO) {
		struct mmext_feature_status st;

		ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_PROCMAP_QUERY, &st));
		EXPECT_EQ(st.available ? MMEXT_MAPS_IOCTL : MMEXT_MAPS_TEXT, b);
	} else {
		EXPECT_EQ(variant->backend, b);
	}
}

TEST_F(maps, find_covering_vma)
{
	uintptr_t base = (uintptr_t)self->area;
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_maps_find(self->m, base + self->psz + 5, 0, &v));
	EXPECT_EQ(base + self->psz, v.start);
	EXPECT_EQ(base + 2 * self->psz, v.end);
	EXPECT_EQ(MMEXT_VMA_READ, v.prot);
	EXPECT_EQ(MMEXT_VMA_ANON, v.kind);
	EXPECT_EQ(0, v.inode);
	EXPECT_EQ(0, v.name_len);
	EXPECT_STREQ("", v.name);

	ASSERT_EQ(0, mmext_maps_find(self->m, base, 0, &v));
	EXPECT_EQ(base, v.start);
	EXPECT_EQ(MMEXT_VMA_READ | MMEXT_VMA_WRITE, v.prot);
	ASSERT_EQ(0, mmext_maps_find(self->m, base + 3 * self->psz - 1, 0, &v));
	EXPECT_EQ(base + 3 * self->psz, v.end);
}

TEST_F(maps, find_next_over_a_hole)
{
	uintptr_t base = (uintptr_t)self->area;
	struct mmext_vma v;

	/* Put a hole at the first page: only NEXT finds something there. */
	ASSERT_EQ(0, munmap(self->area, self->psz));
	EXPECT_EQ(-ENOENT, mmext_maps_find(self->m, base, 0, &v));
	ASSERT_EQ(0, mmext_maps_find(self->m, base, MMEXT_FIND_NEXT, &v));
	EXPECT_EQ(base + self->psz, v.start);
	/* Covering wins over next. */
	ASSERT_EQ(0, mmext_maps_find(self->m, base + 2 * self->psz, MMEXT_FIND_NEXT, &v));
	EXPECT_EQ(base + 2 * self->psz, v.start);
	/* Nothing above the top of the address space. */
	EXPECT_EQ(-ENOENT, mmext_maps_find(self->m, UINT64_MAX - 1, MMEXT_FIND_NEXT, &v));
}

TEST_F(maps, special_vmas_are_classified)
{
	struct mmext_vma v;
	int local;
	unsigned long vdso = getauxval(AT_SYSINFO_EHDR);
	void *brk0 = sbrk(0);

	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)&local, 0, &v));
	EXPECT_EQ(MMEXT_VMA_STACK, v.kind);
	EXPECT_STREQ("[stack]", v.name);
	if (vdso) {
		ASSERT_EQ(0, mmext_maps_find(self->m, vdso, 0, &v));
		EXPECT_EQ(MMEXT_VMA_VDSO, v.kind);
		EXPECT_STREQ("[vdso]", v.name);
	}
	/* Make sure a heap exists, then look at it. */
	ASSERT_NE((void *)-1, sbrk(self->psz));
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)brk0, 0, &v));
	EXPECT_EQ(MMEXT_VMA_HEAP, v.kind);
	EXPECT_STREQ("[heap]", v.name);
}

/* A file mapped at offset one page, under a path with spaces. */
static char *map_file(struct __test_metadata *_metadata, char *path, struct stat *st)
{
	size_t psz = t_psz();
	int fd = mkstemp(path);
	char *p;

	EXPECT_GE(fd, 0);
	if (fd < 0)
		return NULL;
	EXPECT_EQ(0, ftruncate(fd, 2 * psz));
	EXPECT_EQ(0, fstat(fd, st));
	p = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, psz);
	close(fd);
	EXPECT_NE(MAP_FAILED, p);
	return p == MAP_FAILED ? NULL : p;
}

TEST_F(maps, file_vma_fields_file_only_and_deleted)
{
	char path[] = "/tmp/mmext vma test with spaces XXXXXX";
	struct mmext_vma v;
	struct stat st;
	char *p = map_file(_metadata, path, &st);

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, MMEXT_FIND_FILE, &v));
	EXPECT_EQ((uintptr_t)p, v.start);
	EXPECT_EQ(MMEXT_VMA_FILE, v.kind);
	EXPECT_STREQ(path, v.name);
	EXPECT_EQ(strlen(path), v.name_len);
	EXPECT_EQ(st.st_ino, v.inode);
	EXPECT_EQ(major(st.st_dev), v.dev_major);
	EXPECT_EQ(minor(st.st_dev), v.dev_minor);
	EXPECT_EQ(t_psz(), v.offset);
	EXPECT_EQ(MMEXT_VMA_READ | MMEXT_VMA_SHARED, v.prot);
	EXPECT_EQ(0, v.flags);

	/* File-only lookups pass over anonymous VMAs (with NEXT, to a file above). */
	EXPECT_EQ(-ENOENT, mmext_maps_find(self->m, (uintptr_t)self->area, MMEXT_FIND_FILE, &v));
	if ((uintptr_t)p > (uintptr_t)self->area) {
		ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)self->area,
					     MMEXT_FIND_FILE | MMEXT_FIND_NEXT, &v));
		EXPECT_EQ(MMEXT_VMA_FILE, v.kind);
		EXPECT_GT(v.start, (uintptr_t)self->area);
	}

	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, 0, &v));
	EXPECT_STREQ(path, v.name);
	EXPECT_EQ(MMEXT_VMA_DELETED, v.flags);
	munmap(p, t_psz());
}

/* A path of about 3000 bytes: longer than any buffer the backends start with. */
TEST_F(maps, very_long_path)
{
	char dir[4096] = "/tmp/mmext-long-XXXXXX", comp[201], file[4200];
	struct mmext_vma v;
	size_t psz = t_psz();
	int i, fd;
	char *p;

	ASSERT_NE(NULL, mkdtemp(dir));
	memset(comp, 'd', 200);
	comp[200] = '\0';
	for (i = 0; i < 14; i++) {
		strcat(dir, "/");
		strcat(dir, comp);
		ASSERT_EQ(0, mkdir(dir, 0700));
	}
	snprintf(file, sizeof(file), "%s/file with space", dir);
	fd = open(file, O_RDWR | O_CREAT, 0600);
	ASSERT_GE(fd, 0);
	ASSERT_EQ(0, ftruncate(fd, psz));
	p = mmap(NULL, psz, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	ASSERT_NE(MAP_FAILED, p);
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, 0, &v));
	EXPECT_STREQ(file, v.name);
	EXPECT_EQ(strlen(file), v.name_len);
	munmap(p, psz);
	unlink(file);
	for (i = 0; i < 15; i++) {
		rmdir(dir);
		*strrchr(dir, '/') = '\0';
	}
}

/*
 * A path longer than PATH_MAX, which PROCMAP_QUERY does not give: every backend
 * finds and lists the VMA with the name the text shows.
 */
TEST_F(maps, path_longer_than_path_max)
{
	char path[T_LONG_DEPTH * (T_LONG_COMP + 1) + 64], base[64];
	size_t psz = t_psz();
	struct mmext_vma v;
	int ret, listed = 0;
	char *p;

	p = t_long_path_map(psz, path, base);
	if (!p) {
		t_long_path_remove(base);
		SKIP(return, "cannot make a file with a path over PATH_MAX in /dev/shm");
	}
	ASSERT_GT(strlen(path), PATH_MAX);
	EXPECT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, 0, &v));
	EXPECT_EQ(strlen(path), v.name_len);
	EXPECT_EQ(0, v.name_len == strlen(path) ? memcmp(path, v.name, v.name_len) : -1);
	EXPECT_EQ(MMEXT_VMA_FILE, v.kind);
	while ((ret = mmext_maps_next(self->m, &v)) == 1) {
		if (v.start != (uintptr_t)p)
			continue;
		listed = 1;
		EXPECT_EQ(strlen(path), v.name_len);
		EXPECT_STREQ(path, v.name);
	}
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(listed);
	munmap(p, psz);
	t_long_path_remove(base);
}

/*
 * A lookup reads the text as it is now: after a long-path mapping is replaced by
 * another, the handle reports the new one, not what it read before (while looking up
 * the mapping below it, whose text comes in the same read).
 */
TEST_F(maps, path_longer_than_path_max_replaced)
{
	char path[3][T_LONG_DEPTH * (T_LONG_COMP + 1) + 64], base[3][64];
	size_t psz = t_psz();
	struct mmext_vma v;
	uint64_t inode_a;
	char *p[3], *a, *b, *low;
	int i, n;

	for (n = 0; n < 3; n++) {
		p[n] = t_long_path_map(psz, path[n], base[n]);
		if (!p[n])
			break;
	}
	if (n < 3) {
		for (i = 0; i <= n && i < 3; i++)
			t_long_path_remove(base[i]);
		SKIP(return, "cannot make files with paths over PATH_MAX in /dev/shm");
	}
	/* a above low, b to replace a */
	a = p[0] > p[1] ? p[0] : p[1];
	low = p[0] > p[1] ? p[1] : p[0];
	b = p[2];
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)a, 0, &v));
	inode_a = v.inode;
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)low, 0, &v));
	ASSERT_EQ(a, mremap(b, psz, psz, MREMAP_MAYMOVE | MREMAP_FIXED, a));
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)a, 0, &v));
	EXPECT_NE(inode_a, v.inode);
	EXPECT_EQ(strlen(path[2]), v.name_len);
	EXPECT_EQ(0, v.name_len == strlen(path[2]) ? memcmp(path[2], v.name, v.name_len) : -1);
	munmap(a, psz);
	munmap(low, psz);
	for (i = 0; i < 3; i++)
		t_long_path_remove(base[i]);
}

/* read() system calls this process has made: -1 without task I/O accounting. */
static long read_calls(void)
{
	char line[64];
	long n = -1;
	FILE *f = fopen("/proc/self/io", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "syscr: %ld", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

/*
 * Many VMAs with names only the text gives: a listing reads the text once, not from
 * its start again for every such VMA.
 */
TEST_F(maps, many_paths_longer_than_path_max)
{
	char path[T_LONG_DEPTH * (T_LONG_COMP + 1) + 64], base[64];
	enum { N = 128 };
	size_t psz = t_psz();
	void *maps[N];
	struct mmext_vma v;
	int i, ret, listed = 0;
	long before, reads;
	char *p;

	p = t_long_path_map(psz, path, base);
	if (!p) {
		t_long_path_remove(base);
		SKIP(return, "cannot make a file with a path over PATH_MAX in /dev/shm");
	}
	/*
	 * The same page again and again (mremap() of a shared mapping with an old size of
	 * 0 maps it once more): adjacent mappings of one offset never merge.
	 */
	for (i = 0; i < N; i++) {
		maps[i] = mremap(p, 0, psz, MREMAP_MAYMOVE);
		ASSERT_NE(MAP_FAILED, maps[i]);
	}
	before = read_calls();
	if (before < 0) {
		for (i = 0; i < N; i++)
			munmap(maps[i], psz);
		munmap(p, psz);
		t_long_path_remove(base);
		SKIP(return, "no /proc/self/io (CONFIG_TASK_IO_ACCOUNTING) to count reads");
	}
	while ((ret = mmext_maps_next(self->m, &v)) == 1)
		listed += v.name_len == strlen(path);
	reads = read_calls() - before;
	EXPECT_EQ(0, ret);
	EXPECT_EQ(N + 1, listed);
	/* A read or two per VMA of the text once; from the start each time: thousands. */
	EXPECT_GT(4 * N, reads) TH_LOG("%ld read() calls to list %d VMAs", reads, N + 1);
	for (i = 0; i < N; i++)
		munmap(maps[i], psz);
	munmap(p, psz);
	t_long_path_remove(base);
}

/*
 * The text cannot tell a newline in a path from the four bytes "\012": the kernel
 * escapes one and not the other. Both names must come out as they are, from
 * lookups and listings of handle m.
 */
static void newline_and_backslash(struct __test_metadata *_metadata, struct mmext_maps *m)
{
	char dir[] = "/tmp/mmext-names-XXXXXX", path[2][64];
	const char *base[2] = { "lit\\012x", "lit\nx" };
	size_t psz = t_psz();
	struct mmext_vma v;
	char *p[2];
	int i, fd, ret, listed[2] = { 0, 0 };

	ASSERT_NE(NULL, mkdtemp(dir));
	for (i = 0; i < 2; i++) {
		snprintf(path[i], sizeof(path[i]), "%s/%s", dir, base[i]);
		fd = open(path[i], O_RDWR | O_CREAT | O_EXCL, 0600);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(0, ftruncate(fd, psz));
		p[i] = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, p[i]);
	}
	for (i = 0; i < 2; i++) {
		ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)p[i], 0, &v));
		EXPECT_EQ(strlen(path[i]), v.name_len);
		EXPECT_STREQ(path[i], v.name);
		EXPECT_EQ(MMEXT_VMA_FILE, v.kind);
	}
	while ((ret = mmext_maps_next(m, &v)) == 1) {
		for (i = 0; i < 2; i++) {
			if (v.start != (uintptr_t)p[i])
				continue;
			listed[i] = 1;
			EXPECT_EQ(strlen(path[i]), v.name_len);
			EXPECT_STREQ(path[i], v.name) TH_LOG("listing, name %d", i);
		}
	}
	EXPECT_EQ(0, ret);
	EXPECT_TRUE(listed[0] && listed[1]);
	for (i = 0; i < 2; i++) {
		munmap(p[i], psz);
		unlink(path[i]);
	}
	rmdir(dir);
}

TEST_F(maps, newline_and_backslash_names)
{
	newline_and_backslash(_metadata, self->m);
}

/* PROCMAP_QUERY fails with ENOTTY from here on, as on kernels before 6.11. */
static int hide_procmap_query(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)PROCMAP_QUERY, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOTTY),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		return -errno;
	return 0;
}

/*
 * Without PROCMAP_QUERY the map_files links give the exact names, to those allowed to
 * read them (CAP_CHECKPOINT_RESTORE); the harness runs each test in its own process,
 * whose first probe then finds no ioctl.
 */
TEST(names_without_procmap_query)
{
	struct mmext_maps *m;
	int ret;

	if (geteuid() != 0)
		SKIP(return, "needs root to read /proc/PID/map_files");
	ret = hide_procmap_query();
	if (ret == -EINVAL)
		SKIP(return, "no seccomp filters in this kernel (CONFIG_SECCOMP_FILTER)");
	ASSERT_EQ(0, ret);
	REQUIRE_NO_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	m = open_maps(_metadata, 0, MMEXT_MAPS_AUTO, 0);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(MMEXT_MAPS_TEXT, mmext_maps_backend(m));
	newline_and_backslash(_metadata, m);
	mmext_maps_close(m);
}

TEST_F(maps, named_anonymous_memory)
{
	struct mmext_feature_status st;
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_ANON_NAME, &st));
	if (!st.available)
		SKIP(return, "no anon names: %s", st.detail);
	ASSERT_EQ(0, mmext_name_set(self->area, t_psz(), "vma test name"));
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)self->area, 0, &v));
	EXPECT_EQ(MMEXT_VMA_ANON_NAMED, v.kind);
	EXPECT_STREQ("[anon:vma test name]", v.name);
	ASSERT_NE(NULL, v.anon_name);
	EXPECT_EQ(strlen("vma test name"), v.anon_name_len);
	EXPECT_EQ(0, memcmp(v.anon_name, "vma test name", v.anon_name_len));
}

/*
 * Shared anonymous memory is shmem, file-backed for MMEXT_FIND_FILE whether or not it
 * has a name, on every backend: PROCMAP_QUERY's file-backed filter says so.
 */
TEST_F(maps, named_shared_anonymous_memory_is_file_backed)
{
	char *p = t_map(t_psz(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS);
	struct mmext_vma v;

	ASSERT_NE(NULL, p);
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, MMEXT_FIND_FILE, &v));
	EXPECT_EQ((uintptr_t)p, v.start);
	if (mmext_name_set(p, t_psz(), "vma test shmem"))
		SKIP(munmap(p, t_psz()); return, "shared anonymous memory cannot be named here");
	ASSERT_EQ(0, mmext_maps_find(self->m, (uintptr_t)p, MMEXT_FIND_FILE, &v));
	EXPECT_EQ((uintptr_t)p, v.start);
	EXPECT_EQ(MMEXT_VMA_ANON_SHMEM_NAMED, v.kind);
	munmap(p, t_psz());
}

TEST_F(maps, listing_is_ordered_and_complete)
{
	struct mmext_vma v;
	uint64_t prev_end = 0;
	int ret, n = 0, seen = 0;

	while ((ret = mmext_maps_next(self->m, &v)) == 1) {
		EXPECT_LT(v.start, v.end);
		EXPECT_LE(prev_end, v.start);
		prev_end = v.end;
		if (v.start == (uintptr_t)self->area + t_psz())
			seen = 1;
		n++;
	}
	EXPECT_EQ(0, ret);
	EXPECT_GT(n, 5);
	EXPECT_TRUE(seen);
	EXPECT_EQ(0, mmext_maps_next(self->m, &v));	/* stays at the end */
	mmext_maps_rewind(self->m);
	ASSERT_EQ(1, mmext_maps_next(self->m, &v));
	EXPECT_LT(v.start, (uintptr_t)self->area);
}

TEST_F(maps, bad_flags)
{
	struct mmext_vma v;

	EXPECT_EQ(-EINVAL, mmext_maps_find(self->m, (uintptr_t)self->area, 0x80, &v));
	EXPECT_EQ(-EFAULT, mmext_maps_find(self->m, (uintptr_t)self->area, 0, NULL));
	EXPECT_EQ(-EFAULT, mmext_maps_find(NULL, (uintptr_t)self->area, 0, &v));
	EXPECT_EQ(-EFAULT, mmext_maps_next(NULL, &v));
	EXPECT_EQ(-EFAULT, mmext_maps_next(self->m, NULL));
	EXPECT_EQ(-EINVAL, mmext_maps_backend(NULL));
}

static int child_wait(void *arg)
{
	pause();
	return 0;
}

/* Another process: its mappings, then -ESRCH (or end of data) once it is gone. */
TEST_F(maps, other_process)
{
	struct mmext_maps *m;
	struct mmext_vma v;
	int status, ret;
	pid_t pid = fork();

	ASSERT_GE(pid, 0);
	if (!pid)
		_exit(child_wait(NULL));
	m = open_maps(_metadata, pid, variant->backend, 0);
	ASSERT_NE(NULL, m);
	/* Inherited across fork: the child has our three-VMA area too. */
	ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)self->area + t_psz(), 0, &v));
	EXPECT_EQ((uintptr_t)self->area + t_psz(), v.start);
	EXPECT_EQ(MMEXT_VMA_READ, v.prot);
	kill(pid, SIGKILL);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ret = mmext_maps_find(m, (uintptr_t)self->area, 0, &v);
	EXPECT_TRUE(ret == -ESRCH || ret == -ENOENT) TH_LOG("ret %d", ret);
	mmext_maps_close(m);
}

/*
 * A process that executes a program after the handle was opened, where the handle has
 * looked already: the process lives on, so a lookup, and a listing from its start,
 * read the program's maps, not -ESRCH, and never an empty listing.
 */
static void after_execve(struct __test_metadata *_metadata, uint32_t backend, char *area)
{
	char exe[4096], link[64], line[16] = "";
	int go[2], in[2], out[2], status, n = 0, ret, found = 0;
	struct mmext_maps *m;
	struct mmext_vma v;
	ssize_t len;
	FILE *f;
	pid_t pid;

	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, pipe(in));
	ASSERT_EQ(0, pipe(out));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		char c;

		close(in[1]);
		close(out[0]);
		close(go[1]);
		if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 || read(go[0], &c, 1) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c", "echo ready; read x", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	m = open_maps(_metadata, pid, backend, 0);
	ASSERT_NE(NULL, m);
	ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)area, 0, &v));
	ASSERT_EQ(1, write(go[1], "x", 1));
	f = fdopen(out[0], "r");
	ASSERT_NE(NULL, f);
	ASSERT_NE(NULL, fgets(line, sizeof(line), f)) TH_LOG("the shell did not start");
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	len = readlink(link, exe, sizeof(exe) - 1);
	ASSERT_LT(0, len);
	exe[len] = '\0';

	EXPECT_EQ(-ENOENT, mmext_maps_find(m, (uintptr_t)area, 0, &v));
	EXPECT_EQ(0, mmext_maps_find(m, 0, MMEXT_FIND_NEXT, &v));
	while ((ret = mmext_maps_next(m, &v)) == 1) {
		n++;
		found |= !strcmp(v.name, exe);
	}
	EXPECT_EQ(0, ret);
	EXPECT_LT(0, n);
	EXPECT_TRUE(found) TH_LOG("no VMA of %s among %d", exe, n);
	mmext_maps_close(m);
	close(in[1]);
	fclose(f);
	close(go[0]);
	close(go[1]);
	EXPECT_EQ(pid, waitpid(pid, &status, 0));
}

TEST_F(maps, other_process_after_execve)
{
	after_execve(_metadata, variant->backend, self->area);
}

/* The same where the kernel has no PROCMAP_QUERY to say that the maps read are gone. */
TEST(other_process_after_execve_without_procmap_query)
{
	char *p = t_map(t_psz(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	int ret = hide_procmap_query();

	if (ret == -EINVAL)
		SKIP(return, "no seccomp filters in this kernel (CONFIG_SECCOMP_FILTER)");
	ASSERT_EQ(0, ret);
	REQUIRE_NO_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	ASSERT_NE(NULL, p);
	after_execve(_metadata, MMEXT_MAPS_AUTO, p);
}

/* clone3()'s arguments, up to set_tid (Linux 5.5): older headers lack the fields. */
struct t_clone_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size;
};

/* A child with pid want in our PID namespace, which runs fn(arg) and exits. */
static pid_t spawn_at(pid_t want, int (*fn)(void *), void *arg)
{
	struct t_clone_args a = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&want,
				  .set_tid_size = 1 };
	pid_t pid = syscall(SYS_clone3, &a, sizeof(a));

	if (!pid)
		_exit(fn(arg));
	return pid;
}

static int first_owner(void *arg)
{
	pause();
	return 0;
}

struct reuse {
	int pfd[2];
	void *at;
};

/* The second holder of the pid: a file mapped at r->at, then a byte on the pipe. */
static int second_owner(void *arg)
{
	struct reuse *r = arg;
	int fd = memfd_create("mmext-reused-pid", 0);
	void *p;

	if (fd < 0 || ftruncate(fd, t_psz()))
		return 1;
	p = mmap(r->at, t_psz(), PROT_READ, MAP_SHARED | MAP_FIXED_NOREPLACE, fd, 0);
	if (p != r->at || write(r->pfd[1], "x", 1) != 1)
		return 2;
	pause();
	return 0;
}

enum { REUSED_PID = 100 };

/*
 * In a new PID namespace, with its own /proc: open a handle on a process, reap it,
 * give its pid to another that maps a file at a hole of ours, then use the handle.
 * Returns 0, 77 when namespaces cannot be had, else the first failed step.
 */
static int reuse_one(uint32_t backend)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = backend);
	struct mmext_maps *m;
	struct mmext_vma v;
	char *hole = t_hole(t_psz()), c;
	struct reuse r = { .at = hole };
	int ret, fails = 0;
	pid_t a, b;

	if (!hole || pipe(r.pfd))
		return 3;
	a = spawn_at(REUSED_PID, first_owner, NULL);
	if (a != REUSED_PID)
		return a < 0 && (errno == EPERM || errno == ENOSYS) ? 77 : 4;
	ret = mmext_maps_open(a, &o, &m);
	if (ret)
		return 5;
	kill(a, SIGKILL);
	if (waitpid(a, NULL, 0) != a)
		return 6;
	b = spawn_at(REUSED_PID, second_owner, &r);
	if (b != REUSED_PID || read(r.pfd[0], &c, 1) != 1)
		return 7;
	ret = mmext_maps_find(m, (uintptr_t)hole, 0, &v);
	if (ret != -ESRCH) {
		fprintf(stderr, "# backend %u: find after reuse: %d (%s)\n", backend, ret,
			ret ? strerror(-ret) : v.name);
		fails |= 8;
	}
	mmext_maps_rewind(m);
	while ((ret = mmext_maps_next(m, &v)) == 1)
		if (v.start == (uintptr_t)hole)
			break;
	if (ret != -ESRCH) {
		fprintf(stderr, "# backend %u: listing after reuse: %d (%s)\n", backend, ret,
			ret == 1 ? v.name : ret ? strerror(-ret) : "a clean end");
		fails |= 16;
	}
	mmext_maps_close(m);
	kill(b, SIGKILL);
	waitpid(b, NULL, 0);
	close(r.pfd[0]);
	close(r.pfd[1]);
	return fails;
}

/* The init of the new namespace: our /proc, then each backend in turn. */
static int reuse_in_namespace(void *arg)
{
	static const uint32_t backends[] = { MMEXT_MAPS_TEXT, MMEXT_MAPS_AUTO, MMEXT_MAPS_IOCTL };
	int have_ioctl = *(int *)arg, ret = 0, r;
	size_t i;

	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return 77;
	for (i = 0; i < 3; i++) {
		if (backends[i] == MMEXT_MAPS_IOCTL && !have_ioctl)
			continue;
		r = reuse_one(backends[i]);
		if (r == 77)
			return r;
		ret |= r;
	}
	return ret;
}

static int reuse_outer(void *arg)
{
	if (unshare(CLONE_NEWPID | CLONE_NEWNS))
		return 77;
	return WEXITSTATUS(t_child_status(reuse_in_namespace, arg));
}

/*
 * Pid 1 of a new pid namespace under the /proc of the one above, as unshare -pf
 * leaves it: its own pid names another process there. A handle on that pid reads
 * this process's maps.
 */
static int own_pid_under_outer_proc(void *arg)
{
	static const uint32_t backends[] = { MMEXT_MAPS_TEXT, MMEXT_MAPS_AUTO, MMEXT_MAPS_IOCTL };
	MMEXT_OPTS(mmext_maps_opts, o);
	size_t psz = t_psz(), i;
	char *p = t_map(3 * psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);
	struct mmext_maps *m;
	struct mmext_vma v;
	int ret;

	(void)arg;
	if (!p || mprotect(p + psz, psz, PROT_READ))
		return 1;
	for (i = 0; i < 3; i++) {
		o.backend = backends[i];
		ret = mmext_maps_open(getpid(), &o, &m);
		if (ret == -EOPNOTSUPP)
			continue;
		if (!ret) {
			ret = mmext_maps_find(m, (uintptr_t)p + psz, 0, &v);
			mmext_maps_close(m);
		}
		if (ret || v.start != (uintptr_t)p + psz || v.end != (uintptr_t)p + 2 * psz) {
			fprintf(stderr, "#      backend %u: %d, %#llx-%#llx\n", backends[i], ret,
				ret ? 0ULL : (unsigned long long)v.start,
				ret ? 0ULL : (unsigned long long)v.end);
			return 2;
		}
	}
	return 0;
}

static int in_new_pid_namespace(void *arg)
{
	int status;

	if (unshare(CLONE_NEWPID))
		return T_NO_STANDIN;
	status = t_child_status(own_pid_under_outer_proc, arg);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

TEST(own_pid_in_a_pid_namespace_without_its_proc)
{
	T_EXPECT_CHILD_OK(t_child_status(in_new_pid_namespace, NULL),
			  "cannot make a pid namespace (needs root)");
}

/*
 * A handle names one process, not a number: once that process is reaped, every
 * call fails with -ESRCH, even when another process has its pid by then.
 */
TEST(reaped_process_pid_reused)
{
	struct mmext_feature_status st;
	int status, have_ioctl;

	if (geteuid() != 0)
		SKIP(return, "needs root for a PID namespace and clone3()'s set_tid");
	ASSERT_EQ(0, mmext_probe(MMEXT_FEAT_PROCMAP_QUERY, &st));
	have_ioctl = st.available;
	status = t_child_status(reuse_outer, &have_ioctl);
	ASSERT_TRUE(WIFEXITED(status)) TH_LOG("status %#x", status);
	if (WEXITSTATUS(status) == 77)
		SKIP(return, "cannot make a PID namespace or choose a pid in it");
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* Text and ioctl listings of the same, quiet process agree field by field. */
TEST(text_and_ioctl_agree)
{
	MMEXT_OPTS(mmext_maps_opts, ot, .backend = MMEXT_MAPS_TEXT);
	MMEXT_OPTS(mmext_maps_opts, oi, .backend = MMEXT_MAPS_IOCTL);
	struct mmext_maps *mt, *mi;
	static struct mmext_vma a[512], b[512];
	static char names[512][256];
	int na = 0, nb = 0, i;

	REQUIRE_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	ASSERT_EQ(0, mmext_maps_open(0, &ot, &mt));
	ASSERT_EQ(0, mmext_maps_open(0, &oi, &mi));
	/* A first pass each: the buffers it allocates can split the allocator's mappings. */
	while (mmext_maps_next(mt, &a[0]) == 1)
		;
	while (mmext_maps_next(mi, &b[0]) == 1)
		;
	mmext_maps_rewind(mt);
	mmext_maps_rewind(mi);
	while (na < 512 && mmext_maps_next(mt, &a[na]) == 1) {
		snprintf(names[na], sizeof(names[na]), "%s", a[na].name);
		na++;
	}
	/* [vsyscall] too: PROCMAP_QUERY cannot see it, the library finds it in the text. */
	while (nb < 512 && mmext_maps_next(mi, &b[nb]) == 1)
		nb++;
	ASSERT_EQ(na, nb);
	for (i = 0; i < na; i++) {
		EXPECT_EQ(a[i].start, b[i].start);
		EXPECT_EQ(a[i].end, b[i].end);
		EXPECT_EQ(a[i].prot, b[i].prot);
		EXPECT_EQ(a[i].offset, b[i].offset);
		EXPECT_EQ(a[i].inode, b[i].inode);
		EXPECT_EQ(a[i].dev_major, b[i].dev_major);
		EXPECT_EQ(a[i].dev_minor, b[i].dev_minor);
		EXPECT_EQ(a[i].kind, b[i].kind);
	}
	/* Names: compare the last one fully (earlier pointers were overwritten). */
	EXPECT_STREQ(names[na - 1], b[nb - 1].name);
	mmext_maps_close(mt);
	mmext_maps_close(mi);
}

/* The i-th memfd name of text_listing_across_reads: 0 to 239 bytes of padding. */
static void long_name(char *buf, size_t size, const char *prefix, int i)
{
	char pad[240];

	memset(pad, 'x', sizeof(pad));
	snprintf(buf, size, "%sn%d %.*s", prefix, i, 37 * i % 240, pad);
}

/*
 * Thousands of lines, some with long names of varied lengths, so that lines are
 * cut at every kind of place by the reader's reads: each VMA still comes out whole.
 */
/* PAGES one-page VMAs and NAMED long names, all listed once and in order. */
static void listing_across_reads(struct __test_metadata *_metadata, uint32_t flags,
				 int PAGES)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_TEXT, .flags = flags);
	enum { NAMED = 40 };
	size_t psz = t_psz();
	char *area, *named[NAMED], name[256];
	struct mmext_maps *m;
	struct mmext_vma v;
	int i, fd, ret, ours = 0, names = 0;

	area = t_map(PAGES * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, area);
	for (i = 1; i < PAGES; i += 2)
		ASSERT_EQ(0, mprotect(area + i * psz, psz, PROT_READ));
	for (i = 0; i < NAMED; i++) {
		/* memfd names: up to 249 bytes, shown as "/memfd:NAME (deleted)". */
		long_name(name, sizeof(name), "", i);
		fd = memfd_create(name, 0);
		ASSERT_GE(fd, 0);
		ASSERT_EQ(0, ftruncate(fd, psz));
		named[i] = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
		close(fd);
		ASSERT_NE(MAP_FAILED, named[i]);
	}
	ASSERT_EQ(0, mmext_maps_open(0, &o, &m));
	while ((ret = mmext_maps_next(m, &v)) == 1) {
		ASSERT_EQ(strlen(v.name), v.name_len);
		if (v.start >= (uintptr_t)area && v.end <= (uintptr_t)area + PAGES * psz) {
			i = (v.start - (uintptr_t)area) / psz;
			EXPECT_EQ(psz, v.end - v.start);
			EXPECT_EQ(i % 2 ? MMEXT_VMA_READ : MMEXT_VMA_READ | MMEXT_VMA_WRITE, v.prot);
			ours++;
		}
		for (i = 0; i < NAMED; i++) {
			if (v.start != (uintptr_t)named[i])
				continue;
			long_name(name, sizeof(name), "/memfd:", i);
			EXPECT_STREQ(name, v.name);
			EXPECT_EQ(MMEXT_VMA_FILE, v.kind);
			EXPECT_EQ(MMEXT_VMA_DELETED, v.flags);
			names++;
		}
	}
	EXPECT_EQ(0, ret);
	EXPECT_EQ(PAGES, ours);
	EXPECT_EQ(NAMED, names);
	mmext_maps_close(m);
	for (i = 0; i < NAMED; i++)
		munmap(named[i], psz);
	munmap(area, PAGES * psz);
}

/*
 * Thousands of VMAs: minutes on a KASAN kernel under TCG on a busy machine, hence the
 * timeouts (the harness's default of 30 s is too short for 3000 VMAs there).
 */
FIXTURE(big) {};
FIXTURE_SETUP(big) {}
FIXTURE_TEARDOWN(big) {}

TEST_F_TIMEOUT(big, text_listing_across_reads, 300)
{
	listing_across_reads(_metadata, 0, 3000);
}

/* Threads of this process, as /proc/self/task lists them. */
static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/*
 * The library starts no thread: MMEXT_MAPS_PREFETCH is accepted and ignored. Text
 * enough (~1.5 MB) to keep a reader of any ring of slots busy while we look.
 */
TEST_F_TIMEOUT(big, prefetch_flag_starts_no_thread, 600)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_TEXT,
		   .flags = MMEXT_MAPS_PREFETCH);
	enum { PAGES = 24000 };
	size_t psz = t_psz();
	struct mmext_maps *m;
	struct mmext_vma v;
	int i, before, ret, n = 1;
	char *area;

	area = t_map(PAGES * psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, area);
	for (i = 1; i < PAGES; i += 2)
		ASSERT_EQ(0, mprotect(area + i * psz, psz, PROT_NONE));
	before = count_threads();
	ASSERT_GT(before, 0);
	ASSERT_EQ(0, mmext_maps_open(0, &o, &m));
	ASSERT_EQ(1, mmext_maps_next(m, &v));
	EXPECT_EQ(before, count_threads());
	while ((ret = mmext_maps_next(m, &v)) == 1)
		n++;
	EXPECT_EQ(0, ret);
	EXPECT_GT(n, PAGES);
	EXPECT_EQ(before, count_threads());
	mmext_maps_close(m);
	munmap(area, PAGES * psz);
}

static int count_vmas(struct mmext_maps *m)
{
	struct mmext_vma v;
	int n = 0, ret;

	while ((ret = mmext_maps_next(m, &v)) == 1)
		n++;
	return ret ? ret : n;
}

TEST_F_TIMEOUT(big, prefetch_rewind_close_and_fork, 600)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_TEXT,
		   .flags = MMEXT_MAPS_PREFETCH);
	enum { PAGES = 24000 };
	struct mmext_maps *m, *plain;
	size_t psz = t_psz();
	struct mmext_vma v;
	int i, n, status;
	pid_t target, pid;
	char *area;

	area = t_map(PAGES * psz, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);
	ASSERT_NE(NULL, area);
	for (i = 1; i < PAGES; i += 2)
		ASSERT_EQ(0, mprotect(area + i * psz, psz, PROT_NONE));
	/* List a child that keeps still. */
	target = fork();
	ASSERT_GE(target, 0);
	if (!target) {
		pause();
		_exit(0);
	}
	plain = open_maps(_metadata, target, MMEXT_MAPS_TEXT, 0);
	ASSERT_NE(NULL, plain);
	n = count_vmas(plain);
	ASSERT_GT(n, PAGES);

	ASSERT_EQ(0, mmext_maps_open(target, &o, &m));
	/* Rewinding mid-listing starts over. */
	for (i = 0; i < 10; i++)
		ASSERT_EQ(1, mmext_maps_next(m, &v));
	mmext_maps_rewind(m);
	EXPECT_EQ(n, count_vmas(m));
	EXPECT_EQ(0, mmext_maps_next(m, &v));
	mmext_maps_rewind(m);
	EXPECT_EQ(n, count_vmas(m));

	/* The handle is ours, not the child's: -ECHILD there, and close must not hang. */
	mmext_maps_rewind(m);
	ASSERT_EQ(1, mmext_maps_next(m, &v));
	pid = fork();
	ASSERT_GE(pid, 0);
	if (!pid) {
		alarm(20);
		if (mmext_maps_next(m, &v) != -ECHILD)
			_exit(1);
		mmext_maps_rewind(m);
		if (mmext_maps_next(m, &v) != -ECHILD)
			_exit(2);
		mmext_maps_close(m);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	/* Closing mid-listing. */
	mmext_maps_close(m);
	mmext_maps_close(plain);
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	munmap(area, PAGES * psz);
}

/* A child made without atfork handlers (_Fork(), raw clone) closes a handle mid-listing. */
TEST(prefetching_handle_closes_in_a_fork_child)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_TEXT,
		   .flags = MMEXT_MAPS_PREFETCH);
	struct mmext_maps *m;
	struct mmext_vma v;
	int status;
	pid_t pid;

	ASSERT_EQ(0, mmext_maps_open(0, &o, &m));
	ASSERT_EQ(1, mmext_maps_next(m, &v));
	pid = _Fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		alarm(10);
		mmext_maps_close(m);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
	mmext_maps_close(m);
}

/* A handle for pid 0 is the opener's maps: in a child it must not describe anyone. */
static int child_uses_own_maps_handle(void *arg)
{
	struct mmext_maps *m = arg;
	struct mmext_vma v;
	char *mine = t_map(t_psz(), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS);

	if (!mine)
		return 9;
	if (mmext_maps_backend(m) != -ECHILD)
		return 1;
	if (mmext_maps_find(m, (uintptr_t)mine, 0, &v) != -ECHILD)
		return 2;
	mmext_maps_rewind(m);
	if (mmext_maps_next(m, &v) != -ECHILD)
		return 3;
	mmext_maps_close(m);
	return 0;
}

TEST(handle_fails_in_a_child)
{
	static const int backends[] = { MMEXT_MAPS_AUTO, MMEXT_MAPS_TEXT, MMEXT_MAPS_IOCTL };
	struct mmext_maps *m;
	struct mmext_vma v;
	size_t i;

	for (i = 0; i < 3; i++) {
		m = open_maps(_metadata, 0, backends[i], 0);
		if (!m)
			continue;	/* IOCTL without PROCMAP_QUERY */
		EXPECT_TRUE(t_in_child(child_uses_own_maps_handle, m)) TH_LOG("backend %d", backends[i]);
		EXPECT_EQ(0, mmext_maps_find(m, (uintptr_t)&v, 0, &v));
		mmext_maps_close(m);
	}
}

/* A maps handle per backend; NULL for IOCTL without PROCMAP_QUERY. */
#define PID1_BACKENDS	3

static int pid1_child_uses_handles(void *arg)
{
	struct mmext_maps **m = arg;
	int i, ret;

	for (i = 0; i < PID1_BACKENDS; i++) {
		ret = m[i] ? child_uses_own_maps_handle(m[i]) : 0;
		if (ret)
			return 10 * (i + 1) + ret;
	}
	return 0;
}

/* The same as pid 1 of a pid namespace, whose child is pid 1 of another: its pid. */
static int pid1_forks_a_pid1_child(void *arg)
{
	static const int backends[] = { MMEXT_MAPS_AUTO, MMEXT_MAPS_TEXT, MMEXT_MAPS_IOCTL };
	struct mmext_maps *m[PID1_BACKENDS] = { NULL };
	struct mmext_vma v;
	int i, ret;

	(void)arg;
	for (i = 0; i < PID1_BACKENDS; i++) {
		MMEXT_OPTS(mmext_maps_opts, o, .backend = backends[i]);

		ret = mmext_maps_open(0, &o, &m[i]);
		if (ret && backends[i] != MMEXT_MAPS_IOCTL)
			return 1;
	}
	ret = t_exit_of(t_as_pid1(pid1_child_uses_handles, m));
	if (ret)
		fprintf(stderr, "#      the pid 1 child's use of the handles: exit %d\n", ret);
	for (i = 0; i < PID1_BACKENDS; i++) {
		if (m[i] && mmext_maps_find(m[i], (uintptr_t)&v, 0, &v))
			ret = 2;
		mmext_maps_close(m[i]);
	}
	return ret;
}

TEST(handle_fails_in_a_child_with_the_same_pid)
{
	T_EXPECT_CHILD_OK(t_as_pid1(pid1_forks_a_pid1_child, NULL),
			  "cannot make a pid namespace (needs CAP_SYS_ADMIN)");
}

/* The GNU build ID of this program, from its own program headers. */
static int own_build_id(struct dl_phdr_info *info, size_t size, void *data)
{
	unsigned char *out = data;
	int i;

	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end;

		if (ph->p_type != PT_NOTE)
			continue;
		for (end = p + ph->p_memsz; p + sizeof(ElfW(Nhdr)) <= end;) {
			const ElfW(Nhdr) *n = (const void *)p;
			const char *desc = p + sizeof(*n) + ((n->n_namesz + 3) & ~3);

			if (n->n_type == NT_GNU_BUILD_ID && n->n_descsz <= 64) {
				out[0] = n->n_descsz;
				memcpy(out + 1, desc, n->n_descsz);
				return 1;
			}
			p = desc + ((n->n_descsz + 3) & ~3);
		}
	}
	return 1;	/* only the first object: the executable */
}

TEST(build_id_of_own_executable)
{
	unsigned char want[65] = { 0 };
	uint32_t backends[] = { MMEXT_MAPS_IOCTL, MMEXT_MAPS_TEXT };
	struct mmext_maps *m;
	struct mmext_vma v;
	unsigned int i;

	REQUIRE_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	dl_iterate_phdr(own_build_id, want);
	if (!want[0])
		SKIP(return, "test binary was linked without a build ID");
	for (i = 0; i < 2; i++) {
		m = open_maps(_metadata, 0, backends[i], MMEXT_MAPS_BUILD_ID);
		ASSERT_NE(NULL, m);
		ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)own_build_id, 0, &v));
		ASSERT_EQ(want[0], v.build_id_len);
		EXPECT_EQ(0, memcmp(want + 1, v.build_id, want[0]));
		mmext_maps_close(m);
	}
}

/*
 * The library writes no more of a struct mmext_vma than the caller says it has, and
 * zeros what the caller's larger struct has beyond the fields it knows.
 */
TEST(vma_size_is_respected)
{
	static const char line[] = "1000-2000 r--p 00000000 08:01 7 /a/b\n";
	struct {
		struct mmext_vma v;
		unsigned char tail[64];
	} big;
	struct mmext_maps *m;
	size_t i;
	int local;

	ASSERT_EQ(0, mmext_maps_open(0, NULL, &m));
	/* The plain calls fill libmmext 0.3's struct, not a byte more. */
	memset(&big, 0xaa, sizeof(big));
	ASSERT_EQ(0, mmext_maps_find(m, (uintptr_t)&local, 0, &big.v));
	for (i = 0; i < sizeof(big.tail); i++)
		ASSERT_EQ(0xaa, big.tail[i]);
	/* A larger struct: the fields past ours are zero. */
	memset(&big, 0xaa, sizeof(big));
	ASSERT_EQ(0, mmext_maps_find_sz(m, (uintptr_t)&local, 0, &big.v, sizeof(big)));
	EXPECT_EQ(MMEXT_VMA_STACK, big.v.kind);
	for (i = 0; i < sizeof(big.tail); i++)
		ASSERT_EQ(0, big.tail[i]);
	memset(&big, 0xaa, sizeof(big));
	ASSERT_EQ(1, mmext_maps_next_sz(m, &big.v, sizeof(big)));
	EXPECT_LT(big.v.start, big.v.end);
	for (i = 0; i < sizeof(big.tail); i++)
		ASSERT_EQ(0, big.tail[i]);
	memset(&big, 0xaa, sizeof(big));
	ASSERT_EQ(0, mmext_maps_parse_line_sz(line, strlen(line), &big.v, sizeof(big)));
	EXPECT_EQ(0x1000, big.v.start);
	for (i = 0; i < sizeof(big.tail); i++)
		ASSERT_EQ(0, big.tail[i]);
	/* Smaller than libmmext 0.3's struct, or beyond any struct: refused, untouched. */
	memset(&big, 0xaa, sizeof(big));
	EXPECT_EQ(-EINVAL, mmext_maps_find_sz(m, (uintptr_t)&local, 0, &big.v,
					      sizeof(big.v) - 1));
	EXPECT_EQ(-EINVAL, mmext_maps_next_sz(m, &big.v, MMEXT_OPTS_MAX + 1));
	EXPECT_EQ(-EINVAL, mmext_maps_parse_line_sz(line, strlen(line), &big.v, 0));
	EXPECT_EQ(0xaaaaaaaaaaaaaaaaULL, big.v.start);
	EXPECT_EQ(-EFAULT, mmext_maps_find_sz(m, 0, 0, NULL, sizeof(big)));
	mmext_maps_close(m);
}

TEST(open_bad_input)
{
	MMEXT_OPTS(mmext_maps_opts, bad_backend, .backend = 7);
	MMEXT_OPTS(mmext_maps_opts, bad_flags, .flags = 0x100);
	T_OPTS_TAIL(mmext_maps_opts) big;
	struct mmext_maps *m = NULL;

	EXPECT_EQ(-EINVAL, mmext_maps_open(-1, NULL, &m));
	EXPECT_EQ(-ESRCH, mmext_maps_open(t_dead_pid(), NULL, &m));
	EXPECT_EQ(-EFAULT, mmext_maps_open(0, NULL, NULL));
	EXPECT_EQ(-EINVAL, mmext_maps_open(0, &bad_backend, &m));
	EXPECT_EQ(-EINVAL, mmext_maps_open(0, &bad_flags, &m));

	memset(&big, 0, sizeof(big));
	big.o.sz = sizeof(big);
	big.tail = 1;
	EXPECT_EQ(-E2BIG, mmext_maps_open(0, &big.o, &m));
	big.tail = 0;
	ASSERT_EQ(0, mmext_maps_open(0, &big.o, &m));
	mmext_maps_close(m);
	big.o.sz = 1;
	EXPECT_EQ(-EINVAL, mmext_maps_open(0, &big.o, &m));
	mmext_maps_close(NULL);
}

TEST(ioctl_forced_without_support)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_IOCTL);
	struct mmext_maps *m = NULL;

	REQUIRE_NO_FEATURE(MMEXT_FEAT_PROCMAP_QUERY);
	EXPECT_EQ(-EOPNOTSUPP, mmext_maps_open(0, &o, &m));
}

/* Reading pid 1's maps as an unprivileged user is refused. */
static int open_init_as_nobody(void *arg)
{
	struct mmext_maps *m;
	int ret;

	if (setgid(65534) || setuid(65534))
		return 2;
	ret = mmext_maps_open(1, NULL, &m);
	return ret == -EACCES || ret == -EPERM ? 0 : 1;
}

TEST(permission_denied)
{
	if (geteuid() != 0)
		SKIP(return, "needs root to switch to an unprivileged user");
	EXPECT_TRUE(t_in_child(open_init_as_nobody, NULL));
}

/* ---- the text parser alone ---- */

TEST(parse_typical_lines)
{
	static const char l1[] = "7f0000001000-7f0000003000 r-xp 0001a000 fd:01 1234567"
				 "                    /usr/lib/libc.so.6\n";
	static const char l2[] = "7ffc1000-7ffc3000 rw-p 00000000 00:00 0 ";
	static const char l3[] = "1000-2000 rw-s 00000000 00:01 42   /memfd:x (deleted)";
	static const char l4[] = "1000-2000 rw-p 00000000 00:00 0  [anon_shmem:a b]";
	static const char l5[] = "1000-2000 ---p 00000000 00:00 0  [stack:123]";
	static const char l6[] = "ffffffffff600000-ffffffffff601000 --xp 00000000 00:00 0"
				 "                  [vsyscall]";
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_maps_parse_line(l1, strlen(l1), &v));
	EXPECT_EQ(0x7f0000001000ULL, v.start);
	EXPECT_EQ(0x7f0000003000ULL, v.end);
	EXPECT_EQ(MMEXT_VMA_READ | MMEXT_VMA_EXEC, v.prot);
	EXPECT_EQ(0x1a000, v.offset);
	EXPECT_EQ(0xfd, v.dev_major);
	EXPECT_EQ(1, v.dev_minor);
	EXPECT_EQ(1234567, v.inode);
	EXPECT_EQ(strlen("/usr/lib/libc.so.6"), v.name_len);
	EXPECT_EQ(0, memcmp(v.name, "/usr/lib/libc.so.6", v.name_len));
	EXPECT_EQ(MMEXT_VMA_FILE, v.kind);

	ASSERT_EQ(0, mmext_maps_parse_line(l2, strlen(l2), &v));
	EXPECT_EQ(0, v.name_len);
	EXPECT_EQ(MMEXT_VMA_ANON, v.kind);

	ASSERT_EQ(0, mmext_maps_parse_line(l3, strlen(l3), &v));
	EXPECT_EQ(MMEXT_VMA_DELETED, v.flags);
	EXPECT_EQ(strlen("/memfd:x"), v.name_len);
	EXPECT_EQ(MMEXT_VMA_SHARED | MMEXT_VMA_READ | MMEXT_VMA_WRITE, v.prot);

	ASSERT_EQ(0, mmext_maps_parse_line(l4, strlen(l4), &v));
	EXPECT_EQ(MMEXT_VMA_ANON_SHMEM_NAMED, v.kind);
	EXPECT_EQ(3, v.anon_name_len);
	EXPECT_EQ(0, memcmp(v.anon_name, "a b", 3));

	ASSERT_EQ(0, mmext_maps_parse_line(l5, strlen(l5), &v));
	EXPECT_EQ(MMEXT_VMA_STACK, v.kind);
	EXPECT_EQ(0, v.prot);

	ASSERT_EQ(0, mmext_maps_parse_line(l6, strlen(l6), &v));
	EXPECT_EQ(MMEXT_VMA_VSYSCALL, v.kind);
	EXPECT_EQ(0xffffffffff601000ULL, v.end);
}

TEST(parse_rejects_malformed_lines)
{
	static const char *const bad[] = {
		"",
		"\n",
		"1000-2000",
		"1000 2000 rw-p 00000000 00:00 0",
		"1000-2000 rw-p 00000000 00:00",
		"1000-2000 rwxq 00000000 00:00 0",
		"1000-2000 rw-p 00000000 0000 0",
		"1000-2000 rw-p 00000000 00:00 0x",
		"1000-2000 rw-p 00000000 00:00 abc",
		"2000-1000 rw-p 00000000 00:00 0",
		"1000-1000 rw-p 00000000 00:00 0",
		"10000000000000000-20000000000000000 rw-p 00000000 00:00 0",
		"1000-2000 rw-p 00000000 100000000:00 0",
		"1000-2000 rw-p 00000000 00:00 99999999999999999999",
		"g000-2000 rw-p 00000000 00:00 0",
		"1000-2000  rw-p 00000000 00:00 0",
	};
	struct mmext_vma v;
	unsigned int i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		EXPECT_EQ(-EINVAL, mmext_maps_parse_line(bad[i], strlen(bad[i]), &v))
			TH_LOG("accepted bad[%u]", i);
	EXPECT_EQ(-EINVAL, mmext_maps_parse_line(NULL, 0, &v));
	EXPECT_EQ(-EINVAL, mmext_maps_parse_line("1000-2000 rw-p 0 0:0 0", 22, NULL));
}

TEST(parse_number_limits)
{
	/* The largest values of each field, uppercase hex, leading zeros past 16 digits. */
	static const char max[] = "FFFFFFFFFFFFFFFe-ffffffffffffffff rw-p FFFFFFFFFFFFFFFF "
				  "ffffffff:FFFFFFFF 18446744073709551615";
	static const char zeros[] = "00000000000000000001000-000000000000000000002000 r--p "
				    "000000000000000000000 0000000000000:00000000000001 007 /x";
	static const char *const over[] = {
		"1000-2000 rw-p 00000000 00:00 18446744073709551616",
		"1000-2000 rw-p 10000000000000000 00:00 0",
		"1000-2000 rw-p 00000000 00:100000000 0",
		"1000-2000 rw-p 00000000 123456789:00 0",
		"1000-10000000000000000 rw-p 00000000 00:00 0",
	};
	struct mmext_vma v;
	unsigned int i;

	ASSERT_EQ(0, mmext_maps_parse_line(max, strlen(max), &v));
	EXPECT_EQ(0xfffffffffffffffeULL, v.start);
	EXPECT_EQ(UINT64_MAX, v.end);
	EXPECT_EQ(UINT64_MAX, v.offset);
	EXPECT_EQ(UINT32_MAX, v.dev_major);
	EXPECT_EQ(UINT32_MAX, v.dev_minor);
	EXPECT_EQ(UINT64_MAX, v.inode);
	EXPECT_EQ(0, v.name_len);

	ASSERT_EQ(0, mmext_maps_parse_line(zeros, strlen(zeros), &v));
	EXPECT_EQ(0x1000, v.start);
	EXPECT_EQ(0x2000, v.end);
	EXPECT_EQ(0, v.offset);
	EXPECT_EQ(1, v.dev_minor);
	EXPECT_EQ(7, v.inode);
	EXPECT_EQ(MMEXT_VMA_FILE, v.kind);

	for (i = 0; i < sizeof(over) / sizeof(over[0]); i++)
		EXPECT_EQ(-EINVAL, mmext_maps_parse_line(over[i], strlen(over[i]), &v))
			TH_LOG("accepted over[%u]", i);
}

TEST(parse_respects_length)
{
	/* Only the first len bytes count: the name is cut there, not at the NUL. */
	static const char l[] = "1000-2000 r--p 00000000 08:01 7 /a/bc";
	struct mmext_vma v;

	ASSERT_EQ(0, mmext_maps_parse_line(l, strlen(l) - 1, &v));
	EXPECT_EQ(4, v.name_len);
	EXPECT_EQ(0, memcmp(v.name, "/a/b", 4));
	EXPECT_EQ(-EINVAL, mmext_maps_parse_line(l, 12, &v));
}

/* The calling process's maps: 0, or which step failed. */
static int list_own_maps(void)
{
	struct mmext_maps *m;
	struct mmext_vma v;
	int n = 0, ret;

	ret = mmext_maps_open(0, NULL, &m);
	if (ret) {
		fprintf(stderr, "#      mmext_maps_open(0): %d\n", ret);
		return 2;
	}
	while ((ret = mmext_maps_next(m, &v)) > 0)
		n++;
	if (!ret && mmext_maps_find(m, (uintptr_t)&n, 0, &v))
		ret = 3;
	mmext_maps_close(m);
	return ret ? 4 : n < 3 ? 5 : 0;
}

/* pthread_exit() in the main thread: the process and its memory live on. */
TEST(own_maps_after_the_main_thread_exits)
{
	int status = t_after_leader_exit(list_own_maps);

	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

/*
 * Linked from the archive, a program's constructors run before any of the library's
 * would: a handle opened there must be the process's own for its whole life. The
 * harness runs each test in a child, so the test runs this program again, listing its
 * tests only, with T_EARLY_MAPS set: the constructor opens a handle and a destructor,
 * in the same process after main(), uses it.
 */
static struct mmext_maps *early_maps;

__attribute__((constructor)) static void open_in_a_constructor(void)
{
	if (getenv("T_EARLY_MAPS") && mmext_maps_open(0, NULL, &early_maps))
		_exit(2);
}

__attribute__((destructor)) static void use_after_main(void)
{
	struct mmext_vma v;
	int ret;

	if (!early_maps)
		return;
	ret = mmext_maps_find(early_maps, (uintptr_t)&early_maps, 0, &v);
	mmext_maps_close(early_maps);
	if (ret)
		_exit(3);
}

TEST(handle_opened_by_a_constructor)
{
	int status;
	pid_t pid = fork();

	ASSERT_LE(0, pid);
	if (!pid) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, STDOUT_FILENO);
		setenv("T_EARLY_MAPS", "1", 1);
		execl("/proc/self/exe", "lib_vma", "-l", (char *)NULL);
		_exit(4);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	/* 2: the open failed, 3: the handle was not the opener's after main(). */
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) TH_LOG("status %#x", status);
}

TEST_HARNESS_MAIN

