// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Pattern memory: a backend table, reference pages first, then the memfd-tile emulation. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <mmext/uapi.h>

#include "internal.h"

#define DEFAULT_TILE_PAGES 512

/*
 * Which file backs the pattern, and at what offset: how a VMA in the range is told
 * from memory mapped there after part of the range was unmapped or moved away.
 */
struct pattern_id {
	uint64_t dev, ino;
	size_t tile;		/* EMULATED: bytes per tile, the memfd's size; 0 for KERNEL */
};

struct mmext_pattern {
	void *addr;
	size_t len;
	int backend;
	unsigned long owner;	/* mmext__process_gen() of the process that mapped it */
	struct pattern_id id;
};

struct pattern_req {
	const void *pattern;
	size_t pattern_len;
	size_t len;		/* page-rounded */
	int prot;
	size_t tile_pages;
	uint32_t flags;		/* MMEXT_PATTERN_NOCACHE */
};

struct pattern_backend {
	int id;
	bool exec;	/* can map PROT_EXEC */
	int (*map)(const struct pattern_req *r, void **addr, struct pattern_id *id);
};

static int id_of(int fd, size_t tile, struct pattern_id *id)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	id->dev = st.st_dev;
	id->ino = st.st_ino;
	id->tile = tile;
	return 0;
}

/*
 * A new reference page of the pattern: an O_CLOEXEC fd, or -errno. -EOPNOTSUPP also
 * when a seccomp filter answers ENOSYS; its EPERM or EACCES is passed on.
 */
static int refpage_new(const struct pattern_req *r)
{
	size_t psz = mmext__page_size(), i;
	char *page;
	long nr;
	int fd, ret;

	/*
	 * Only a number the kernel's marker vouches for (mmext__refpage_nr()): elsewhere
	 * it may be another call.
	 */
	ret = mmext__need(MMEXT_FEAT_REFPAGE);
	if (!ret) {
		const char *detail;

		ret = mmext__refpage_nr(&nr, &detail);
	}
	if (ret)
		return ret == -ENOENT || ret == -EINVAL || ret == -ENOSYS ? -EOPNOTSUPP : ret;
	/* Heap, not a mapping of its own: no munmap() and TLB flush per call. */
	ret = posix_memalign((void **)&page, psz, psz);
	if (ret)
		return -ret;
	for (i = 0; i < psz; i += r->pattern_len)
		memcpy(page + i, r->pattern, r->pattern_len);
	fd = syscall(nr, page, REFPAGE_CLOEXEC);
	ret = fd >= 0 ? fd : errno == ENOSYS ? -EOPNOTSUPP : -errno;
	free(page);
	return ret;
}

/*
 * The fds of recently used patterns, so that an allocator mapping many blocks with
 * one pattern pays one mmap() per block. Each slot pins its page until evicted.
 */
#define REFPAGE_SLOTS 8

struct refpage_slot {
	void *pattern;		/* a copy of the key; NULL for a free slot */
	size_t pattern_len;
	int fd;
	struct pattern_id id;	/* of fd: one fstat() per page, not per mapping */
	unsigned int users;	/* mmap()s in progress: the fd must stay open */
	unsigned long used;	/* cache.clock at the last lookup, for LRU eviction */
};

static struct {
	int lock;		/* mmext__lock() */
	unsigned long gen;	/* mmext__process_gen() of the process the users are of */
	unsigned long clock;
	struct refpage_slot slot[REFPAGE_SLOTS];
} cache;

/*
 * Take the lock, and make the cache this process's: a fork() child keeps the fds it
 * inherited, but not the counts of its parent's threads, which are not here. Told by
 * the process's number, not its pid: a child can have an ancestor's pid. A lock
 * taken over from such a thread may guard half-changed slots: the child leaves their
 * fds and keys alone, to exec or exit.
 */
static void cache_lock(void)
{
	unsigned long me = mmext__process_gen();
	size_t i;

	if (mmext__lock(&cache.lock))
		memset(cache.slot, 0, sizeof(cache.slot));
	if (cache.gen != me) {
		for (i = 0; i < REFPAGE_SLOTS; i++)
			__atomic_store_n(&cache.slot[i].users, 0, __ATOMIC_RELAXED);
		cache.gen = me;
	}
}

/* Under the lock, users == 0. Mappings of the fd keep the page; the cache lets go. */
static void cache_drop(struct refpage_slot *s)
{
	close(s->fd);
	free(s->pattern);
	s->pattern = NULL;
}

