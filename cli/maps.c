// SPDX-License-Identifier: GPL-2.0
/*
 * mmext maps: the VMAs of a process like pmap, or grouped by name like Android's
 * showmap. RSS/PSS come from /proc/PID/smaps, which walks page tables and stalls big
 * processes, so they are opt-in; without them only the maps text is read.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: mmext maps [OPTIONS] PID...\n"
	"List the VMAs of each process PID (a number, or 'self' for mmext itself) after\n"
	"a line 'PID: COMMAND LINE': address range, size in KiB, permissions and name,\n"
	"like pmap(1); names as /proc/PID/maps shows them (a newline as \\012). Options\n"
	"may come before, between or after the PIDs; after '--' all are PIDs.\n"
	"  -r, --rss        add, in KiB from /proc/PID/smaps, as pmap -X: RSS, PSS,\n"
	"                   shared and private clean and dirty, swap, swap PSS and\n"
	"                   transparent huge pages; then USS as smem has it (Private_Clean\n"
	"                   + Private_Dirty: memory no other process maps). This walks\n"
	"                   the page tables and can stall a large process: opt-in. smaps\n"
	"                   rounds PSS down per VMA, so the PSS totals may be below\n"
	"                   --rollup's by < 1 KiB per VMA\n"
	"  -R, --rollup     only the totals of --rss, from /proc/PID/smaps_rollup, with\n"
	"                   the size and the VMA count of the maps listing\n"
	"  -g, --group      one line per name with a count of VMAs, like showmap;\n"
	"                   largest first (by PSS with --rss, else by size)\n"
	"  -j, --json       one JSON object (with several PIDs: {\"processes\":[...]}, an\n"
	"                   error object for each that failed); numbers are numbers,\n"
	"                   sizes are in bytes\n"
	"  -b, --backend B  auto (default), text (parse /proc/PID/maps) or ioctl\n"
	"                   (PROCMAP_QUERY, Linux 6.11+)\n"
	"  -h, --help       this text\n"
	"Exit status: 0 ok, 1 no such process / permission denied / read error (for any\n"
	"PID: the others are still listed), 2 usage.\n";

/* The smaps fields of --rss, in pmap -X's order. */
static const struct field {
	const char *key;	/* as smaps starts the line */
	const char *json;
	const char *head;
} fields[] = {
	{ "Rss:", "rss", "RSS" },
	{ "Pss:", "pss", "PSS" },
	{ "Shared_Clean:", "shared_clean", "SH_CLEAN" },
	{ "Shared_Dirty:", "shared_dirty", "SH_DIRTY" },
	{ "Private_Clean:", "private_clean", "PR_CLEAN" },
	{ "Private_Dirty:", "private_dirty", "PR_DIRTY" },
	{ "Swap:", "swap", "SWAP" },
	{ "SwapPss:", "swap_pss", "SWAPPSS" },
	{ "AnonHugePages:", "anon_huge", "ANONHUGE" },
	/* smem's USS, memory no other process maps: Private_Clean + Private_Dirty. */
	{ NULL, "uss", "USS" },
};
#define NFIELDS		(sizeof(fields) / sizeof(fields[0]))
#define F_PSS		1
#define F_PR_CLEAN	4
#define F_PR_DIRTY	5
#define F_USS		(NFIELDS - 1)

struct row {
	struct mmext_vma v;	/* v.name points to name below */
	char *name;
	uint64_t u[NFIELDS];	/* bytes */
	unsigned long count;	/* VMAs in a group */
};

/* Text rows collect here and go to stdout in big writes: see put_row_text(). */
#define OUT_CAP		(256 * 1024)
#define ROW_MAX		160	/* a row without its name */

struct maps_state {
	int rss, rollup, group, json;
	pid_t pid;
	int dir;		/* /proc/PID: the report's files are opened relative to it */
	unsigned long nvmas;
	struct row total;
	struct row *rows;	/* --group only */
	size_t nrows, cap;
	char *out;		/* OUT_CAP bytes of text rows not yet on stdout */
	size_t outlen;
	FILE *f;		/* stdout, or for JSON the whole document until it is done */
};

