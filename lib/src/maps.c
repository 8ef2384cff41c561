// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* VMA queries: PROCMAP_QUERY for point lookups, the text of maps for listings. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <mmext/uapi.h>
#include "internal.h"

#define TEXT_CHUNK	(64 * 1024)
#define NAME_CAP_MAX	PATH_MAX	/* PROCMAP_QUERY's cap: a longer name is ENAMETOOLONG */
#define BUILD_ID_MAX	64

/* What ioctl_query() asks for as the name. */
enum query_name {
	QUERY_NO_NAME,		/* none: vma->name is "" whatever the VMA */
	QUERY_NAME,		/* up to PATH_MAX, else -ENAMETOOLONG */
	QUERY_NAME_OR_TEXT,	/* beyond PATH_MAX, the text's, read from its start */
	QUERY_NAME_OR_LISTED,	/* the same, the text read on from the listing's last */
};

/* A sequential reader of the text file: lines of any length. */
struct text_cursor {
	int fd;
	char *buf;			/* unread text at [pos, len), then a NUL */
	size_t cap, len, pos;
	bool eof;
	uint64_t end;			/* of the last VMA returned, 0 after a reset */
};

struct mmext_maps {
	unsigned long owner;	/* mmext__process_gen() of the process that opened it */
	int dir;		/* /proc/PID of the process read: never reopened by number */
	int find_backend;	/* MMEXT_MAPS_TEXT or MMEXT_MAPS_IOCTL */
	int list_backend;
	uint32_t flags;
	bool have_ioctl;
	bool no_names;		/* the library's own lookups: extents, device, inode, offset */
	int fd;			/* /proc/PID/maps: the ioctl target */
	struct text_cursor iter, find;
	uint64_t iter_addr;	/* ioctl listing: where the next lookup starts */
	bool iter_done;
	bool iter_started;	/* the listing returned a VMA since open or rewind */
	bool iter_gone;		/* its address space was replaced: -ESRCH until rewind */
	char *name;		/* ioctl names */
	size_t name_cap;
	int gate;		/* 0 not looked for yet, 1 none, 2 gate_start..gate_end */
	uint64_t gate_start, gate_end;
	uint32_t gate_prot;
	unsigned char build_id[BUILD_ID_MAX];
};

static void cursor_reset(struct text_cursor *c)
{
	c->len = c->pos = 0;
	c->end = 0;
	c->eof = false;
	if (c->fd >= 0)
		lseek(c->fd, 0, SEEK_SET);
}

