/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * VMA queries (the library side of lockless maps): find the VMA at or after an
 * address, or list every VMA of a process, from PROCMAP_QUERY (Linux 6.11) or the
 * text of /proc/PID/maps.
 *
 * The automatic choice follows measurements: the ioctl is several times faster for
 * a point lookup, the text file about twice as fast for a full listing. So
 * mmext_maps_find() uses the ioctl when the kernel has it and mmext_maps_next()
 * reads the text; either can be forced per handle.
 *
 * A handle is not thread-safe: use one per thread. Results point into the handle
 * and stay valid until the next call on it. Reading another process's maps needs
 * the same permission as opening /proc/PID/maps (PTRACE_MODE_READ): -EACCES or
 * -EPERM otherwise, -ESRCH when there is no such process or it has no address
 * space (kernel threads, zombies, an exit or exec while being read: the text then
 * just ends early, so reaching its end checks). No signals are used.
 * A handle belongs to the process that opened it (pid 0 means that process, not
 * whoever calls later): in another process every call fails with -ECHILD, and
 * mmext_maps_close() only frees the handle there.
 *
 * A handle holds the process's /proc directory, not its number: once the process is
 * reaped every call fails with -ESRCH, whoever has its pid by then. After the process
 * executes a program, a lookup, and a listing from its start, read the new program's
 * maps; a listing under way then fails with -ESRCH until mmext_maps_rewind().
 *
 * Like the file itself, a listing of a process that changes meanwhile may show a
 * VMA twice or show a state between two changes; it never invents a VMA. Both
 * backends give the same VMAs and names: the [vsyscall] gate, which PROCMAP_QUERY
 * does not see, comes from the text. The text shows a newline in a path as \012 and
 * a backslash as itself, so a name with "\012" in it is looked up exactly
 * (PROCMAP_QUERY, else /proc/PID/map_files, which needs CAP_CHECKPOINT_RESTORE);
 * where neither can be had, each \012 is taken for a newline.
 */
#ifndef MMEXT_VMA_H
#define MMEXT_VMA_H

#include <mmext/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* mmext_vma.prot: same values as PROCMAP_QUERY_VMA_*. */
#define MMEXT_VMA_READ		0x1
#define MMEXT_VMA_WRITE		0x2
#define MMEXT_VMA_EXEC		0x4
#define MMEXT_VMA_SHARED	0x8

enum mmext_vma_kind {
	MMEXT_VMA_ANON = 0,		/* no name */
	MMEXT_VMA_FILE,			/* name is a path (inode != 0 or starts with '/') */
	MMEXT_VMA_ANON_NAMED,		/* [anon:NAME] */
	MMEXT_VMA_ANON_SHMEM_NAMED,	/* [anon_shmem:NAME] */
	MMEXT_VMA_HEAP,			/* [heap] */
	MMEXT_VMA_STACK,		/* [stack] (or the old [stack:TID]) */
	MMEXT_VMA_VDSO,			/* [vdso] */
	MMEXT_VMA_VVAR,			/* [vvar], [vvar_vclock] */
	MMEXT_VMA_VSYSCALL,		/* [vsyscall] */
	MMEXT_VMA_SPECIAL,		/* any other [...] name */
};

/* mmext_vma.flags */
#define MMEXT_VMA_DELETED	0x1	/* path ended in " (deleted)", removed from name */

/*
 * May grow at the end in later versions: the *_sz() functions below say how large the
 * caller's struct is, the others fill the struct of libmmext 0.3 (this one).
 */
struct mmext_vma {
	uint64_t start;			/* first byte */
	uint64_t end;			/* one past the last byte */
	uint64_t offset;		/* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t prot;			/* MMEXT_VMA_* */
	uint32_t kind;			/* enum mmext_vma_kind */
	uint32_t flags;			/* MMEXT_VMA_DELETED */
	uint32_t name_len;		/* bytes in name, without NUL */
	/*
	 * As the kernel shows it ("" when none); a trailing " (deleted)" is removed and
	 * reported in flags. NUL-terminated except from mmext_maps_parse_line().
	 */
	const char *name;
	const char *anon_name;		/* NAME inside [anon:NAME]/[anon_shmem:NAME], or NULL */
	uint32_t anon_name_len;
	uint32_t build_id_len;		/* 0 when unknown or none */
	const unsigned char *build_id;	/* GNU build ID of a file-backed ELF VMA */
	uint64_t reserved[4];
};