static void out_flush(struct maps_state *s)
{
	if (s->outlen)
		fwrite_unlocked(s->out, 1, s->outlen, s->f);
	s->outlen = 0;
}

/* The 8 hex digits of x as ASCII, the most significant in the lowest byte. */
static inline uint64_t hex8_ascii(uint32_t x)
{
	uint64_t v = x, letters;

	/* Spread the nibbles one per byte, least significant first. */
	v = (v | v << 16) & 0x0000ffff0000ffffULL;
	v = (v | v << 8) & 0x00ff00ff00ff00ffULL;
	v = (v | v << 4) & 0x0f0f0f0f0f0f0f0fULL;
	letters = (v + 0x0606060606060606ULL) >> 4 & 0x0101010101010101ULL;
	v += 0x3030303030303030ULL + letters * ('a' - '0' - 10);
	return __builtin_bswap64(v);
}

/*
 * Hex, at least min digits (8 to 16). Eight digits per word on little-endian
 * machines: a loop per digit would be the largest share of formatting a row. Stores
 * up to 16 bytes at p, returns the end of the digits.
 */
static inline char *put_hex(char *p, uint64_t v, int min)
{
	int n = (64 - __builtin_clzll(v | 1) + 3) / 4, i;

	if (n < min)
		n = min;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (min >= 8) {
		uint64_t lo = hex8_ascii(v), hi = hex8_ascii(v >> 32);

		if (n > 8) {
			hi >>= 8 * (16 - n);	/* drop leading zero digits */
			memcpy(p, &hi, 8);
		}
		memcpy(p + n - 8, &lo, 8);
		return p + n;
	}
#endif
	for (i = n - 1; i >= 0; i--, v >>= 4)
		p[i] = "0123456789abcdef"[v & 15];
	return p + n;
}

/*
 * One space, then v right-aligned in width (at most 15) columns. Spaces are stored
 * 16 at once and digits written from the right: no memset/memcpy calls per field.
 */
static char *put_dec(char *p, uint64_t v, int width)
{
	uint64_t t = v;
	int n = 1;
	char *end;

	while (t >= 10) {
		t /= 10;
		n++;
	}
	memcpy(p, "                ", 16);
	end = p + 1 + (n > width ? n : width);
	p = end;
	do {
		*--p = '0' + v % 10;
		v /= 10;
	} while (v);
	return end;
}

/* The name as /proc/PID/maps shows it (cli_put_vma_name()): a newline as \012. */
static char *put_name(char *p, const char *name, size_t len)
{
	const char *nl;

	while ((nl = memchr(name, '\n', len))) {
		memcpy(p, name, nl - name);
		p += nl - name;
		memcpy(p, "\\012", 4);
		p += 4;
		len -= nl - name + 1;
		name = nl + 1;
	}
	memcpy(p, name, len);
	return p + len;
}

/*
 * One row, v's fields with usage u (--rss) and count (--group). Formatted by hand into
 * s->out: at 60k VMAs printf's parsing of the format string, then stdio's per-call
 * costs, would be most of the command's own time.
 */
static void put_row_text(struct maps_state *s, const struct mmext_vma *v, const uint64_t *u,
			 unsigned long count)
{
	/* Escaping makes a name up to 4 times longer; huge names go through stdio. */
	int big = v->name_len > (OUT_CAP - ROW_MAX - 16) / 4;
	char *p, *start;

	if (big || OUT_CAP - s->outlen < ROW_MAX + 16 + 4 * (size_t)v->name_len)
		out_flush(s);
	p = start = s->out + s->outlen;
	if (!s->group) {
		p = put_hex(p, v->start, 8);
		*p++ = '-';
		p = put_hex(p, v->end, 8);
		while (p - start < 25)
			*p++ = ' ';
		p = put_dec(p, (v->end - v->start) >> 10, 9);
	} else {
		p = put_dec(p, (v->end - v->start) >> 10, 8);
	}
	if (s->rss) {
		size_t i;

		for (i = 0; i < NFIELDS; i++)
			p = put_dec(p, u[i] >> 10, 8);
	}
	if (s->group) {
		p = put_dec(p, count, 6);
	} else {
		*p++ = ' ';
		cli_perms(v, p);	/* its NUL is overwritten next */
		p += 4;
	}
	*p++ = ' ';
	if (!v->name_len) {
		memcpy(p, "[anon]", 6);
		p += 6;
	} else if (big) {
		fwrite_unlocked(start, 1, p - start, s->f);
		cli_put_vma_name(s->f, v->name, v->name_len);
		p = start;
	} else {
		p = put_name(p, v->name, v->name_len);
	}
	if (v->flags & MMEXT_VMA_DELETED) {
		memcpy(p, " (deleted)", 10);
		p += 10;
	}
	*p++ = '\n';
	s->outlen = p - s->out;
}