/* Keep the unread tail and read more after it; 0 or -errno (eof set at the end). */
static int cursor_fill(struct text_cursor *c)
{
	ssize_t n;

	if (c->pos) {
		memmove(c->buf, c->buf + c->pos, c->len - c->pos);
		c->len -= c->pos;
		c->pos = 0;
	}
	if (c->cap - c->len < TEXT_CHUNK + 1) {
		/* A line longer than the buffer: grow rather than truncate. */
		size_t cap = c->cap ? c->cap * 2 : TEXT_CHUNK * 2;
		char *b = realloc(c->buf, cap);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	do
		n = read(c->fd, c->buf + c->len, c->cap - c->len - 1);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (!n)
		c->eof = true;
	c->len += n;
	c->buf[c->len] = '\0';	/* the parser's sentinel: cap > len */
	return 0;
}

/* A file of the process's /proc directory: -ESRCH once the process is reaped. */
static int open_in(const struct mmext_maps *m, const char *name)
{
	int fd = openat(m->dir, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

static int ioctl_query(struct mmext_maps *m, uint64_t addr, uint64_t qflags, bool build_id,
		       enum query_name name, struct mmext_vma *vma);

/* m->name with room for size bytes: 0 or -ENOMEM. */
static int name_room(struct mmext_maps *m, size_t size)
{
	char *n;

	if (m->name_cap >= size)
		return 0;
	n = realloc(m->name, size);
	if (!n)
		return -ENOMEM;
	m->name = n;
	m->name_cap = size;
	return 0;
}

/* Whether the kernel would show the name exact (elen bytes) as text (tlen bytes). */
static bool shown_as(const char *exact, size_t elen, const char *text, size_t tlen)
{
	size_t i, j = 0;

	for (i = 0; i < elen; i++) {
		if (exact[i] == '\n') {
			if (tlen - j < 4 || memcmp(text + j, "\\012", 4))
				return false;
			j += 4;
		} else if (j == tlen || text[j++] != exact[i]) {
			return false;
		}
	}
	return j == tlen;
}

/*
 * The text shows a newline in a path as \012 and escapes nothing else, not even a
 * backslash, so "\012" there is a newline or those four bytes. PROCMAP_QUERY, else
 * the map_files link (which needs CAP_CHECKPOINT_RESTORE), gives the bytes, which
 * replace the text's in place (they are never longer); without either each \012 is
 * taken for a newline.
 */
static void text_name(struct mmext_maps *m, struct mmext_vma *vma, char *name)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	char link[64], *in, *out, *end = name + vma->name_len;
	const char *exact = NULL;
	struct mmext_vma q;
	size_t elen = 0;
	ssize_t n;

	if (vma->name_len < 4 || !memmem(name, vma->name_len, "\\012", 4))
		return;
	if (m->have_ioctl) {
		if (!ioctl_query(m, vma->start, 0, false, QUERY_NAME, &q) && q.start == vma->start &&
		    q.end == vma->end) {
			exact = q.name;
			elen = q.name_len;
		}
	} else if (!name_room(m, vma->name_len + dlen + 2)) {
		snprintf(link, sizeof(link), "map_files/%" PRIx64 "-%" PRIx64, vma->start,
			 vma->end);
		n = readlinkat(m->dir, link, m->name, m->name_cap);
		if (n > 0 && (size_t)n < m->name_cap) {
			if (vma->flags & MMEXT_VMA_DELETED && (size_t)n > dlen &&
			    !memcmp(m->name + n - dlen, deleted, dlen))
				n -= dlen;
			exact = m->name;
			elen = n;
		}
	}
	if (exact && shown_as(exact, elen, name, vma->name_len)) {
		memcpy(name, exact, elen);
		vma->name_len = elen;
		return;
	}
	for (in = out = name; in < end; in++) {
		if (end - in >= 4 && !memcmp(in, "\\012", 4)) {
			*out++ = '\n';
			in += 3;
		} else {
			*out++ = *in;
		}
	}
	vma->name_len = out - name;
}

/*
 * The next VMA of the text, its name NUL-terminated in place: 1, 0 at the end, or
 * -errno. Lines are found and parsed in one pass over the buffer.
 */
static int text_next(struct mmext_maps *m, struct text_cursor *c, struct mmext_vma *vma)
{
	const char *next;
	char *line;
	int ret;

	if (c->fd < 0) {
		c->fd = open_in(m, "maps");
		if (c->fd < 0)
			return c->fd;
	}
	for (;;) {
		line = c->buf + c->pos;
		if (c->pos < c->len) {
			ret = mmext__maps_parse_next(line, c->buf + c->len, vma, &next);
			if (!ret) {
				c->pos = next - c->buf;
				break;
			}
			if (ret != -EAGAIN)
				return -EIO;	/* the kernel wrote something we do not understand */
			if (c->eof) {
				/* A last line without a newline. */
				if (mmext_maps_parse_line(line, c->len - c->pos, vma))
					return -EIO;
				c->pos = c->len;
				break;
			}
		} else if (c->eof) {
			return 0;
		}
		ret = cursor_fill(c);
		if (ret)
			return ret;
	}
	text_name(m, vma, line + (vma->name - line));
	/* cap > len always leaves room after a last line. */
	line[vma->name - line + vma->name_len] = '\0';
	c->end = vma->end;
	return 1;
}

#define PF_KTHREAD	0x00200000	/* include/linux/sched.h */

/*
 * Whether the address space the handle reads is gone: kernel threads and zombies have
 * none, and a process that exits or execs while being read loses its own. The text then
 * just ends early, so an empty or short listing cannot tell. PROCMAP_QUERY says so
 * exactly (-ESRCH); without it /proc/PID/stat tells zombies and kernel threads apart
 * (an exec mid-read goes unnoticed there), and a reaped process has no directory.
 */
static bool mm_gone(const struct mmext_maps *m)
{
	char buf[512], *p, state;
	unsigned int flags;
	ssize_t n = 0, r;
	int fd;

	if (m->have_ioctl) {
		struct procmap_query q = {
			.size = sizeof(q),
			.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
		};

		return ioctl(m->fd, PROCMAP_QUERY, &q) && errno == ESRCH;
	}
	fd = open_in(m, "stat");
	if (fd == -ESRCH)
		return true;
	if (fd < 0)
		return false;
	while ((size_t)n < sizeof(buf) - 1 &&
	       ((r = read(fd, buf + n, sizeof(buf) - 1 - n)) > 0 || (r < 0 && errno == EINTR)))
		n += r > 0 ? r : 0;
	close(fd);
	buf[n] = '\0';
	/* "PID (COMM) STATE PPID PGRP SESSION TTY TPGID FLAGS ...": COMM may hold ')'. */
	p = n > 0 ? strrchr(buf, ')') : NULL;
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %u", &state, &flags) != 2)
		return false;
	return state == 'Z' || state == 'X' || flags & PF_KTHREAD;
}

/*
 * A maps file reads the address space the process had when it was opened: after an
 * execve() it reads nothing, and PROCMAP_QUERY on it fails with ESRCH, while the
 * process lives on with a new one. Opened again from the process's directory, where
 * nothing read from the old one is pending (a lookup, a listing's start): 0 when the
 * process has an address space, -ESRCH or -errno. A listing under way fails from now.
 */
static int reopen(struct mmext_maps *m)
{
	int fd = open_in(m, "maps");

	if (fd < 0)
		return fd;
	close(m->fd);
	m->fd = m->iter.fd = fd;
	cursor_reset(&m->iter);
	if (m->iter_started || m->iter_addr)
		m->iter_gone = true;
	if (m->find.fd >= 0)
		close(m->find.fd);
	m->find.fd = -1;
	cursor_reset(&m->find);
	m->gate = 0;
	return mm_gone(m) ? -ESRCH : 0;
}

/*
 * The name of *vma, found by PROCMAP_QUERY with none, from the text, which shows
 * paths longer than PATH_MAX: 0, -ENAMETOOLONG when the text has no VMA of the same
 * extent, file and offset (it changed in between), or -errno. The name points into the
 * lookup cursor's buffer. A listing (@listed) asks in address order: the cursor first
 * goes on from where its last lookup left it, so that a listing reads the text once,
 * not once per long name; what it finds there must be the VMA the ioctl saw, else the
 * text is read again from its start.
 */
static int text_name_of(struct mmext_maps *m, struct mmext_vma *vma, bool listed)
{
	bool again = listed && vma->start >= m->find.end && !m->find.eof;
	struct mmext_vma v;
	int ret;

	if (!again)
		cursor_reset(&m->find);
	for (;;) {
		while ((ret = text_next(m, &m->find, &v)) > 0) {
			if (v.end <= vma->start)
				continue;
			if (v.start != vma->start || v.end != vma->end ||
			    v.inode != vma->inode || v.dev_major != vma->dev_major ||
			    v.dev_minor != vma->dev_minor || v.offset != vma->offset)
				break;
			/* What the text says of the VMA, and the build ID the ioctl found. */
			v.build_id = vma->build_id;
			v.build_id_len = vma->build_id_len;
			*vma = v;
			return 0;
		}
		if (ret < 0 || !again)
			break;
		again = false;
		cursor_reset(&m->find);
	}
	return ret < 0 ? ret : -ENAMETOOLONG;
}

static uint64_t find_query_flags(unsigned int flags)
{
	return (flags & MMEXT_FIND_NEXT ? PROCMAP_QUERY_COVERING_OR_NEXT_VMA : 0) |
	       (flags & MMEXT_FIND_FILE ? PROCMAP_QUERY_FILE_BACKED_VMA : 0);
}

/* What a PROCMAP_QUERY answer says of a VMA but its name and build ID. */
static void vma_from_query(const struct procmap_query *q, struct mmext_vma *vma)
{
	memset(vma, 0, sizeof(*vma));
	vma->start = q->vma_start;
	vma->end = q->vma_end;
	vma->offset = q->vma_offset;
	vma->inode = q->inode;
	vma->dev_major = q->dev_major;
	vma->dev_minor = q->dev_minor;
	vma->prot = q->vma_flags & (MMEXT_VMA_READ | MMEXT_VMA_WRITE | MMEXT_VMA_EXEC |
				    MMEXT_VMA_SHARED);
}

static int ioctl_query(struct mmext_maps *m, uint64_t addr, uint64_t qflags, bool build_id,
		       enum query_name name, struct mmext_vma *vma)
{
	struct procmap_query q;
	int ret;

	if (name != QUERY_NO_NAME && !m->name) {
		m->name_cap = 256;
		m->name = malloc(m->name_cap);
		if (!m->name)
			return -ENOMEM;
	}
	for (;;) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = qflags;
		q.query_addr = addr;
		if (name != QUERY_NO_NAME) {
			q.vma_name_addr = (uintptr_t)m->name;
			q.vma_name_size = m->name_cap;
		}
		if (build_id) {
			q.build_id_addr = (uintptr_t)m->build_id;
			q.build_id_size = sizeof(m->build_id);
		}
		if (!ioctl(m->fd, PROCMAP_QUERY, &q))
			break;
		ret = -errno;
		if (ret != -ENAMETOOLONG || name == QUERY_NO_NAME)
			return ret;
		if (m->name_cap >= NAME_CAP_MAX) {
			if (name != QUERY_NAME_OR_TEXT && name != QUERY_NAME_OR_LISTED)
				return ret;
			ret = ioctl_query(m, addr, qflags, build_id, QUERY_NO_NAME, vma);
			return ret ? ret : text_name_of(m, vma, name == QUERY_NAME_OR_LISTED);
		}
		free(m->name);
		m->name_cap *= 4;
		m->name = malloc(m->name_cap);
		if (!m->name) {
			m->name_cap = 0;
			return -ENOMEM;
		}
	}
	vma_from_query(&q, vma);
	if (name == QUERY_NO_NAME) {
		vma->name = "";
	} else {
		if (!q.vma_name_size)
			m->name[0] = '\0';
		vma->name = m->name;
		vma->name_len = strlen(m->name);
	}
	mmext__vma_classify(vma);
	if (name != QUERY_NO_NAME)
		m->name[vma->name_len] = '\0';
	if (build_id && q.build_id_size) {
		vma->build_id = m->build_id;
		vma->build_id_len = q.build_id_size;
	}
	return 0;
}

MMEXT_API int mmext_maps_open(pid_t pid, const struct mmext_maps_opts *opts,
			      struct mmext_maps **out)
{
	uint32_t backend = MMEXT__OPT(opts, backend, MMEXT_MAPS_AUTO);
	uint32_t flags = MMEXT__OPT(opts, flags, 0);
	struct mmext_maps *m;
	int ret;

	ret = mmext__opts_check(opts, MMEXT__OPTS_END(mmext_maps_opts, flags));
	if (ret)
		return ret;
	if (!out)
		return -EFAULT;
	/* MMEXT_MAPS_PREFETCH is accepted and ignored: the library starts no thread. */
	if (pid < 0 || backend > MMEXT_MAPS_IOCTL || flags & ~(MMEXT_MAPS_BUILD_ID | MMEXT_MAPS_PREFETCH))
		return -EINVAL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->owner = mmext__process_gen();
	m->flags = flags;
	m->iter.fd = m->find.fd = m->fd = -1;
	/*
	 * The process is its /proc directory from now on: once it is reaped, files opened
	 * relative to it fail, where a number could name whoever got the pid next. /proc/self
	 * resolves to the opener's directory, so a fork child's calls cannot read itself.
	 */
	m->dir = mmext__open_proc(pid, "", O_RDONLY | O_DIRECTORY | O_PATH);
	if (m->dir < 0) {
		ret = m->dir;
		free(m);
		return ret;
	}
	/* Open now so that a bad pid or a permission problem shows here. */
	m->fd = open_in(m, "maps");
	if (m->fd < 0) {
		ret = m->fd;
		goto fail;
	}
	/* AUTO reads the text where the probe cannot run; IOCTL says why it cannot. */
	ret = mmext__need(MMEXT_FEAT_PROCMAP_QUERY);
	m->have_ioctl = !ret;
	if (backend == MMEXT_MAPS_IOCTL && ret)
		goto fail;
	if (mm_gone(m)) {
		ret = -ESRCH;
		goto fail;
	}
	m->find_backend = backend == MMEXT_MAPS_TEXT || !m->have_ioctl ? MMEXT_MAPS_TEXT
								   : MMEXT_MAPS_IOCTL;
	m->list_backend = backend == MMEXT_MAPS_IOCTL ? MMEXT_MAPS_IOCTL : MMEXT_MAPS_TEXT;
	/* The listing's first cursor reuses the fd opened above. */
	m->iter.fd = m->fd;
	*out = m;
	return 0;
fail:
	if (m->fd >= 0)
		close(m->fd);
	close(m->dir);
	free(m);
	return ret;
}

int mmext__maps_open_self_extents(struct mmext_maps **out)
{
	int ret = mmext_maps_open(0, NULL, out);

	if (!ret)
		(*out)->no_names = true;
	return ret;
}

/*
 * A maps fd of this process kept open for mmext__self_find(), so that a lookup is one
 * query, not two opens, a probe and two closes. The lock is held only to check or
 * replace it: a fork() child's is its parent's (another mm), closed and replaced; one
 * that a program closed under the library (closefrom()) is told by fstat() and dropped
 * unclosed, as its number may be another file's by now. The fd holds the mm, so it
 * still answers once the thread that opened it has exited.
 */
static struct {
	int lock;		/* mmext__lock() */
	int fd;			/* -1: none */
	unsigned long owner;	/* mmext__process_gen() of the process that opened it */
	dev_t dev;
	ino_t ino;
} self_q = { .fd = -1 };

static bool self_q_ours(void)
{
	struct stat st;

	return !fstat(self_q.fd, &st) && st.st_dev == self_q.dev && st.st_ino == self_q.ino;
}

/* The kept fd, or -errno (also where PROCMAP_QUERY is missing). */
static int self_query_fd(void)
{
	unsigned long me = mmext__process_gen();
	struct stat st;
	int fd;

	/* Taken over from a thread that did not come along: fd may be half set. */
	if (mmext__lock(&self_q.lock))
		self_q.fd = -1;
	if (self_q.fd >= 0) {
		bool ours = self_q_ours();

		if (ours && self_q.owner != me)
			close(self_q.fd);
		if (!ours || self_q.owner != me)
			self_q.fd = -1;
	}
	fd = self_q.fd;
	if (fd < 0) {
		fd = mmext__need(MMEXT_FEAT_PROCMAP_QUERY);
		if (!fd)
			fd = mmext__open_proc(0, "maps", O_RDONLY);
		if (fd >= 0 && fstat(fd, &st)) {
			int err = -errno;

			close(fd);
			fd = err;
		}
		if (fd >= 0) {
			self_q.fd = fd;
			self_q.owner = me;
			self_q.dev = st.st_dev;
			self_q.ino = st.st_ino;
		}
	}
	mmext__unlock(&self_q.lock);
	return fd;
}

int mmext__self_find(struct mmext_maps **m, uint64_t addr, unsigned int flags,
		     struct mmext_vma *vma)
{
	struct procmap_query q = {
		.size = sizeof(q),
		.query_flags = find_query_flags(flags),
		.query_addr = addr,
	};
	int fd = self_query_fd(), ret;

	if (fd >= 0 && !ioctl(fd, PROCMAP_QUERY, &q)) {
		vma_from_query(&q, vma);
		vma->name = "";
		mmext__vma_classify(vma);
		return 0;
	}
	if (!*m) {
		ret = mmext__maps_open_self_extents(m);
		if (ret)
			return ret;
	}
	return mmext_maps_find(*m, addr, flags, vma);
}

MMEXT_API void mmext_maps_close(struct mmext_maps *m)
{
	if (!m)
		return;
	if (m->find.fd >= 0)
		close(m->find.fd);
	close(m->fd);
	close(m->dir);
	free(m->iter.buf);
	free(m->find.buf);
	free(m->name);
	free(m);
}

MMEXT_API int mmext_maps_backend(const struct mmext_maps *m)
{
	if (!m)
		return -EINVAL;
	return m->owner == mmext__process_gen() ? m->find_backend : -ECHILD;
}

/* Text listing with build IDs: one ioctl per file-backed VMA, where available. */
static void add_build_id(struct mmext_maps *m, struct mmext_vma *vma)
{
	struct mmext_vma tmp;

	if (!(m->flags & MMEXT_MAPS_BUILD_ID) || !m->have_ioctl || vma->kind != MMEXT_VMA_FILE)
		return;
	/* vma->name lives in the text buffer, so the lookup cannot clobber it. */
	if (!ioctl_query(m, vma->start, 0, true, QUERY_NO_NAME, &tmp) && tmp.start == vma->start &&
	    tmp.build_id_len) {
		vma->build_id = m->build_id;
		vma->build_id_len = tmp.build_id_len;
	}
}

/*
 * PROCMAP_QUERY walks the mm's VMA tree; the [vsyscall] page of x86_64 is a gate area
 * outside it, above every VMA, that only the text shows. Where the ioctl finds nothing,
 * the gate may still be there: looked up in the text once per handle. 0 and *vma for a
 * gate at or (with MMEXT_FIND_NEXT) above addr, -ENOENT, or -errno.
 */
static int find_gate(struct mmext_maps *m, uint64_t addr, unsigned int flags,
		     struct mmext_vma *vma)
{
	struct mmext_vma v;
	bool any = false;
	int ret;

	if (!m->gate) {
		cursor_reset(&m->find);
		while ((ret = text_next(m, &m->find, &v)) > 0)
			any = true;
		if (ret < 0)
			return ret;
		/* v still holds the last line: the gate comes last. */
		m->gate = 1;
		if (any && v.kind == MMEXT_VMA_VSYSCALL) {
			m->gate = 2;
			m->gate_start = v.start;
			m->gate_end = v.end;
			m->gate_prot = v.prot;
		}
	}
	if (m->gate != 2 || flags & MMEXT_FIND_FILE || m->gate_end <= addr ||
	    (m->gate_start > addr && !(flags & MMEXT_FIND_NEXT)))
		return -ENOENT;
	memset(vma, 0, sizeof(*vma));
	vma->start = m->gate_start;
	vma->end = m->gate_end;
	vma->prot = m->gate_prot;
	vma->name = "[vsyscall]";
	vma->name_len = strlen(vma->name);
	mmext__vma_classify(vma);
	return 0;
}

/*
 * mmext_maps_find() from the text; 1 when the address space read is gone (the text
 * holds no VMA at all, or PROCMAP_QUERY says so).
 */
static int find_text(struct mmext_maps *m, uint64_t addr, unsigned int flags,
		     struct mmext_vma *vma)
{
	struct mmext_vma v;
	bool any = false;
	int ret;

	cursor_reset(&m->find);
	while ((ret = text_next(m, &m->find, &v)) > 0) {
		any = true;
		if (v.end <= addr)
			continue;
		/* As PROCMAP_QUERY has it: named shared anonymous memory is shmem, a file. */
		if (flags & MMEXT_FIND_FILE && v.kind != MMEXT_VMA_FILE &&
		    v.kind != MMEXT_VMA_ANON_SHMEM_NAMED)
			continue;
		if (v.start > addr && !(flags & MMEXT_FIND_NEXT))
			return -ENOENT;
		add_build_id(m, &v);
		*vma = v;
		return 0;
	}
	if (ret < 0)
		return ret;
	return !any || mm_gone(m) ? 1 : -ENOENT;
}

MMEXT_API int mmext_maps_find(struct mmext_maps *m, uint64_t addr, unsigned int flags,
			      struct mmext_vma *vma)
{
	int ret;

	if (!m || !vma)
		return -EFAULT;
	if (m->owner != mmext__process_gen())
		return -ECHILD;
	if (flags & ~(MMEXT_FIND_NEXT | MMEXT_FIND_FILE))
		return -EINVAL;
	if (m->find_backend == MMEXT_MAPS_IOCTL) {
		enum query_name name = m->no_names ? QUERY_NO_NAME : QUERY_NAME_OR_TEXT;
		uint64_t q = find_query_flags(flags);

		ret = ioctl_query(m, addr, q, m->flags & MMEXT_MAPS_BUILD_ID, name, vma);
		if (ret == -ESRCH && !reopen(m))
			ret = ioctl_query(m, addr, q, m->flags & MMEXT_MAPS_BUILD_ID, name, vma);
		return ret == -ENOENT ? find_gate(m, addr, flags, vma) : ret;
	}
	ret = find_text(m, addr, flags, vma);
	/* The address space read is gone: the process may have another. */
	if (ret == 1 && !reopen(m))
		ret = find_text(m, addr, flags, vma);
	return ret == 1 ? -ESRCH : ret;
}

MMEXT_API int mmext_maps_next(struct mmext_maps *m, struct mmext_vma *vma)
{
	int ret;

	if (!m || !vma)
		return -EFAULT;
	if (m->owner != mmext__process_gen())
		return -ECHILD;
	if (m->iter_gone)
		return -ESRCH;
	if (m->list_backend == MMEXT_MAPS_TEXT) {
		ret = text_next(m, &m->iter, vma);
		/* No VMA at all: the address space read is gone, the process may have another. */
		if (!ret && !m->iter_started && !reopen(m))
			ret = text_next(m, &m->iter, vma);
		if (ret > 0) {
			m->iter_started = true;
			add_build_id(m, vma);
		}
		/* The text of an address space that went away ends early but cleanly. */
		if (!ret && mm_gone(m))
			return -ESRCH;
		return ret;
	}
	if (m->iter_done)
		return 0;
	ret = ioctl_query(m, m->iter_addr, PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
			  m->flags & MMEXT_MAPS_BUILD_ID, QUERY_NAME_OR_LISTED, vma);
	if (ret == -ESRCH && !m->iter_addr && !reopen(m))
		ret = ioctl_query(m, 0, PROCMAP_QUERY_COVERING_OR_NEXT_VMA,
				  m->flags & MMEXT_MAPS_BUILD_ID, QUERY_NAME_OR_LISTED, vma);
	if (ret == -ENOENT)
		ret = find_gate(m, m->iter_addr, MMEXT_FIND_NEXT, vma);
	if (ret == -ENOENT) {
		m->iter_done = true;
		return 0;
	}
	if (ret)
		return ret;
	m->iter_addr = vma->end;
	/* The last VMA may end at the top of the address space. */
	if (!vma->end)
		m->iter_done = true;
	return 1;
}

/* The caller's struct when it is at least ours, else a copy of ours to cut short. */
#define VMA_TARGET(vma, size, tmp)	((size) >= sizeof(tmp) ? (vma) : &(tmp))

MMEXT_API int mmext_maps_find_sz(struct mmext_maps *m, uint64_t addr, unsigned int flags,
				 struct mmext_vma *vma, size_t size)
{
	struct mmext_vma tmp;
	int ret;

	if (!vma)
		return -EFAULT;
	if (!mmext__vma_size_ok(size))
		return -EINVAL;
	ret = mmext_maps_find(m, addr, flags, VMA_TARGET(vma, size, tmp));
	if (!ret)
		mmext__vma_out(vma, VMA_TARGET(vma, size, tmp), size);
	return ret;
}

MMEXT_API int mmext_maps_next_sz(struct mmext_maps *m, struct mmext_vma *vma, size_t size)
{
	struct mmext_vma tmp;
	int ret;

	if (!vma)
		return -EFAULT;
	if (!mmext__vma_size_ok(size))
		return -EINVAL;
	ret = mmext_maps_next(m, VMA_TARGET(vma, size, tmp));
	if (ret > 0)
		mmext__vma_out(vma, VMA_TARGET(vma, size, tmp), size);
	return ret;
}

MMEXT_API void mmext_maps_rewind(struct mmext_maps *m)
{
	if (!m || m->owner != mmext__process_gen())
		return;
	cursor_reset(&m->iter);
	m->iter_addr = 0;
	m->iter_done = false;
	m->iter_started = m->iter_gone = false;
}
