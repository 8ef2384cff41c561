// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Pattern memory: a backend table, reference pages first, then the memfd-tile emulation. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mmext/uapi.h>

#include "internal.h"

#define DEFAULT_TILE_PAGES 512

struct mmext_pattern {
	void *addr;
	size_t len;
	int backend;
};

struct pattern_req {
	const void *pattern;
	size_t pattern_len;
	size_t len;		/* page-rounded */
	int prot;
	size_t tile_pages;
};

struct pattern_backend {
	int id;
	int (*map)(const struct pattern_req *r, void **addr);
};

/* A page of the pattern, handed to refpage_create() and mapped privately. */
static int kernel_map(const struct pattern_req *r, void **addr)
{
	size_t psz = mmext__page_size(), i;
	char *page;
	void *p;
	long nr;
	int fd, ret;

	/* Only a number this kernel published: elsewhere it may be another call. */
	if (!mmext__have(MMEXT_FEAT_REFPAGE) || mmext__read_marker(MMEXT_REFPAGE_SYSFS, &nr))
		return -EOPNOTSUPP;
	/* Heap, not a mapping of its own: no munmap() and TLB flush per call. */
	ret = posix_memalign((void **)&page, psz, psz);
	if (ret)
		return -ret;
	for (i = 0; i < psz; i += r->pattern_len)
		memcpy(page + i, r->pattern, r->pattern_len);
	fd = syscall(nr, page, REFPAGE_CLOEXEC);
	ret = fd < 0 ? -errno : 0;
	free(page);
	if (ret)
		return ret;
	/* The mapping keeps the reference page; the fd is not needed after this. */
	p = mmap(NULL, r->len, r->prot, MAP_PRIVATE, fd, 0);
	ret = p == MAP_FAILED ? -errno : 0;
	close(fd);
	if (!ret)
		*addr = p;
	return ret;
}

/* A sealed memfd of tile_pages pattern pages. */
static int pattern_memfd(const struct pattern_req *r, size_t tile_bytes)
{
	size_t i;
	char *p;
	int fd, ret;

	fd = memfd_create("mmext-pattern", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, tile_bytes))
		goto fail;
	p = mmap(NULL, tile_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	for (i = 0; i < tile_bytes; i += r->pattern_len)
		memcpy(p + i, r->pattern, r->pattern_len);
	munmap(p, tile_bytes);
	/* Nobody may change the pattern under the clean pages that share it. */
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL))
		goto fail;
	return fd;
fail:
	ret = -errno;
	close(fd);
	return ret;
}

static int emulated_map(const struct pattern_req *r, void **addr)
{
	size_t psz = mmext__page_size(), tile = r->tile_pages * psz, off, n;
	char *base;
	int fd, ret = 0;

	if (tile > r->len)
		tile = r->len;
	fd = pattern_memfd(r, tile);
	if (fd < 0)
		return fd;
	/* Reserve the whole range first so the tiles land contiguously. */
	base = mmap(NULL, r->len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED) {
		ret = -errno;
		goto out;
	}
	for (off = 0; off < r->len; off += n) {
		n = r->len - off < tile ? r->len - off : tile;
		if (mmap(base + off, n, r->prot, MAP_PRIVATE | MAP_FIXED, fd, 0) == MAP_FAILED) {
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

static const struct pattern_backend backends[] = {
	{ MMEXT_PATTERN_KERNEL, kernel_map },
	{ MMEXT_PATTERN_EMULATED, emulated_map },
};

MMEXT_API int mmext_pattern_map(const void *pattern, size_t pattern_len, size_t len,
				const struct mmext_pattern_opts *opts,
				struct mmext_pattern **out)
{
	uint32_t backend = MMEXT__OPT(opts, backend, MMEXT_PATTERN_AUTO);
	uint32_t prot = MMEXT__OPT(opts, prot, 0);
	uint64_t tile_pages = MMEXT__OPT(opts, tile_pages, 0);
	size_t psz = mmext__page_size(), i;
	struct pattern_req r;
	struct mmext_pattern *p;
	void *addr = NULL;
	int ret;

	ret = mmext__opts_check(opts, MMEXT__OPTS_END(mmext_pattern_opts, tile_pages));
	if (ret)
		return ret;
	if (!pattern || !out)
		return -EFAULT;
	if (!pattern_len || pattern_len > psz || pattern_len & (pattern_len - 1) || !len ||
	    len > SIZE_MAX - psz || backend > MMEXT_PATTERN_EMULATED ||
	    prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC) || tile_pages > SIZE_MAX / psz)
		return -EINVAL;
	r.pattern = pattern;
	r.pattern_len = pattern_len;
	r.len = (len + psz - 1) & ~(psz - 1);
	r.prot = prot ? (int)prot : PROT_READ | PROT_WRITE;
	r.tile_pages = tile_pages ? tile_pages : DEFAULT_TILE_PAGES;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	ret = -EOPNOTSUPP;
	for (i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (backend != MMEXT_PATTERN_AUTO && backend != backends[i].id)
			continue;
		ret = backends[i].map(&r, &addr);
		if (ret != -EOPNOTSUPP || backend != MMEXT_PATTERN_AUTO)
			break;
	}
	if (ret) {
		free(p);
		return ret;
	}
	p->addr = addr;
	p->len = r.len;
	p->backend = backends[i].id;
	*out = p;
	return 0;
}

MMEXT_API void mmext_pattern_unmap(struct mmext_pattern *p)
{
	if (!p)
		return;
	munmap(p->addr, p->len);
	free(p);
}

MMEXT_API void *mmext_pattern_addr(const struct mmext_pattern *p)
{
	return p ? p->addr : NULL;
}

MMEXT_API size_t mmext_pattern_len(const struct mmext_pattern *p)
{
	return p ? p->len : 0;
}

MMEXT_API int mmext_pattern_backend(const struct mmext_pattern *p)
{
	return p ? p->backend : -EINVAL;
}

MMEXT_API int mmext_pattern_reset(struct mmext_pattern *p, void *addr, size_t len)
{
	uintptr_t end;
	int ret;

	if (!p)
		return -EFAULT;
	ret = mmext__range(addr, len, &end);
	if (ret)
		return ret;
	if ((uintptr_t)addr < (uintptr_t)p->addr || end > (uintptr_t)p->addr + p->len)
		return -EINVAL;
	/* On a private file mapping this drops the private copies: the file shows again. */
	return madvise(addr, end - (uintptr_t)addr, MADV_DONTNEED) ? -errno : 0;
}