enum mmext_maps_backend {
	MMEXT_MAPS_AUTO = 0,	/* ioctl for lookups, text for listing */
	MMEXT_MAPS_TEXT = 1,	/* parse /proc/PID/maps for everything */
	MMEXT_MAPS_IOCTL = 2,	/* PROCMAP_QUERY for everything; -EOPNOTSUPP without it */
};

/* mmext_maps_opts.flags */
#define MMEXT_MAPS_BUILD_ID	0x1	/* also fetch build IDs (needs PROCMAP_QUERY) */
/* Accepted and ignored: the library starts no thread, listings read in the caller's. */
#define MMEXT_MAPS_PREFETCH	0x2

struct mmext_maps_opts {
	size_t sz;
	uint32_t backend;	/* enum mmext_maps_backend */
	uint32_t flags;		/* MMEXT_MAPS_* */
};

struct mmext_maps;

/*
 * Open the maps of pid (0 = the calling process), a pid of the caller's pid namespace
 * even where /proc was mounted for another one. Returns 0 and *out, or -errno:
 * -ESRCH no such process (or one that such a /proc cannot show), -EACCES/-EPERM not allowed, -EINVAL bad pid/flags/backend,
 * -E2BIG unknown nonzero options, -EOPNOTSUPP IOCTL forced on a kernel without it
 * (or the probe's reason when it could not run: -EMFILE with no fd left for it),
 * -ENOMEM.
 */
MMEXT_API int mmext_maps_open(pid_t pid, const struct mmext_maps_opts *opts,
			      struct mmext_maps **out);

/* Release a handle; NULL is allowed. */
MMEXT_API void mmext_maps_close(struct mmext_maps *m);

/*
 * The backend the handle uses for lookups (MMEXT_MAPS_TEXT or MMEXT_MAPS_IOCTL),
 * -EINVAL for NULL, -ECHILD in another process.
 */
MMEXT_API int mmext_maps_backend(const struct mmext_maps *m);

/* mmext_maps_find() flags */
#define MMEXT_FIND_NEXT		0x1	/* the VMA containing addr, else the next one */
/* Consider file-backed VMAs only: kind MMEXT_VMA_FILE or MMEXT_VMA_ANON_SHMEM_NAMED. */
#define MMEXT_FIND_FILE		0x2

/*
 * Find the VMA containing addr (or with MMEXT_FIND_NEXT the first one above it).
 * Returns 0 and fills *vma, -ENOENT when there is none, -EINVAL for unknown flags,
 * -ESRCH when the process has exited, -ECHILD in another process than the opener,
 * or another -errno.
 */
MMEXT_API int mmext_maps_find(struct mmext_maps *m, uint64_t addr, unsigned int flags,
			      struct mmext_vma *vma);

/*
 * Iterate: the first call returns the lowest VMA, each next call the following one.
 * Returns 1 with *vma filled, 0 at the end, or -errno.
 */
MMEXT_API int mmext_maps_next(struct mmext_maps *m, struct mmext_vma *vma);

/*
 * mmext_maps_find(), mmext_maps_next() and mmext_maps_parse_line() for a struct of
 * size bytes (pass sizeof(*vma)): the library writes no more than size bytes, and
 * sets to zero the fields it does not know. -EINVAL also for a size smaller than
 * libmmext 0.3's struct or larger than MMEXT_OPTS_MAX.
 */
MMEXT_API int mmext_maps_find_sz(struct mmext_maps *m, uint64_t addr, unsigned int flags,
				 struct mmext_vma *vma, size_t size);
MMEXT_API int mmext_maps_next_sz(struct mmext_maps *m, struct mmext_vma *vma, size_t size);
MMEXT_API int mmext_maps_parse_line_sz(const char *line, size_t len, struct mmext_vma *vma,
				       size_t size);

/* Restart the iteration (and re-read the maps on the next call). */
MMEXT_API void mmext_maps_rewind(struct mmext_maps *m);

/*
 * Parse one line of /proc/PID/maps (len bytes, with or without the newline) into
 * *vma, whose name and anon_name then point into line and are not NUL-terminated;
 * the name is as the line has it (a \012 stays four bytes).
 * Pure: no allocation, no system calls. Returns 0 or -EINVAL for a malformed line.
 */
MMEXT_API int mmext_maps_parse_line(const char *line, size_t len, struct mmext_vma *vma);

#ifdef __cplusplus
}
#endif

#endif /* MMEXT_VMA_H */