/*
 * The cached fd of r's pattern, or a new one put in the LRU idle slot. *slot is the
 * slot to release with cache_put(), NULL for an fd the caller must close (no idle
 * slot, or no memory for the key).
 */
static int cache_get(const struct pattern_req *r, struct refpage_slot **slot)
{
	struct refpage_slot *s, *victim = NULL;
	struct pattern_id id;
	void *key;
	size_t i;
	int fd;

	cache_lock();
	cache.clock++;
	for (i = 0; i < REFPAGE_SLOTS; i++) {
		s = &cache.slot[i];
		if (s->pattern && s->pattern_len == r->pattern_len &&
		    !memcmp(s->pattern, r->pattern, r->pattern_len))
			goto hit;
		if (!__atomic_load_n(&s->users, __ATOMIC_ACQUIRE) &&
		    (!victim || !s->pattern || (victim->pattern && s->used < victim->used)))
			victim = s;
	}
	/* Created under the lock: threads that miss together share one page. */
	fd = refpage_new(r);
	key = fd >= 0 && victim && !id_of(fd, 0, &id) ? malloc(r->pattern_len) : NULL;
	if (!key) {
		mmext__unlock(&cache.lock);
		*slot = NULL;
		return fd;
	}
	s = victim;
	if (s->pattern)
		cache_drop(s);
	memcpy(key, r->pattern, r->pattern_len);
	s->pattern = key;
	s->pattern_len = r->pattern_len;
	s->fd = fd;
	s->id = id;
hit:
	s->used = cache.clock;
	__atomic_add_fetch(&s->users, 1, __ATOMIC_RELAXED);
	fd = s->fd;
	mmext__unlock(&cache.lock);
	*slot = s;
	return fd;
}

static void cache_put(struct refpage_slot *s)
{
	/* No lock: eviction (under it) only needs to see the count reach zero. */
	__atomic_sub_fetch(&s->users, 1, __ATOMIC_RELEASE);
}

/* The pattern's reference page (cached unless NOCACHE), mapped privately. */
static int kernel_map(const struct pattern_req *r, void **addr, struct pattern_id *id)
{
	struct refpage_slot *s = NULL;
	void *p;
	int fd, ret;

	fd = r->flags & MMEXT_PATTERN_NOCACHE ? refpage_new(r) : cache_get(r, &s);
	if (fd < 0)
		return fd;
	/* The mapping holds the reference page for as long as it lives. */
	if (s)
		*id = s->id;
	ret = s ? 0 : id_of(fd, 0, id);
	p = ret ? MAP_FAILED : mmap(NULL, r->len, r->prot, MAP_PRIVATE, fd, 0);
	if (!ret && p == MAP_FAILED)
		ret = -errno;
	if (s)
		cache_put(s);
	else
		close(fd);
	if (!ret)
		*addr = p;
	return ret;
}

#define FILL_IOV	64	/* pages per pwritev() */

/*
 * Write bytes (whole pages) of page, a page of the pattern, to fd from offset 0: 0 or
 * -errno. Written, not stored through a shared mapping: a page the memfd cannot have
 * (the commit limit under vm.overcommit_memory=2, a full tmpfs) is then an error
 * here, where a store would raise SIGBUS. Out of room is -ENOMEM: the memfd is memory.
 */
