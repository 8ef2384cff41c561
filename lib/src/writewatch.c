// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Write watch with two backends: PAGEMAP_SCAN + uffd WP_ASYNC, and soft-dirty. See
 * <mmext/writewatch.h> for the semantics each one gives.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmext/uapi.h>
#include "internal.h"

/*
 * page_region entries per PAGEMAP_SCAN call. At most 512, the kernel's bounce buffer
 * (PAGEMAP_WALK_SIZE >> PAGE_SHIFT): a call that fills it, goes round again and then
 * finishes the walk returns the walk_end of the first round (6.12 to 6.18 at least;
 * kernel/6.12/patches/0002 fixes it), and looping on that would report pages twice. A
 * larger vector is slower anyway.
 */
#define SCAN_REGIONS	256
#define LONG_BITS	(8 * sizeof(unsigned long))

struct mmext_ww {
	int backend;
	unsigned long owner;	/* mmext__process_gen() of the opener, the one it describes */
	bool hugetlb;		/* open found hugetlb memory in the range */
	bool sd_listed;		/* SOFT_DIRTY: on its process's list */
	uintptr_t start, end;
	size_t npages;
	int pagemap_fd;		/* PAGEMAP_SCAN and SOFT_DIRTY */
	int uffd;		/* PAGEMAP_SCAN */
	/*
	 * SOFT_DIRTY: writes seen before the last process-wide clear, and after them a
	 * get's scratch bits. Mapped on its own, so that the library's own stores never
	 * land in a watched heap.
	 */
	unsigned long *bits, *seen;
	struct mmext_ww *sd_next;	/* SOFT_DIRTY: list of the process's watches */
};

static size_t bits_bytes(const struct mmext_ww *w)
{
	return (w->npages + LONG_BITS - 1) / LONG_BITS * sizeof(unsigned long);
}

