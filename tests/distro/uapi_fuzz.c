// SPDX-License-Identifier: GPL-2.0
/*
 * Random calls of the interfaces trinity cannot reach: its system call table,
 * prctl options and ioctl groups are compiled in. refpage_create() (number from
 * the kernel's markers, markers.h), prctl(PR_COW_PTE) (option from the markers
 * too), and the PROCMAP_QUERY and PAGEMAP_SCAN ioctls get arguments of every shape
 * (bad pointers, sizes and flags), while a second thread maps, unmaps, protects,
 * advises and touches a pool of mappings under them, and forked children scribble
 * over their copies.
 * Oracle: after each child, the parent's canary mappings (anonymous and, where
 * refpage_create() exists, a reference-page mapping) still hold their pattern;
 * the kernel's own oracles (splats, hangs) are the guest runner's.
 *
 *   uapi_fuzz [-t SECONDS] [-r RANDOM_STATE]
 * Exit 0 when the time is up with the canaries intact, 1 otherwise.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>

#include "markers.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif
#define PG	4096UL
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define POOL	32
#define CANARY_PAGES 64

static __thread uint64_t rng;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}
#define pick(n) (rnd() % (n))

static long refpage_nr = -1, cow_pte_opt = -1;
static volatile int stop;
/* Calls made, and calls the kernel accepted: the arguments reach past the checks. */
static unsigned long counts[8], accepted[8];
enum { C_REFPAGE, C_PRCTL, C_QUERY, C_SCAN, C_MUTATE, C_FORK, C_FAULT };

/* The pool: mappings the mutator changes under the queries (racy on purpose). */
static struct { void *addr; size_t len; } pool[POOL];

/*
 * LEN bytes that end where an inaccessible page begins, so that the kernel's writes
 * past a buffer (the sizes given are random) fault instead of overwriting our data.
 */
static void *guarded(size_t len)
{
	char *p = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("uapi_fuzz: mmap");
		exit(2);
	}
	mprotect(p + PG, PG, PROT_NONE);
	return p + PG - len;
}

/* An address to hand the kernel: valid, unaligned, unmapped, kernel, NULL, random. */
static void *any_ptr(void *valid, size_t len)
{
	static __thread char *scratch;

	if (!scratch)
		scratch = guarded(PG);
	/* Mostly valid: a call must get past its first check to reach anything deeper. */
	switch (pick(16)) {
	case 0: return NULL;
	case 1: return (void *)0xffff888000000000UL;
	case 2: return scratch + pick(PG);
	case 3: return pool[pick(POOL)].addr;
	case 4: return (void *)(uintptr_t)rnd();
	default: return valid;
	}
}

static uint64_t any_size(uint64_t real)
{
	switch (pick(16)) {
	case 0: return 0;
	case 1: return real - 8;
	case 2: return real + 8 * pick(4);
	case 3: return rnd();
	default: return real;
	}
}