static int fill_pages(int fd, const char *page, size_t bytes)
{
	size_t psz = mmext__page_size(), off = 0, done, n;
	struct iovec iov[FILL_IOV];
	ssize_t w;

	while (off < bytes) {
		/* Only the first entry can start mid-page, after a short write. */
		for (n = 0, done = 0; n < FILL_IOV && off + done < bytes; n++) {
			iov[n].iov_base = (char *)page + (off + done) % psz;
			iov[n].iov_len = psz - (off + done) % psz;
			done += iov[n].iov_len;
		}
		w = pwritev(fd, iov, (int)n, (off_t)off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return !w || errno == ENOSPC ? -ENOMEM : -errno;
		off += w;
	}
	return 0;
}

/*
 * A sealed memfd of tile_bytes of pattern. Not cancelled at pwritev(), a cancellation
 * point, which would leave the memfd and the page behind.
 */
static int pattern_memfd(const struct pattern_req *r, size_t tile_bytes)
{
	size_t psz = mmext__page_size(), i;
	int fd, ret, cancel;
	char *page;

	page = malloc(psz);
	if (!page)
		return -ENOMEM;
	for (i = 0; i < psz; i += r->pattern_len)
		memcpy(page + i, r->pattern, r->pattern_len);
	cancel = mmext__cancel_off();
	fd = memfd_create("mmext-pattern", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	ret = fd < 0 ? -errno : fill_pages(fd, page, tile_bytes);
	/* Nobody may change the pattern under the clean pages that share it. */
	if (!ret && fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW |
			  F_SEAL_SEAL))
		ret = -errno;
	if (ret && fd >= 0)
		close(fd);
	mmext__cancel_restore(cancel);
	free(page);
	return ret ? ret : fd;
}

static int emulated_map(const struct pattern_req *r, void **addr, struct pattern_id *id)
{
	size_t psz = mmext__page_size(), tile = r->tile_pages * psz, off, n;
	struct rlimit rl;
	char *base;
	int fd, ret = 0;

	if (tile > r->len)
		tile = r->len;
	/* A memfd grown past RLIMIT_FSIZE raises SIGXFSZ, which kills by default. */
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur < tile) {
		tile = rl.rlim_cur & ~(rlim_t)(psz - 1);
		if (!tile)
			return -EFBIG;
	}
	fd = pattern_memfd(r, tile);
	if (fd < 0)
		return fd;
	ret = id_of(fd, tile, id);
	if (ret)
		goto out;
	/* Reserve the whole range first so the tiles land contiguously. */
	base = mmap(NULL, r->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	for (off = 0; off < r->len; off += n) {
		n = r->len - off < tile ? r->len - off : tile;
		/* Clean pages share the memfd's: no commit charge for the whole length. */
		if (mmap(base + off, n, r->prot, MAP_PRIVATE | MAP_FIXED | MAP_NORESERVE, fd,
			 0) == MAP_FAILED) {
			/* ENOMEM here is usually vm.max_map_count. */
			ret = -errno;
			munmap(base, r->len);
			goto out;
		}
	}
	*addr = base;
out:
	close(fd);
	return ret;
}

/* Reference pages are never executable: the kernel refuses PROT_EXEC (EPERM). */
static const struct pattern_backend backends[] = {
	{ MMEXT_PATTERN_KERNEL, false, kernel_map },
	{ MMEXT_PATTERN_EMULATED, true, emulated_map },
};

/*
 * Whether AUTO may try the next backend after this failure: the backend is absent,
 * or a seccomp filter or LSM refused it. Anything else (EMFILE, ENOMEM) would fail
 * the next backend too, or is the caller's to see.
 */
static bool try_next(int ret)
{
	return ret == -EOPNOTSUPP || ret == -EPERM || ret == -EACCES;
}

MMEXT_API int mmext_pattern_map(const void *pattern, size_t pattern_len, size_t len,
				const struct mmext_pattern_opts *opts,
				struct mmext_pattern **out)
{
	uint32_t backend = MMEXT__OPT(opts, backend, MMEXT_PATTERN_AUTO);
	uint32_t prot = MMEXT__OPT(opts, prot, 0);
	uint64_t tile_pages = MMEXT__OPT(opts, tile_pages, 0);
	uint32_t flags = MMEXT__OPT(opts, flags, 0);
	uint32_t reserved = MMEXT__OPT(opts, reserved, 0);
	size_t psz = mmext__page_size(), i;
	struct pattern_req r;
	struct mmext_pattern *p;
	struct pattern_id id;
	void *addr = NULL;
	int ret;

	ret = mmext__opts_check(opts, MMEXT__OPTS_END(mmext_pattern_opts, reserved));
	if (ret)
		return ret;
	if (!pattern || !out)
		return -EFAULT;
	if (!pattern_len || pattern_len > psz || pattern_len & (pattern_len - 1) || !len ||
	    len > SIZE_MAX - psz || backend > MMEXT_PATTERN_EMULATED ||
	    prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC) || tile_pages > SIZE_MAX / psz ||
	    flags & ~MMEXT_PATTERN_NOCACHE || reserved)
		return -EINVAL;
	/* Checked here, not by the kernel: the same answer whether or not it has them. */
	if (backend == MMEXT_PATTERN_KERNEL && prot & PROT_EXEC)
		return -EINVAL;
	r.pattern = pattern;
	r.pattern_len = pattern_len;
	r.len = (len + psz - 1) & ~(psz - 1);
	r.prot = prot ? (int)prot : PROT_READ | PROT_WRITE;
	r.tile_pages = tile_pages ? tile_pages : DEFAULT_TILE_PAGES;
	r.flags = flags;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = -EOPNOTSUPP;
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (backend != MMEXT_PATTERN_AUTO && backend != backends[i].id)
			continue;
		if (r.prot & PROT_EXEC && !backends[i].exec)
			continue;
		ret = backends[i].map(&r, &addr, &id);
		if (!try_next(ret) || backend != MMEXT_PATTERN_AUTO)
			break;
	}
	if (ret) {
		free(p);
		return ret;
	}
	p->addr = addr;
	p->len = r.len;
	p->backend = backends[i].id;
	p->owner = mmext__process_gen();
	p->id = id;
	*out = p;
	return 0;
}