static int bits_alloc(struct mmext_ww *w)
{
	void *p = mmap(NULL, 2 * bits_bytes(w), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return -ENOMEM;
	w->bits = p;
	w->seen = (unsigned long *)((char *)p + bits_bytes(w));
	return 0;
}

static size_t page_index(const struct mmext_ww *w, uintptr_t addr)
{
	return (addr - w->start) / mmext__page_size();
}

static bool bit_test(const unsigned long *b, size_t i)
{
	return b[i / LONG_BITS] & (1UL << (i % LONG_BITS));
}

static void bit_set(unsigned long *b, size_t i)
{
	b[i / LONG_BITS] |= 1UL << (i % LONG_BITS);
}

static void bit_clear(unsigned long *b, size_t i)
{
	b[i / LONG_BITS] &= ~(1UL << (i % LONG_BITS));
}

/* Collects page addresses into the caller's array. */
struct collect {
	void **pages;
	size_t cap, n;
};

/* Add [a, e) page by page; false when the array is full. */
static bool collect_range(struct collect *c, uintptr_t a, uintptr_t e)
{
	size_t psz = mmext__page_size();

	for (; a < e; a += psz) {
		if (c->n == c->cap)
			return false;
		c->pages[c->n++] = (void *)a;
	}
	return true;
}

/* ---- PAGEMAP_SCAN + userfaultfd WP_ASYNC ---- */

/*
 * Scan [a, e) for written pages, write-protecting what is reported when wp. With c
 * NULL only write-protect (the kernel needs no output buffer for that). Returns 0
 * when the range was covered, 1 when c filled first, or -errno; c holds what was
 * reported (and so, with wp, reset) before an error too.
 */
static int scan_range(struct mmext_ww *w, uintptr_t a, uintptr_t e, bool wp,
		      struct collect *c)
{
	struct page_region reg[SCAN_REGIONS];
	struct pm_scan_arg arg;
	uintptr_t cur = a;
	long n, i;
	int ret;

	if (c && !c->cap) {
		/* Only "is anything written?": max_pages 0 would mean no limit. */
		memset(&arg, 0, sizeof(arg));
		arg.size = sizeof(arg);
		arg.flags = PM_SCAN_CHECK_WPASYNC;
		arg.start = a;
		arg.end = e;
		arg.vec = (uintptr_t)reg;
		arg.vec_len = 1;
		arg.max_pages = 1;
		arg.category_mask = PAGE_IS_WRITTEN;
		arg.return_mask = PAGE_IS_WRITTEN;
		n = ioctl(w->pagemap_fd, PAGEMAP_SCAN, &arg);
		return n < 0 ? -errno : n > 0;
	}
	/*
	 * A call that fails partway (a VMA it may not write-protect) has stored and
	 * re-protected what it found before, without saying how much: zeroed entries
	 * tell the stored ones apart.
	 */
	if (c)
		memset(reg, 0, sizeof(reg));
	while (cur < e) {
		if (c && c->n == c->cap)
			return 1;
		memset(&arg, 0, sizeof(arg));
		arg.size = sizeof(arg);
		arg.flags = PM_SCAN_CHECK_WPASYNC | (wp ? PM_SCAN_WP_MATCHING : 0);
		arg.start = cur;
		arg.end = e;
		arg.category_mask = PAGE_IS_WRITTEN;
		arg.return_mask = PAGE_IS_WRITTEN;
		if (c) {
			arg.vec = (uintptr_t)reg;
			arg.vec_len = SCAN_REGIONS;
			/* Caps what is reported and so what WP_MATCHING re-protects. */
			arg.max_pages = c->cap - c->n;
		}
		n = ioctl(w->pagemap_fd, PAGEMAP_SCAN, &arg);
		if (n < 0) {
			ret = -errno;
			for (i = 0; c && i < SCAN_REGIONS && reg[i].end; i++)
				collect_range(c, reg[i].start, reg[i].end);
			return ret;
		}
		for (i = 0; i < n; i++)
			collect_range(c, reg[i].start, reg[i].end);
		if (c)
			memset(reg, 0, n * sizeof(reg[0]));
		/* walk_end says how far the kernel got before the buffer filled. */
		if (arg.walk_end <= cur)
			return -EIO;
		cur = arg.walk_end;
	}
	return 0;
}

static int range_has_hugetlb(uintptr_t a, uintptr_t e);

static int pms_open(struct mmext_ww *w)
{
	struct uffdio_register reg = {
		.range = { .start = w->start, .len = w->end - w->start },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};
	int ret;

	ret = mmext__need(MMEXT_FEAT_WRITEWATCH);
	if (ret)
		return ret;
	w->uffd = mmext__uffd_open(UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED);
	if (w->uffd < 0)
		return w->uffd;
	/*
	 * The range is checked and mapped: EINVAL is hugetlb memory the range does not
	 * cover in whole huge pages, refused as all hugetlb memory is, or memory
	 * userfaultfd cannot write-protect (a reference-page mapping), which this backend
	 * cannot watch.
	 */
	if (ioctl(w->uffd, UFFDIO_REGISTER, &reg)) {
		if (errno != EINVAL)
			return -errno;
		ret = range_has_hugetlb(w->start, w->end);
		if (ret < 0)
			return ret;
		w->hugetlb = ret;
		return ret ? -EINVAL : -EOPNOTSUPP;
	}
	/*
	 * The kernel offers no zeropage ioctl on a range with hugetlb memory, whose huge
	 * pages it can only re-protect whole: a get with fewer slots than a huge page has
	 * pages could never reset it.
	 */
	if (!(reg.ioctls & (1ULL << _UFFDIO_ZEROPAGE))) {
		w->hugetlb = true;
		return -EINVAL;
	}
	w->pagemap_fd = mmext__open_proc(0, "pagemap", O_RDONLY);
	if (w->pagemap_fd < 0)
		return w->pagemap_fd;
	/* Pages populated before registration count as written until protected. */
	return scan_range(w, w->start, w->end, true, NULL);
}

/*
 * Unregister [a, e) if no other userfaultfd holds any of it. UFFDIO_UNREGISTER of
 * Linux 6.12 and earlier drops any userfaultfd's registration in its range; a
 * registration first fails (EBUSY) where another one holds a VMA, and is a no-op
 * where this one does. False when the range was left alone.
 */
static bool pms_release(struct mmext_ww *w, uintptr_t a, uintptr_t e)
{
	struct uffdio_register reg = {
		.range = { .start = a, .len = e - a },
		.mode = UFFDIO_REGISTER_MODE_WP,
	};

	if (ioctl(w->uffd, UFFDIO_REGISTER, &reg))
		return false;
	ioctl(w->uffd, UFFDIO_UNREGISTER, &reg.range);
	return true;
}

/*
 * Release the range. Unregistered explicitly: a fork child's copy of the descriptor
 * would keep the registration alive past close(). Only ranges registered with this
 * userfaultfd change: memory mapped there since is left alone (VMA by VMA when the
 * range as a whole cannot be). In another process the descriptor still names the
 * owner's memory, so only the copy is closed.
 */
static void pms_close(struct mmext_ww *w)
{
	struct mmext_maps *m = NULL;
	struct mmext_vma v;
	uintptr_t a = w->start;

	if (w->owner != mmext__process_gen() || pms_release(w, w->start, w->end))
		return;
	while (a < w->end && !mmext__self_find(&m, a, MMEXT_FIND_NEXT, &v) && v.start < w->end) {
		a = v.end < w->end ? v.end : w->end;
		pms_release(w, v.start > w->start ? v.start : w->start, a);
	}
	mmext_maps_close(m);
}

/* ---- soft-dirty ---- */

/*
 * The soft-dirty watches of one process. A fork child inherits a copy whose lock a
 * thread of the parent may have held and whose list names the parent's watches: the
 * child starts a state of its own and never touches that copy. Told by the process's
 * number, not its pid: a child can have an ancestor's pid.
 */
struct sd_state {
	unsigned long gen;	/* mmext__process_gen() */
	pthread_mutex_t lock;
	int cancel;		/* the holder's, from mmext__cancel_off() */
	struct mmext_ww *list;
	struct sd_state *inherited;	/* kept reachable only */
};

static struct sd_state *sd_state;

/* This process's state, locked (see mmext__cancel_off()); NULL when out of memory. */
static struct sd_state *sd_lock(void)
{
	struct sd_state *s = __atomic_load_n(&sd_state, __ATOMIC_ACQUIRE), *n;
	unsigned long gen = mmext__process_gen();
	int cancel = mmext__cancel_off();

	while (!s || s->gen != gen) {
		/* Not the heap's: locking it would dirty a watched heap. */
		n = mmap(NULL, sizeof(*n), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (n == MAP_FAILED) {
			mmext__cancel_restore(cancel);
			return NULL;
		}
		n->gen = gen;
		n->inherited = s;
		pthread_mutex_init(&n->lock, NULL);
		if (__atomic_compare_exchange_n(&sd_state, &s, n, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			s = n;
			break;
		}
		pthread_mutex_destroy(&n->lock);
		munmap(n, sizeof(*n));
	}
	pthread_mutex_lock(&s->lock);
	s->cancel = cancel;
	return s;
}

static void sd_unlock(struct sd_state *s)
{
	int cancel = s->cancel;

	pthread_mutex_unlock(&s->lock);
	mmext__cancel_restore(cancel);
}

#define PM_SOFT_DIRTY	(1ULL << 55)

/* Call fn(w, index) for every soft-dirty page of w in [a, e). */
static int sd_each(struct mmext_ww *w, uintptr_t a, uintptr_t e,
		   bool (*fn)(struct mmext_ww *, size_t, void *), void *arg)
{
	size_t psz = mmext__page_size(), i, n;
	uint64_t ent[512];
	ssize_t got;

	while (a < e) {
		n = (e - a) / psz;
		if (n > 512)
			n = 512;
		got = pread(w->pagemap_fd, ent, n * sizeof(ent[0]), a / psz * sizeof(ent[0]));
		if (got < 0)
			return -errno;
		if (got < (ssize_t)sizeof(ent[0]))
			return -EIO;
		n = got / sizeof(ent[0]);
		for (i = 0; i < n; i++)
			if (ent[i] & PM_SOFT_DIRTY && !fn(w, page_index(w, a + i * psz), arg))
				return 1;
		a += n * psz;
	}
	return 0;
}

static bool sd_fold_one(struct mmext_ww *w, size_t idx, void *arg)
{
	bit_set(w->bits, idx);
	return true;
}

/*
 * clear_refs resets soft-dirty for the whole process: first record, for every
 * soft-dirty watch, what it would otherwise lose. Called with s locked.
 */
static int sd_clear_process(struct sd_state *s)
{
	struct mmext_ww *x;
	int fd, ret;

	for (x = s->list; x; x = x->sd_next) {
		ret = sd_each(x, x->start, x->end, sd_fold_one, NULL);
		if (ret < 0)
			return ret;
	}
	fd = mmext__open_proc(0, "clear_refs", O_WRONLY);
	if (fd < 0)
		return fd;
	ret = write(fd, "4", 1) == 1 ? 0 : -errno;
	close(fd);
	return ret;
}

/* Start @w, a listed soft-dirty watch, with nothing written. */
static int sd_clear_new(struct mmext_ww *w)
{
	struct sd_state *s = sd_lock();
	int ret;

	if (!s)
		return -ENOMEM;
	ret = sd_clear_process(s);
	memset(w->bits, 0, bits_bytes(w));
	sd_unlock(s);
	return ret;
}

/* Whether a /proc/self/smaps line puts hugetlb memory in [a, e); *in tracks the VMA. */
static bool smaps_line_huge(const char *line, uintptr_t a, uintptr_t e, bool *in)
{
	static const char key[] = "KernelPageSize:";
	unsigned long start, end;
	char *p;

	start = strtoul(line, &p, 16);
	if (p != line && *p == '-') {
		end = strtoul(p + 1, NULL, 16);
		*in = start < e && a < end;
		return false;
	}
	if (!*in || strncmp(line, key, sizeof(key) - 1))
		return false;
	return strtoul(line + sizeof(key) - 1, NULL, 10) * 1024 != mmext__page_size();
}

/*
 * Whether [a, e) holds memory mapped in pages larger than the base page (hugetlb):
 * 1, 0 or -errno. Soft-dirty never sees a write to such memory once it is cleared.
 */
static int range_has_hugetlb(uintptr_t a, uintptr_t e)
{
	char buf[8192], *line, *nl;
	bool in = false, skip = false;
	size_t have = 0;
	int fd, ret = 0;
	ssize_t n;

	fd = mmext__open_proc(0, "smaps", O_RDONLY);
	if (fd < 0)
		return fd;
	while (!ret) {
		n = read(fd, buf + have, sizeof(buf) - 1 - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : 0;
			break;
		}
		have += n;
		buf[have] = '\0';
		line = buf;
		if (skip) {
			nl = strchr(line, '\n');
			skip = !nl;
			line = nl ? nl + 1 : buf + have;
		}
		for (; !ret && (nl = strchr(line, '\n')); line = nl + 1) {
			*nl = '\0';
			ret = smaps_line_huge(line, a, e, &in);
		}
		have -= line - buf;
		memmove(buf, line, have);
		/*
		 * A line the buffer cannot hold is a VMA's header with a long path (paths
		 * have no length limit there): its range comes first, the rest is skipped.
		 */
		if (!ret && have == sizeof(buf) - 1) {
			ret = smaps_line_huge(buf, a, e, &in);
			skip = true;
			have = 0;
		}
	}
	close(fd);
	return ret;
}

static int sd_open(struct mmext_ww *w)
{
	struct sd_state *s;
	int ret;

	ret = mmext__need(MMEXT_FEAT_SOFT_DIRTY);
	if (ret)
		return ret;
	ret = range_has_hugetlb(w->start, w->end);
	if (ret > 0) {
		w->hugetlb = true;
		return -EINVAL;
	}
	if (ret)
		return ret;
	ret = bits_alloc(w);
	if (ret)
		return ret;
	w->pagemap_fd = mmext__open_proc(0, "pagemap", O_RDONLY);
	if (w->pagemap_fd < 0)
		return w->pagemap_fd;
	s = sd_lock();
	if (!s)
		return -ENOMEM;
	w->sd_next = s->list;
	s->list = w;
	w->sd_listed = true;
	sd_unlock(s);
	return sd_clear_new(w);
}

/* Off the list, in the owner only: a fork child's copy never was on the child's. */
static void sd_unlink(struct mmext_ww *w)
{
	struct mmext_ww **pp;
	struct sd_state *s;

	if (!w->sd_listed || w->owner != mmext__process_gen())
		return;
	s = sd_lock();
	if (!s)
		return;		/* cannot happen: the owner's state exists */
	for (pp = &s->list; *pp; pp = &(*pp)->sd_next) {
		if (*pp == w) {
			*pp = w->sd_next;
			break;
		}
	}
	sd_unlock(s);
	w->sd_listed = false;
}

static bool sd_mark(struct mmext_ww *w, size_t idx, void *arg)
{
	bit_set(arg, idx);
	return true;
}

/* A failed reset resets nothing, and so reports nothing (c->n is 0 then). */
static int sd_get(struct mmext_ww *w, uintptr_t a, uintptr_t e, bool reset, struct collect *c)
{
	size_t psz = mmext__page_size(), first = page_index(w, a), last = page_index(w, e), i;
	unsigned long *seen = w->seen;
	struct sd_state *s;
	int ret, more = 0;

	s = sd_lock();
	if (!s)
		return -ENOMEM;
	/* Not the heap's: a watch over it would see the library's own stores. */
	memset(seen, 0, bits_bytes(w));
	ret = sd_each(w, a, e, sd_mark, seen);
	if (ret < 0)
		goto out;
	for (i = first; i < last; i++) {
		if (!bit_test(seen, i) && !bit_test(w->bits, i))
			continue;
		if (c && !collect_range(c, w->start + i * psz, w->start + (i + 1) * psz)) {
			more = 1;
			break;
		}
		bit_set(seen, i);	/* now means: reported */
	}
	last = i;
	if (reset) {
		ret = sd_clear_process(s);
		if (ret < 0) {
			if (c)
				c->n = 0;
			goto out;
		}
		for (i = first; i < last; i++)
			if (!c || bit_test(seen, i))
				bit_clear(w->bits, i);
	}
	ret = more;
out:
	sd_unlock(s);
	return ret;
}

/* ---- common ---- */

MMEXT_API const char *mmext_ww_backend_name(int backend)
{
	switch (backend) {
	case MMEXT_WW_AUTO:
		return "auto";
	case MMEXT_WW_PAGEMAP_SCAN:
		return "pagemap_scan";
	case MMEXT_WW_SOFT_DIRTY:
		return "soft_dirty";
	case MMEXT_WW_MPROTECT:
		return "mprotect";
	}
	return NULL;
}

static void ww_teardown(struct mmext_ww *w)
{
	if (w->backend == MMEXT_WW_SOFT_DIRTY)
		sd_unlink(w);
	if (w->uffd >= 0) {
		pms_close(w);
		close(w->uffd);
	}
	if (w->pagemap_fd >= 0)
		close(w->pagemap_fd);
	if (w->bits)
		munmap(w->bits, 2 * bits_bytes(w));
	w->bits = w->seen = NULL;
	w->uffd = w->pagemap_fd = -1;
}

static int backend_open(struct mmext_ww *w, int backend)
{
	w->backend = backend;
	switch (backend) {
	case MMEXT_WW_PAGEMAP_SCAN:
		return pms_open(w);
	case MMEXT_WW_SOFT_DIRTY:
		return sd_open(w);
	default:
		return -EOPNOTSUPP;	/* MPROTECT: reserved, never served */
	}
}

/* Whether addr..end is mapped throughout: 0, -ENOMEM at a hole, else -errno. */
static int range_mapped(uintptr_t addr, uintptr_t end)
{
	struct mmext_maps *m = NULL;
	struct mmext_vma v;
	uintptr_t cur = addr;
	int ret = 0;

	while (cur < end) {
		ret = mmext__self_find(&m, cur, 0, &v);
		if (ret == -ENOENT)
			ret = -ENOMEM;
		if (ret)
			break;
		cur = v.end;
	}
	mmext_maps_close(m);
	return ret;
}

MMEXT_API int mmext_ww_open(void *addr, size_t len, const struct mmext_ww_opts *opts,
			    struct mmext_ww **out)
{
	uint32_t backend = MMEXT__OPT(opts, backend, MMEXT_WW_AUTO);
	uint32_t flags = MMEXT__OPT(opts, flags, 0);
	struct mmext_ww *w;
	uintptr_t end;
	int ret, b;

	ret = mmext__opts_check(opts, MMEXT__OPTS_END(mmext_ww_opts, flags));
	if (ret)
		return ret;
	if (!out)
		return -EFAULT;
	if (backend > MMEXT_WW_MPROTECT || flags)
		return -EINVAL;
	ret = mmext__range(addr, len, &end);
	if (ret)
		return ret;
	if (backend == MMEXT_WW_MPROTECT)
		return -EOPNOTSUPP;
	ret = range_mapped((uintptr_t)addr, end);
	if (ret)
		return ret;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	w->start = (uintptr_t)addr;
	w->end = end;
	w->npages = (end - w->start) / mmext__page_size();
	w->uffd = w->pagemap_fd = -1;
	w->owner = mmext__process_gen();
	if (backend != MMEXT_WW_AUTO) {
		ret = backend_open(w, backend);
	} else {
		/*
		 * Fall through the backends while the failure is "cannot serve this";
		 * hugetlb memory no backend can watch.
		 */
		for (b = MMEXT_WW_PAGEMAP_SCAN; b <= MMEXT_WW_SOFT_DIRTY; b++) {
			ret = backend_open(w, b);
			if (w->hugetlb || (ret != -EOPNOTSUPP && ret != -EPERM &&
					   ret != -EACCES && ret != -EINVAL && ret != -ENOSYS))
				break;
			ww_teardown(w);
			ret = -EOPNOTSUPP;
		}
	}
	/*
	 * A huge page would be reported written as a whole (EINVAL: no THP at all).
	 * Only once armed, so that a failed open leaves the range as it was.
	 */
	if (!ret && madvise(addr, end - w->start, MADV_NOHUGEPAGE) && errno != EINVAL)
		ret = -errno;
	/* The madvise may merge the range into a VMA the kernel marks soft-dirty whole. */
	if (!ret && w->backend == MMEXT_WW_SOFT_DIRTY)
		ret = sd_clear_new(w);
	if (ret) {
		ww_teardown(w);
		free(w);
		return ret;
	}
	*out = w;
	return 0;
}

MMEXT_API void mmext_ww_close(struct mmext_ww *w)
{
	if (!w)
		return;
	ww_teardown(w);
	free(w);
}

MMEXT_API int mmext_ww_backend(const struct mmext_ww *w)
{
	if (!w)
		return -EINVAL;
	return w->owner == mmext__process_gen() ? w->backend : -ECHILD;
}

/* [addr, addr + len) page-rounded and inside the watch. */
static int sub_range(const struct mmext_ww *w, void *addr, size_t len, uintptr_t *a,
		     uintptr_t *e)
{
	int ret = mmext__range(addr, len, e);

	if (ret)
		return ret;
	*a = (uintptr_t)addr;
	if (*a < w->start || *e > w->end)
		return -EINVAL;
	return 0;
}

MMEXT_API int mmext_ww_get(struct mmext_ww *w, void *addr, size_t len, unsigned int flags,
			   void **pages, size_t *count)
{
	struct collect c;
	uintptr_t a, e;
	int ret;

	if (!w || !count || (!pages && *count))
		return -EFAULT;
	/* Another process (a fork child) would read or reset the owner's state. */
	if (w->owner != mmext__process_gen())
		return -ECHILD;
	if (flags & ~MMEXT_WW_RESET)
		return -EINVAL;
	ret = sub_range(w, addr, len, &a, &e);
	if (ret)
		return ret;
	c.pages = pages;
	c.cap = *count;
	c.n = 0;
	if (w->backend == MMEXT_WW_PAGEMAP_SCAN)
		ret = scan_range(w, a, e, flags & MMEXT_WW_RESET, &c);
	else
		ret = sd_get(w, a, e, flags & MMEXT_WW_RESET, &c);
	/* Also on an error: the pages stored were reset with MMEXT_WW_RESET. */
	*count = c.n;
	return ret;
}

MMEXT_API int mmext_ww_reset(struct mmext_ww *w, void *addr, size_t len)
{
	uintptr_t a, e;
	int ret;

	if (!w)
		return -EFAULT;
	if (w->owner != mmext__process_gen())
		return -ECHILD;
	ret = sub_range(w, addr, len, &a, &e);
	if (ret)
		return ret;
	if (w->backend == MMEXT_WW_PAGEMAP_SCAN)
		return scan_range(w, a, e, true, NULL);
	ret = sd_get(w, a, e, true, NULL);
	return ret < 0 ? ret : 0;
}
