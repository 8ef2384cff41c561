// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD allocator shim: pattern-initialise the large blocks of an unmodified
 * program, the way a hardening allocator does, by one of four methods.
 *
 *   MMEXT_SHIM=anon      large blocks are fresh anonymous mappings (no pattern)
 *   MMEXT_SHIM=memset    ... filled with the pattern byte by memset()
 *   MMEXT_SHIM=refpage   ... libmmext pattern memory, kernel backend: private
 *                        mappings of the one reference page libmmext keeps for the pattern
 *   MMEXT_SHIM=emulated  ... libmmext pattern memory, memfd emulation
 *   MMEXT_SHIM_MIN=N     what counts as large (bytes; default 131072, glibc's initial
 *                        mmap threshold)
 *   MMEXT_SHIM_STATS=F   append "blocks=... bytes=... fallbacks=..." to file F at exit
 *
 * malloc() and realloc() of at least MMEXT_SHIM_MIN bytes get a mapping of their own by
 * the method; calloc() always gets plain anonymous memory, which is zero as calloc()
 * must be. Everything smaller goes to glibc's allocator, and so do the aligned variants
 * (their pointers are glibc's and free() hands them back to it). The pattern byte is
 * 0xa5. A method the kernel lacks aborts the program: a benchmark must not quietly
 * measure another method.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmext.h>

#define PATTERN		0xa5
#define TABLE_SIZE	(1UL << 14)	/* live large blocks; more fall back to glibc */

/* glibc's allocator under its exported internal names. */
extern void *__libc_malloc(size_t n);
extern void *__libc_calloc(size_t n, size_t m);
extern void *__libc_realloc(void *p, size_t n);
extern void __libc_free(void *p);

enum { M_ANON, M_MEMSET, M_REFPAGE, M_EMULATED };

struct block {
	uintptr_t addr;			/* 0: free slot */
	size_t size;			/* requested bytes */
	struct mmext_pattern *pat;	/* refpage, emulated: the libmmext handle */
};

static struct block *table;
static int lock, method = -1;
static size_t min_size = 128 << 10, psz;
static unsigned long n_blocks, n_bytes, n_fallbacks;
static size_t (*libc_usable_size)(void *p);

static void die(const char *msg)
{
	static const char pre[] = "pattern_shim: ";

	if (write(2, pre, sizeof(pre) - 1) < 0 || write(2, msg, strlen(msg)) < 0)
		_exit(127);
	abort();
}

static void lock_table(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void unlock_table(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static size_t slot_of(uintptr_t a)
{
	return ((a >> 12) * 0x9e3779b97f4a7c15ULL >> 40) & (TABLE_SIZE - 1);
}

/* Under the lock. NULL when the table is full. */
static struct block *table_add(uintptr_t a)
{
	size_t i = slot_of(a), n;

	for (n = 0; n < TABLE_SIZE; n++, i = (i + 1) & (TABLE_SIZE - 1))
		if (!table[i].addr)
			return &table[i];
	return NULL;
}

/* Under the lock. */
static struct block *table_find(uintptr_t a)
{
	size_t i = slot_of(a), n;

	for (n = 0; n < TABLE_SIZE && table[i].addr; n++, i = (i + 1) & (TABLE_SIZE - 1))
		if (table[i].addr == a)
			return &table[i];
	return NULL;
}

/* Under the lock: linear probing's deletion, moving later entries of the run back. */
static void table_del(struct block *b)
{
	size_t i = b - table, j = i, k;

	table[i].addr = 0;
	for (;;) {
		j = (j + 1) & (TABLE_SIZE - 1);
		if (!table[j].addr)
			return;
		k = slot_of(table[j].addr);
		/* Entry j may fill hole i unless its home slot lies cyclically in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		table[i] = table[j];
		table[j].addr = 0;
		i = j;
	}
}

__attribute__((constructor)) static void shim_init(void)
{
	static const char *const names[] = { "anon", "memset", "refpage", "emulated" };
	struct mmext_feature_status st;
	const char *m = getenv("MMEXT_SHIM"), *s = getenv("MMEXT_SHIM_MIN");
	int i;

	psz = sysconf(_SC_PAGESIZE);
	libc_usable_size = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
	if (!m)
		die("MMEXT_SHIM is not set (anon, memset, refpage or emulated)\n");
	for (i = 0; i < 4; i++)
		if (!strcmp(m, names[i]))
			method = i;
	if (method < 0)
		die("MMEXT_SHIM must be anon, memset, refpage or emulated\n");
	if (s && (min_size = strtoul(s, NULL, 0)) < psz)
		die("MMEXT_SHIM_MIN must be at least a page\n");
	table = mmap(NULL, TABLE_SIZE * sizeof(*table), PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (table == MAP_FAILED || !libc_usable_size)
		die("cannot set up\n");
	if (method == M_REFPAGE && (mmext_probe(MMEXT_FEAT_REFPAGE, &st) || !st.available))
		die("MMEXT_SHIM=refpage: this kernel has no reference pages\n");
}

__attribute__((destructor)) static void shim_stats(void)
{
	const char *path = getenv("MMEXT_SHIM_STATS");
	char line[160];
	int fd, n;

	if (!path)
		return;
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	n = snprintf(line, sizeof(line), "blocks=%lu bytes=%lu fallbacks=%lu\n", n_blocks,
		     n_bytes, n_fallbacks);
	if (write(fd, line, n) < 0)
		n = 0;
	close(fd);
}

/* A large block by the method (zero: plain anonymous memory), or NULL. */
static void *large_alloc(size_t n, int zero)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = method == M_REFPAGE ? MMEXT_PATTERN_KERNEL :
						  MMEXT_PATTERN_EMULATED);
	static const unsigned char pattern = PATTERN;
	size_t len = (n + psz - 1) & ~(psz - 1);
	int how = zero ? M_ANON : method;
	struct mmext_pattern *pat = NULL;
	struct block *b;
	void *p;

	if (n > SIZE_MAX - psz) {
		errno = ENOMEM;
		return NULL;
	}
	if (how == M_EMULATED || how == M_REFPAGE) {
		int ret = mmext_pattern_map(&pattern, 1, len, &o, &pat);

		if (ret) {
			errno = -ret;
			return NULL;
		}
		p = mmext_pattern_addr(pat);
	} else {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return NULL;
		if (how == M_MEMSET)
			memset(p, PATTERN, n);
	}
	lock_table();
	b = table_add((uintptr_t)p);
	if (b) {
		b->addr = (uintptr_t)p;
		b->size = n;
		b->pat = pat;
		n_blocks++;
		n_bytes += n;
	} else {
		n_fallbacks++;
	}
	unlock_table();
	if (!b) {
		if (pat)
			mmext_pattern_unmap(pat);
		else
			munmap(p, len);
		return zero ? __libc_calloc(1, n) : __libc_malloc(n);
	}
	return p;
}

/* Take p out of the table if it is ours: its size, or 0 for glibc's pointers. */
static size_t large_take(void *p, struct mmext_pattern **pat)
{
	struct block *b;
	size_t n = 0;

	lock_table();
	b = table_find((uintptr_t)p);
	if (b) {
		n = b->size;
		*pat = b->pat;
		table_del(b);
	}
	unlock_table();
	return n;
}

static void large_unmap(void *p, size_t n, struct mmext_pattern *pat)
{
	if (pat)
		mmext_pattern_unmap(pat);
	else
		munmap(p, (n + psz - 1) & ~(psz - 1));
}

static size_t large_size(void *p)
{
	struct block *b;
	size_t n;

	lock_table();
	b = table_find((uintptr_t)p);
	n = b ? b->size : 0;
	unlock_table();
	return n;
}

void *malloc(size_t n)
{
	return n >= min_size && table ? large_alloc(n, 0) : __libc_malloc(n);
}

void *calloc(size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	return n * m >= min_size && table ? large_alloc(n * m, 1) : __libc_calloc(n, m);
}

void free(void *p)
{
	struct mmext_pattern *pat = NULL;
	size_t n;

	if (!p)
		return;
	n = table ? large_take(p, &pat) : 0;
	if (n)
		large_unmap(p, n, pat);
	else
		__libc_free(p);
}

void *realloc(void *p, size_t n)
{
	size_t old = p && table ? large_size(p) : 0;
	void *q;

	if (!p)
		return malloc(n);
	if (!n) {
		free(p);
		return NULL;
	}
	if (!table || (!old && n < min_size))
		return __libc_realloc(p, n);
	if (!old)
		old = libc_usable_size(p);
	q = malloc(n);
	if (!q)
		return NULL;
	memcpy(q, p, old < n ? old : n);
	free(p);
	return q;
}

void *reallocarray(void *p, size_t n, size_t m)
{
	if (m && n > SIZE_MAX / m) {
		errno = ENOMEM;
		return NULL;
	}
	return realloc(p, n * m);
}

size_t malloc_usable_size(void *p)
{
	size_t n = p && table ? large_size(p) : 0;

	return n || !libc_usable_size ? n : libc_usable_size(p);
}