static void fuzz_refpage(void)
{
	static char *content;
	int fd;

	if (refpage_nr < 0)
		return;
	if (!content) {
		content = mmap(NULL, 2 * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		memset(content, 0x5a, 2 * PG);
	}
	fd = syscall(refpage_nr, pick(4) ? content : any_ptr(content, 2 * PG),
		     pick(4) ? (unsigned int)pick(2) : (unsigned int)rnd());
	counts[C_REFPAGE]++;
	if (fd < 0)
		return;
	accepted[C_REFPAGE]++;
	if (pick(2)) {
		size_t len = (1 + pick(64)) * PG;
		int prot = pick(8), flags = pick(8) ? MAP_PRIVATE : MAP_SHARED;
		void *p = mmap(NULL, len, prot, flags | (pick(8) ? 0 : MAP_POPULATE), fd,
			       pick(8) ? 0 : (off_t)(pick(4) * PG));

		if (p != MAP_FAILED) {
			int i = pick(POOL);

			/* Handed to the pool: the mutator touches, remaps and frees it. */
			if (pool[i].addr)
				munmap(pool[i].addr, pool[i].len);
			pool[i].addr = p;
			pool[i].len = len;
		}
	}
	close(fd);
}

static void fuzz_prctl(void)
{
	unsigned long a2 = pick(4) ? pick(3) : rnd();

	if (cow_pte_opt < 0)
		return;
	if (prctl(cow_pte_opt, a2, pick(4) ? 0 : rnd(), pick(4) ? 0 : rnd(), pick(4) ? 0 : rnd()) >= 0)
		accepted[C_PRCTL]++;
	counts[C_PRCTL]++;
}

static void fuzz_query(int fd)
{
	static __thread char *name, *build_id;
	struct procmap_query q;

	if (!name) {
		name = guarded(256);
		build_id = guarded(64);
	}

	memset(&q, 0, sizeof(q));
	q.size = any_size(sizeof(q));
	q.query_flags = pick(8) ? pick(0x40) : rnd();
	q.query_addr = pick(4) ? (uintptr_t)any_ptr(&q, sizeof(q)) : rnd();
	q.vma_name_size = pick(3) ? 256 : (uint32_t)any_size(256);
	q.vma_name_addr = pick(3) ? (uintptr_t)name : (uintptr_t)any_ptr(name, 256);
	q.build_id_size = pick(3) ? 64 : (uint32_t)any_size(64);
	q.build_id_addr = pick(3) ? (uintptr_t)build_id : (uintptr_t)any_ptr(build_id, 64);
	if (ioctl(fd, PROCMAP_QUERY, pick(16) ? (void *)&q : any_ptr(&q, sizeof(q))) == 0)
		accepted[C_QUERY]++;
	counts[C_QUERY]++;
}

static void fuzz_scan(int fd)
{
	static __thread struct page_region *vec;
	struct pm_scan_arg a;
	uint64_t walk_end, base = (uintptr_t)pool[pick(POOL)].addr;

	if (!vec)
		vec = guarded(64 * sizeof(*vec));
	memset(&a, 0, sizeof(a));
	a.size = any_size(sizeof(a));
	a.flags = pick(3) ? pick(4) : rnd();
	a.start = pick(4) ? base + pick(8) * PG : rnd();
	a.end = pick(4) ? a.start + pick(2048) * PG : rnd();
	if (!pick(16))
		a.start += pick(PG);	/* unaligned */
	a.walk_end = pick(4) ? (uintptr_t)&walk_end : (uintptr_t)any_ptr(&walk_end, 8);
	a.vec = pick(4) ? (uintptr_t)vec : (uintptr_t)any_ptr(vec, 64 * sizeof(*vec));
	a.vec_len = pick(4) ? 1 + pick(64) : rnd();
	a.max_pages = pick(2) ? 0 : pick(4) ? pick(1024) : rnd();
	a.category_inverted = pick(2) ? 0 : rnd() & (pick(4) ? 0xff : ~0UL);
	a.category_mask = pick(2) ? 0 : rnd() & (pick(4) ? 0xff : ~0UL);
	a.category_anyof_mask = pick(2) ? 0 : rnd() & (pick(4) ? 0xff : ~0UL);
	a.return_mask = pick(4) ? rnd() & 0xff : rnd();
	if (ioctl(fd, PAGEMAP_SCAN, &a) >= 0)
		accepted[C_SCAN]++;
	counts[C_SCAN]++;
}

static sigjmp_buf fault_jmp;
static __thread int in_touch;
static void on_fault(int sig)
{
	if (in_touch)
		siglongjmp(fault_jmp, 1);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* Change the pool: the address-space churn the queries and forks run against. */
static void mutate(int uffd)
{
	int i = pick(POOL);
	void *p = pool[i].addr;
	size_t len = pool[i].len, off, sub;
	static const int advice[] = { MADV_DONTNEED, MADV_COLD, MADV_PAGEOUT, MADV_HUGEPAGE,
		MADV_NOHUGEPAGE, MADV_WILLNEED, MADV_FREE, MADV_WIPEONFORK, MADV_KEEPONFORK,
		MADV_DONTFORK, MADV_DOFORK, MADV_COLLAPSE, MADV_POPULATE_READ,
		MADV_POPULATE_WRITE, MADV_MERGEABLE, MADV_UNMERGEABLE };

	counts[C_MUTATE]++;
	if (!p) {
		len = (1 + pick(1024)) * PG;
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		pool[i].addr = p;
		pool[i].len = len;
		return;
	}
	/* A page range inside the mapping: neighbours (libc, stacks, canaries) stay alone. */
	off = pick(len / PG) * PG;
	sub = (1 + pick((len - off) / PG)) * PG;
	switch (pick(8)) {
	case 0:
		pool[i].addr = NULL;
		munmap(p, len);
		break;
	case 1:
		mprotect((char *)p + off, sub, pick(8));
		break;
	case 2:
		madvise((char *)p + off, sub, advice[pick(ARRAY_SIZE(advice))]);
		break;
	case 3: {
		size_t nlen = (1 + pick(1024)) * PG;
		void *q = mremap(p, len, nlen, MREMAP_MAYMOVE);

		if (q != MAP_FAILED) {
			pool[i].addr = q;
			pool[i].len = nlen;
		}
		break;
	}
	case 4:
		if (uffd >= 0) {
			struct uffdio_register r = {
				.range = { (uintptr_t)p, len }, .mode = UFFDIO_REGISTER_MODE_WP,
			};
			ioctl(uffd, UFFDIO_REGISTER, &r);
		}
		break;
	default: {
		/* Touch: reads and writes of whatever protection the pages have now. */
		volatile char *c = p;
		size_t n = 1 + pick(64), k;

		in_touch = 1;
		if (!sigsetjmp(fault_jmp, 1)) {
			for (k = 0; k < n; k++) {
				size_t off = pick(len / PG) * PG;

				if (pick(2))
					c[off] = (char)rnd();
				else
					(void)c[off];
			}
		} else {
			counts[C_FAULT]++;
		}
		in_touch = 0;
		break;
	}
	}
}

static void *query_thread(void *arg)
{
	int maps = open("/proc/self/maps", O_RDONLY), pm = open("/proc/self/pagemap", O_RDONLY);

	rng = (uintptr_t)arg | 1;
	while (!stop) {
		if (pick(2))
			fuzz_query(maps);
		else
			fuzz_scan(pm);
	}
	close(maps);
	close(pm);
	return NULL;
}

static void fill(char *p, size_t len, char v)
{
	memset(p, v, len);
}

static int check(const char *what, const char *p, size_t len, char v)
{
	for (size_t k = 0; k < len; k++) {
		if (p[k] != v) {
			fprintf(stderr, "uapi_fuzz: %s changed at +%zu: 0x%02x, not 0x%02x\n",
				what, k, (unsigned char)p[k], (unsigned char)v);
			return 1;
		}
	}
	return 0;
}

/* A child scribbles over everything it inherited, then exits; the parent checks. */
static void child_scribble(char *canary, char *refmap)
{
	rng = rng * 31 + getpid();
	memset(canary, 0xee, CANARY_PAGES * PG);
	if (refmap)
		memset(refmap, 0xdd, CANARY_PAGES * PG);
	for (int n = 0; n < 64; n++)
		mutate(-1);
	_exit(0);
}

int main(int argc, char **argv)
{
	int seconds = 60, uffd, o, bad = 0;
	uint64_t start = (uint64_t)time(NULL) * 2654435761UL ^ getpid();
	char *canary, *refmap = NULL;
	struct uffdio_api api = { .api = UFFD_API };
	pthread_t th;
	time_t end;

	while ((o = getopt(argc, argv, "t:r:")) != -1) {
		switch (o) {
		case 't':
			seconds = atoi(optarg);
			break;
		case 'r':
			start = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: uapi_fuzz [-t SECONDS] [-r RANDOM_STATE]\n");
			return 2;
		}
	}
	rng = start | 1;
	printf("uapi_fuzz: -t %d -r 0x%llx\n", seconds, (unsigned long long)start);
	/* The 6.12 backport's published number, or the mainline series' one. */
	refpage_nr = t_refpage_nr();
	printf("uapi_fuzz: refpage_create %s\n", refpage_nr < 0 ? "absent" : "present");
	cow_pte_opt = t_cow_pte_opt();
	printf("uapi_fuzz: PR_COW_PTE %s\n", cow_pte_opt < 0 ? "absent" : "present");
	signal(SIGSEGV, on_fault);
	signal(SIGBUS, on_fault);

	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	api.features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED;
	if (uffd >= 0 && ioctl(uffd, UFFDIO_API, &api)) {
		close(uffd);
		uffd = -1;
	}

	canary = mmap(NULL, CANARY_PAGES * PG, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	fill(canary, CANARY_PAGES * PG, 0x11);
	if (refpage_nr >= 0) {
		char *content = mmap(NULL, PG, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		int fd;

		fill(content, PG, 0x22);
		fd = syscall(refpage_nr, content, 0);
		if (fd >= 0) {
			refmap = mmap(NULL, CANARY_PAGES * PG, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
			if (refmap == MAP_FAILED)
				refmap = NULL;
			close(fd);
		}
		/* Half the pages stay the reference page, half become private copies. */
		if (refmap)
			fill(refmap, CANARY_PAGES * PG / 2, 0x22);
	}

	pthread_create(&th, NULL, query_thread, (void *)(uintptr_t)rnd());
	end = time(NULL) + seconds;
	while (time(NULL) < end && !bad) {
		switch (pick(8)) {
		case 0:
			fuzz_refpage();
			break;
		case 1:
			fuzz_prctl();
			break;
		case 2: {
			pid_t pid = fork();
			int st;

			counts[C_FORK]++;
			if (pid == 0)
				child_scribble(canary, refmap);
			if (pid > 0)
				waitpid(pid, &st, 0);
			bad |= check("anonymous canary", canary, CANARY_PAGES * PG, 0x11);
			if (refmap)
				bad |= check("reference-page canary", refmap, CANARY_PAGES * PG, 0x22);
			break;
		}
		default:
			mutate(uffd);
			break;
		}
	}
	stop = 1;
	pthread_join(th, NULL);
	printf("uapi_fuzz: calls (accepted): refpage_create %lu (%lu), prctl %lu (%lu), "
	       "PROCMAP_QUERY %lu (%lu), PAGEMAP_SCAN %lu (%lu); %lu pool changes (%lu faults), "
	       "%lu forks\n", counts[C_REFPAGE], accepted[C_REFPAGE], counts[C_PRCTL],
	       accepted[C_PRCTL], counts[C_QUERY], accepted[C_QUERY], counts[C_SCAN],
	       accepted[C_SCAN], counts[C_MUTATE], counts[C_FAULT], counts[C_FORK]);
	printf("uapi_fuzz: %s\n", bad ? "FAIL" : "ok");
	return bad;
}