/* Whether [s, e) of VMA v is still p's mapping: its file, at its offset, one tile. */
static bool vma_is_pattern(const struct mmext_pattern *p, const struct mmext_vma *v,
			   uintptr_t s, uintptr_t e)
{
	uintptr_t rel = s - (uintptr_t)p->addr;
	uint64_t off = v->offset + (s - v->start);

	if (v->dev_major != major(p->id.dev) || v->dev_minor != minor(p->id.dev) ||
	    v->inode != p->id.ino)
		return false;
	if (!p->id.tile)
		return off == rel;
	return off == rel % p->id.tile && rel / p->id.tile ==
	       (e - 1 - (uintptr_t)p->addr) / p->id.tile;
}

/*
 * Apply fn to the parts of [a, e) that are still p's mapping, skipping memory mapped
 * there since part of the range was unmapped or moved. 0 when all of [a, e) was p's,
 * -ENOMEM when some was not (the rest done), or the -errno of reading the maps or of
 * fn (nothing more done).
 */
static int each_own_part(struct mmext_pattern *p, uintptr_t a, uintptr_t e,
			 int (*fn)(uintptr_t, size_t))
{
	struct mmext_maps *m = NULL;
	struct mmext_vma v;
	uintptr_t s, t;
	int ret = 0, skipped = 0;

	while (a < e) {
		ret = mmext__self_find(&m, a, MMEXT_FIND_NEXT, &v);
		if (ret == -ENOENT || (!ret && v.start >= e)) {
			skipped = 1;
			ret = 0;
			break;
		}
		if (ret)
			break;
		s = v.start > a ? v.start : a;
		t = v.end < e ? v.end : e;
		skipped |= s > a;
		if (vma_is_pattern(p, &v, s, t))
			ret = fn(s, t - s);
		else
			skipped = 1;
		if (ret)
			break;
		a = t;
	}
	mmext_maps_close(m);
	return ret ? ret : skipped ? -ENOMEM : 0;
}

static int unmap_part(uintptr_t a, size_t len)
{
	return munmap((void *)a, len) ? -errno : 0;
}

/* On a private file mapping this drops the private copies: the file shows again. */
static int reset_part(uintptr_t a, size_t len)
{
	return madvise((void *)a, len, MADV_DONTNEED) ? -errno : 0;
}

MMEXT_API void mmext_pattern_unmap(struct mmext_pattern *p)
{
	if (!p)
		return;
	/* In a fork child the range is the child's copy, where the same test holds. */
	each_own_part(p, (uintptr_t)p->addr, (uintptr_t)p->addr + p->len, unmap_part);
	free(p);
}

/* Whether p is usable here: it describes the mapping of the process that made it. */
static bool ours(const struct mmext_pattern *p)
{
	return p && p->owner == mmext__process_gen();
}

MMEXT_API void *mmext_pattern_addr(const struct mmext_pattern *p)
{
	return ours(p) ? p->addr : NULL;
}

MMEXT_API size_t mmext_pattern_len(const struct mmext_pattern *p)
{
	return ours(p) ? p->len : 0;
}

MMEXT_API int mmext_pattern_backend(const struct mmext_pattern *p)
{
	if (!p)
		return -EINVAL;
	return ours(p) ? p->backend : -ECHILD;
}

MMEXT_API int mmext_pattern_reset(struct mmext_pattern *p, void *addr, size_t len)
{
	uintptr_t end;
	int ret;

	if (!p)
		return -EFAULT;
	if (!ours(p))
		return -ECHILD;
	ret = mmext__range(addr, len, &end);
	if (ret)
		return ret;
	if ((uintptr_t)addr < (uintptr_t)p->addr || end > (uintptr_t)p->addr + p->len)
		return -EINVAL;
	return each_own_part(p, (uintptr_t)addr, end, reset_part);
}
