// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Parser for one line of /proc/PID/maps, kept free of I/O and allocation so that it
 * can be fuzzed on its own (tests/fuzz/maps_parser_fuzz.c).
 *
 *   START-END PERMS OFFSET MAJOR:MINOR INODE [spaces NAME]
 *
 * The kernel escapes a newline in a path as \012, so a line never contains one; the
 * name is everything after the spaces that follow the inode, spaces included.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/*
 * Digit value + 1 for 0-9, a-f, A-F; 0 for anything else. A table and no division:
 * at 60k lines per listing the old per-digit overflow division dominated parsing.
 */
static const unsigned char hex_digit[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * Hex digits at *pp, at least one, value at most max. max must be 2^(4k) - 1
 * (UINT32_MAX, UINT64_MAX): then v * 16 + d fits exactly when v <= max >> 4.
 * (Eight digits at a time with bit tricks measured slower than this loop.)
 */
static inline int parse_hex(const char **pp, const char *end, uint64_t max, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int d;

	for (; p < end && (d = hex_digit[(unsigned char)*p]); p++) {
		if (v > max >> 4)
			return -EINVAL;
		v = v << 4 | (d - 1);
	}
	if (p == *pp)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

/* Decimal digits at *pp, at least one, no overflow of 64 bits. */
static inline int parse_dec(const char **pp, const char *end, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int d;

	for (; p < end && (d = (unsigned char)*p - '0') <= 9; p++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
			return -EINVAL;
	if (p == *pp)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

static int expect(const char **pp, const char *end, char c)
{
	if (*pp == end || **pp != c)
		return -EINVAL;
	(*pp)++;
	return 0;
}

static int parse_perms(const char **pp, const char *end, uint32_t *prot)
{
	static const char want[4][2] = { { 'r', '-' }, { 'w', '-' }, { 'x', '-' }, { 's', 'p' } };
	static const uint32_t bit[4] = { MMEXT_VMA_READ, MMEXT_VMA_WRITE, MMEXT_VMA_EXEC,
					 MMEXT_VMA_SHARED };
	const char *p = *pp;
	int i;

	if (end - p < 4)
		return -EINVAL;
	*prot = 0;
	for (i = 0; i < 4; i++) {
		if (p[i] == want[i][0])
			*prot |= bit[i];
		else if (p[i] != want[i][1])
			return -EINVAL;
	}
	*pp = p + 4;
	return 0;
}

static bool has_prefix(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

static bool is(const char *s, size_t len, const char *lit)
{
	return len == strlen(lit) && !memcmp(s, lit, len);
}

void mmext__vma_classify(struct mmext_vma *v)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	const char *n = v->name;
	size_t len = v->name_len;

	v->flags = 0;
	v->anon_name = NULL;
	v->anon_name_len = 0;
	if (!len) {
		v->kind = MMEXT_VMA_ANON;
		return;
	}
	if (n[0] == '/') {
		/* Ambiguous for a file really named "x (deleted)", as in the kernel. */
		if (len > dlen && !memcmp(n + len - dlen, deleted, dlen)) {
			v->flags |= MMEXT_VMA_DELETED;
			v->name_len = len - dlen;
		}
		v->kind = MMEXT_VMA_FILE;
		return;
	}
	if (n[0] != '[' || n[len - 1] != ']') {
		v->kind = v->inode ? MMEXT_VMA_FILE : MMEXT_VMA_SPECIAL;
		return;
	}
	if (has_prefix(n, len, "[anon:")) {
		v->kind = MMEXT_VMA_ANON_NAMED;
		v->anon_name = n + 6;
		v->anon_name_len = len - 7;
	} else if (has_prefix(n, len, "[anon_shmem:")) {
		v->kind = MMEXT_VMA_ANON_SHMEM_NAMED;
		v->anon_name = n + 12;
		v->anon_name_len = len - 13;
	} else if (is(n, len, "[heap]")) {
		v->kind = MMEXT_VMA_HEAP;
	} else if (is(n, len, "[stack]") || has_prefix(n, len, "[stack:")) {
		v->kind = MMEXT_VMA_STACK;
	} else if (is(n, len, "[vdso]")) {
		v->kind = MMEXT_VMA_VDSO;
	} else if (is(n, len, "[vvar]") || is(n, len, "[vvar_vclock]")) {
		v->kind = MMEXT_VMA_VVAR;
	} else if (is(n, len, "[vsyscall]")) {
		v->kind = MMEXT_VMA_VSYSCALL;
	} else {
		v->kind = MMEXT_VMA_SPECIAL;
	}
}

struct head {
	uint64_t start, end, offset, inode, major, minor;
	uint32_t prot;
};

/* The fields before the name, from *pp to at most end; *pp is left after the inode. */
static inline int parse_head(const char **pp, const char *end, struct head *h)
{
	const char *p = *pp;

	if (parse_hex(&p, end, UINT64_MAX, &h->start) || expect(&p, end, '-') ||
	    parse_hex(&p, end, UINT64_MAX, &h->end) || expect(&p, end, ' ') ||
	    parse_perms(&p, end, &h->prot) || expect(&p, end, ' ') ||
	    parse_hex(&p, end, UINT64_MAX, &h->offset) || expect(&p, end, ' ') ||
	    parse_hex(&p, end, UINT32_MAX, &h->major) || expect(&p, end, ':') ||
	    parse_hex(&p, end, UINT32_MAX, &h->minor) ||
	    expect(&p, end, ' ') || parse_dec(&p, end, &h->inode))
		return -EINVAL;
	if (h->start >= h->end)
		return -EINVAL;
	*pp = p;
	return 0;
}

/*
 * Field by field into *vma, only once the line is known good: a struct built on
 * the stack and copied whole stalled on store forwarding, a tenth of the time.
 */
static inline void fill(struct mmext_vma *vma, const struct head *h, const char *name,
			const char *name_end)
{
	vma->start = h->start;
	vma->end = h->end;
	vma->offset = h->offset;
	vma->inode = h->inode;
	vma->dev_major = h->major;
	vma->dev_minor = h->minor;
	vma->prot = h->prot;
	vma->build_id_len = 0;
	vma->build_id = NULL;
	memset(vma->__reserved, 0, sizeof(vma->__reserved));
	vma->name = name;
	vma->name_len = name_end - name;
	mmext__vma_classify(vma);
}

/* Lines are short next to 4 GiB; a longer one is not a maps line. */
#define NAME_TOO_LONG(name, end)	((size_t)((end) - (name)) > UINT32_MAX)

MMEXT_API int mmext_maps_parse_line(const char *line, size_t len, struct mmext_vma *vma)
{
	const char *p = line, *end;
	struct head h;

	if (!line || !vma)
		return -EINVAL;
	end = line + len;
	if (p < end && end[-1] == '\n')
		end--;
	if (parse_head(&p, end, &h) || (p < end && *p != ' '))
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	if (NAME_TOO_LONG(p, end))
		return -EINVAL;
	fill(vma, &h, p, end);
	return 0;
}

int mmext__maps_parse_next(const char *line, const char *end, struct mmext_vma *vma,
			   const char **next)
{
	const char *p = line, *nl;
	struct head h;

	if (parse_head(&p, end, &h) || (p < end && *p != ' ' && *p != '\n'))
		/* Malformed, or cut short by the end of the buffer. */
		return memchr(line, '\n', end - line) ? -EINVAL : -EAGAIN;
	while (p < end && *p == ' ')
		p++;
	/* Most VMAs have no name: then the newline is right here. */
	nl = p < end && *p == '\n' ? p : memchr(p, '\n', end - p);
	if (!nl)
		return -EAGAIN;
	if (NAME_TOO_LONG(p, nl))
		return -EINVAL;
	fill(vma, &h, p, nl);
	*next = nl + 1;
	return 0;
}