static void put_rss_json(const struct maps_state *s, const uint64_t *u)
{
	size_t i;

	if (s->rss)
		for (i = 0; i < NFIELDS; i++)
			fprintf(s->f, ",\"%s\":%" PRIu64, fields[i].json, u[i]);
}

static void put_rss_head(void)
{
	size_t i;

	for (i = 0; i < NFIELDS; i++)
		printf(" %8s", fields[i].head);
}

/* u: the VMA's usage, NULL without --rss. */
static int add_row(struct maps_state *s, const struct mmext_vma *v, const uint64_t *u)
{
	static const uint64_t none[NFIELDS];
	uint64_t size = v->end - v->start;
	size_t i;

	if (u)
		for (i = 0; i < NFIELDS; i++)
			s->total.u[i] += u[i];
	else
		u = none;
	if (s->rollup) {
		/* smaps_rollup's pseudo-VMA has the usage, the maps listing the VMAs. */
		if (u == none) {
			s->nvmas++;
			s->total.v.end += size;
		}
		return 0;
	}
	s->nvmas++;
	s->total.v.end += size;
	if (!s->group) {
		if (s->json) {
			fputs(s->nvmas > 1 ? ",{" : "{", s->f);
			cli_put_json_vma(s->f, v);
			put_rss_json(s, u);
			fputc('}', s->f);
		} else {
			put_row_text(s, v, u, 0);
		}
		return 0;
	}
	if (s->nrows == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct row *n = realloc(s->rows, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->rows = n;
		s->cap = cap;
	}
	/* The name must outlive the library's buffer; grouping merges after sorting. */
	s->rows[s->nrows] = (struct row){ .count = 1 };
	memcpy(s->rows[s->nrows].u, u, sizeof(s->rows[s->nrows].u));
	s->rows[s->nrows].name = strndup(v->name, v->name_len);
	if (!s->rows[s->nrows].name)
		return -ENOMEM;
	s->rows[s->nrows].v.end = size;
	s->rows[s->nrows].v.name_len = v->name_len;
	s->nrows++;
	return 0;
}

static int by_name(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return strcmp(x->name, y->name);
}

static int sort_by_pss;

static int by_size(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	uint64_t kx = sort_by_pss ? x->u[F_PSS] : x->v.end;
	uint64_t ky = sort_by_pss ? y->u[F_PSS] : y->v.end;

	if (kx != ky)
		return kx < ky ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void put_groups(struct maps_state *s)
{
	size_t i, n = 0;

	qsort(s->rows, s->nrows, sizeof(*s->rows), by_name);
	for (i = 0; i < s->nrows; i++) {
		struct row *r = &s->rows[i];

		if (n && !strcmp(s->rows[n - 1].name, r->name)) {
			struct row *g = &s->rows[n - 1];

			size_t k;

			g->v.end += r->v.end;
			for (k = 0; k < NFIELDS; k++)
				g->u[k] += r->u[k];
			g->count++;
			free(r->name);
		} else {
			s->rows[n++] = *r;
		}
	}
	s->nrows = n;
	sort_by_pss = s->rss;
	qsort(s->rows, n, sizeof(*s->rows), by_size);
	for (i = 0; i < n; i++) {
		struct row *r = &s->rows[i];

		r->v.name = r->name;
		if (s->json) {
			fputs(i ? ",{" : "{", s->f);
			cli_put_json_name(s->f, "name", r->name, r->v.name_len);
			fprintf(s->f, ",\"count\":%lu,\"size\":%" PRIu64, r->count, r->v.end);
			put_rss_json(s, r->u);
			fputc('}', s->f);
		} else {
			put_row_text(s, &r->v, r->u, r->count);
		}
		free(r->name);
	}
}

/* Listing without RSS: the library chooses the fastest source. */
static int list_maps(struct maps_state *s, struct mmext_maps *m)
{
	struct mmext_vma v;
	int ret;

	while ((ret = mmext_maps_next(m, &v)) > 0) {
		ret = add_row(s, &v, NULL);
		if (ret)
			return ret;
	}
	return ret;
}

/*
 * A name the smaps text shows with \012 (a newline, or those four bytes) as the
 * library has it; without an answer from it, \012 is taken for a newline.
 */
static void smaps_name(struct mmext_maps *m, struct mmext_vma *v, char *name)
{
	struct mmext_vma x;
	char *in, *out, *end = name + v->name_len;

	if (v->name_len < 4 || !memmem(name, v->name_len, "\\012", 4))
		return;
	if (!mmext_maps_find(m, v->start, 0, &x) && x.start == v->start && x.end == v->end &&
	    x.name_len <= v->name_len) {
		memcpy(name, x.name, x.name_len);
		v->name_len = x.name_len;
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
	v->name_len = out - name;
}

/*
 * Listing with RSS: smaps repeats each maps line followed by "Key: N kB" lines, so
 * reading it alone gives VMAs and sizes from one consistent pass. The header lines
 * go through the library's parser. smaps_rollup has the same shape, with one
 * pseudo-VMA.
 */
static int list_smaps(struct maps_state *s, struct mmext_maps *m)
{
	const char *file = s->rollup ? "smaps_rollup" : "smaps";
	char *line = NULL, *name = NULL;
	size_t lcap = 0, ncap = 0, i;
	uint64_t u[NFIELDS] = { 0 };
	struct mmext_vma v, cur;
	int have = 0, ret = 0;
	ssize_t len;
	FILE *f;
	int fd = openat(s->dir, file, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	f = fdopen(fd, "r");
	if (!f) {
		ret = -errno;
		close(fd);
		return ret;
	}
	while ((len = getline(&line, &lcap, f)) > 0) {
		char *colon = strchr(line, ':'), *sp = strchr(line, ' ');
		unsigned long long kb;

		if (colon && (!sp || colon < sp)) {
			/* "Key:   N kB" belonging to the current VMA. */
			if (!have || sscanf(colon + 1, "%llu", &kb) != 1)
				continue;
			for (i = 0; i < NFIELDS; i++)
				if (fields[i].key &&
				    !strncmp(line, fields[i].key, colon + 1 - line) &&
				    !fields[i].key[colon + 1 - line])
					u[i] = kb << 10;
			continue;
		}
		if (mmext_maps_parse_line(line, len, &v)) {
			ret = -EIO;
			break;
		}
		if (have) {
			u[F_USS] = u[F_PR_CLEAN] + u[F_PR_DIRTY];
			ret = add_row(s, &cur, u);
			if (ret)
				break;
		}
		if (v.name_len + 1 > ncap) {
			ncap = v.name_len + 64;
			free(name);
			name = malloc(ncap);
			if (!name) {
				ret = -ENOMEM;
				break;
			}
		}
		memcpy(name, v.name, v.name_len);
		cur = v;
		smaps_name(m, &cur, name);
		name[cur.name_len] = '\0';
		cur.name = name;
		if (v.anon_name)
			cur.anon_name = name + (v.anon_name - v.name);
		memset(u, 0, sizeof(u));
		have = 1;
	}
	if (!ret && ferror(f))
		ret = -errno;
	if (!ret && have) {
		u[F_USS] = u[F_PR_CLEAN] + u[F_PR_DIRTY];
		ret = add_row(s, &cur, u);
	}
	fclose(f);
	free(line);
	free(name);
	return ret;
}

/* -ESRCH when the address space went away during a listing that did not notice. */
static int still_there(struct mmext_maps *m)
{
	struct mmext_vma v;
	int ret = mmext_maps_find(m, 0, MMEXT_FIND_NEXT, &v);

	return ret == -ESRCH ? ret : 0;
}

/* Up to size bytes of the file name in the process's directory: the length, or -errno. */
static ssize_t read_proc(int dir, const char *name, char *buf, size_t size)
{
	ssize_t n, got = 0;
	int fd = openat(dir, name, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((size_t)got < size && ((n = read(fd, buf + got, size - got)) > 0 ||
				      (n < 0 && errno == EINTR)))
		got += n > 0 ? n : 0;
	close(fd);
	return got;
}

/*
 * "PID: COMMAND LINE" as ps shows it: NULs as spaces, [comm] when it has none.
 * 0, or -ESRCH once the process has been reaped.
 */
static int put_cmdline(struct maps_state *s)
{
	char buf[4096];
	ssize_t n = read_proc(s->dir, "cmdline", buf, sizeof(buf)), i;

	if (n < 0)
		return n;
	for (i = 0; i < n; i++)
		if (!buf[i])
			buf[i] = ' ';
	while (n > 0 && buf[n - 1] == ' ')
		n--;
	if (!n) {
		n = read_proc(s->dir, "comm", buf + 1, sizeof(buf) - 2);
		if (n < 0)
			return n;
		if (n > 0 && buf[n] == '\n')
			n--;
		buf[0] = '[';
		buf[n + 1] = ']';
		n += 2;
	}
	if (s->json) {
		cli_put_json_name(s->f, "cmdline", buf, n);
		fputc(',', s->f);
	} else {
		printf("%d: ", s->pid ? (int)s->pid : (int)getpid());
		cli_put_name(stdout, buf, n);
		putchar('\n');
	}
	return 0;
}

/* One process: its listing (or rollup) on s->f. 0 or -errno. */
static int maps_one(struct maps_state *s, const struct mmext_maps_opts *mo)
{
	struct mmext_maps *m;
	size_t i;
	int ret;

	/* Opening checks the pid and the permission before anything is printed. */
	ret = mmext_maps_open(s->pid, mo, &m);
	if (ret)
		return ret;
	if (s->json)
		fprintf(s->f, "{\"pid\":%d,", s->pid ? (int)s->pid : (int)getpid());
	/*
	 * The handle opened the pid by number: s->dir's process still being there after
	 * that means both name one process, as a pid is not given to another before its
	 * process is reaped.
	 */
	ret = put_cmdline(s);
	if (ret) {
		mmext_maps_close(m);
		return ret;
	}
	if (s->json && s->rollup)
		fputs("\"rollup\":{", s->f);
	else if (s->json)
		fprintf(s->f, "\"%s\":[", s->group ? "groups" : "vmas");
	else if (s->rollup)
		printf("%-25s %9s", "", "KB");
	else if (s->group)
		printf("%9s", "KB");
	else
		printf("%-25s %9s", "ADDRESS", "KB");
	if (!s->json) {
		if (s->rss)
			put_rss_head();
		if (!s->rollup)
			printf(s->group ? " %6s NAME\n" : " PERM NAME\n", "COUNT");
		else
			printf(" %6s\n", "VMAS");
	}
	/* A rollup's size and VMA count come from the maps listing, its usage from smaps_rollup. */
	ret = s->rollup ? list_maps(s, m) : 0;
	if (!ret)
		ret = s->rss ? list_smaps(s, m) : list_maps(s, m);
	/* smaps, like maps, just ends early when the address space goes away. */
	if (!ret && s->rss)
		ret = still_there(m);
	mmext_maps_close(m);
	if (!ret && s->group)
		put_groups(s);
	out_flush(s);
	/* put_groups() freed the names it printed. */
	for (i = 0; ret && i < s->nrows; i++)
		free(s->rows[i].name);
	free(s->rows);
	if (ret)
		return ret;
	if (s->json) {
		if (s->rollup) {
			for (i = 0; i < NFIELDS; i++)
				fprintf(s->f, "\"%s\":%" PRIu64 ",", fields[i].json, s->total.u[i]);
			fprintf(s->f, "\"size\":%" PRIu64 ",\"vmas\":%lu}}", s->total.v.end,
				s->nvmas);
			return 0;
		}
		fprintf(s->f, "],\"total\":{\"vmas\":%lu,\"size\":%" PRIu64, s->nvmas,
			s->total.v.end);
		put_rss_json(s, s->total.u);
		fputs("}}", s->f);
		return 0;
	}
	/* Shaped like the rows above it, so columns line up. */
	if (s->rollup)
		printf("%-25s %9" PRIu64, "rollup", s->total.v.end >> 10);
	else if (!s->group)
		printf("%-25s %9" PRIu64, "total", s->total.v.end >> 10);
	else
		printf("%9" PRIu64, s->total.v.end >> 10);
	if (s->rss)
		for (i = 0; i < NFIELDS; i++)
			printf(" %8" PRIu64, s->total.u[i] >> 10);
	if (s->rollup)
		printf(" %6lu\n", s->nvmas);
	else if (s->group)
		printf(" %6lu [total]\n", s->nvmas);
	else
		printf(" %lu VMAs\n", s->nvmas);
	return 0;
}

int cmd_maps(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "rss", no_argument, NULL, 'r' },
		{ "rollup", no_argument, NULL, 'R' },
		{ "group", no_argument, NULL, 'g' },
		{ "json", no_argument, NULL, 'j' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	struct maps_state s = { 0 }, fresh;
	FILE *doc;
	MMEXT_OPTS(mmext_maps_opts, mo);
	static char obuf[1 << 16], out[OUT_CAP];
	int c, i, ret, rc = EXIT_OK, many;
	const char *why;
	pid_t pid;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":rRgjb:h", opts, NULL)) != -1) {
		switch (c) {
		case 'r': s.rss = 1; break;
		case 'R': s.rss = s.rollup = 1; break;
		case 'g': s.group = 1; break;
		case 'j': s.json = 1; break;
		case 'b':
			if (cli_parse_maps_backend(optarg, &mo.backend))
				return cli_usage("maps", "bad backend %s (auto, text, ioctl)",
						 cli_arg(optarg));
			break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_opt("maps", c, argv);
		}
	}
	if (s.rollup && s.group)
		return cli_usage("maps", "--rollup has no groups: it is one total");
	if (optind == argc)
		return cli_usage("maps", "missing PID");
	for (i = optind; i < argc; i++)
		if (cli_parse_pid(argv[i], &pid))
			return cli_usage("maps", "bad PID %s", cli_arg(argv[i]));
	many = argc - optind > 1;

	setvbuf(stdout, obuf, _IOFBF, sizeof(obuf));
	s.out = out;
	s.f = stdout;
	doc = s.json ? cli_doc_open() : NULL;
	if (s.json && !doc)
		return cli_fail("maps", -ENOMEM, "allocating");
	if (many && doc)
		fputs("{\"processes\":[", doc);
	fresh = s;
	for (i = optind; i < argc; i++) {
		char *one = NULL;
		size_t len = 0;

		s = fresh;
		cli_parse_pid(argv[i], &s.pid);
		/* The process, not its number: a pid reused meanwhile names another. */
		s.dir = cli_proc_open(s.pid);
		/* Each process's object is built apart: it goes in whole or not at all. */
		if (s.json)
			s.f = open_memstream(&one, &len);
		ret = s.dir < 0 ? s.dir : s.f ? maps_one(&s, &mo) : -ENOMEM;
		if (s.json && s.f && fclose(s.f) && !ret)
			ret = -errno;
		why = ret ? cli_proc_why(s.dir, ret) : NULL;
		if (ret)
			rc = cli_pid_fail_why("maps", s.pid, why);
		if (s.dir >= 0)
			close(s.dir);
		if (s.json && i > optind)
			fputc(',', doc);
		if (s.json && !ret) {
			fwrite(one, 1, len, doc);
		} else if (s.json && many) {
			pid = s.pid ? s.pid : getpid();
			fprintf(doc, "{\"pid\":%d,", (int)pid);
			cli_put_json_name(doc, "error", why, strlen(why));
			fprintf(doc, ",\"errno\":%d}", -ret);
		} else if (s.json) {
			/* One process: its document, or nothing. */
			free(one);
			return cli_doc_close(doc, 0);
		}
		free(one);
	}
	if (s.json) {
		fputs(many ? "]}\n" : "\n", doc);
		ret = cli_doc_close(doc, 1);
		return ret != EXIT_OK ? ret : rc;
	}
	return rc;
}
