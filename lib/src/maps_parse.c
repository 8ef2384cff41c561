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

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parse digits in base 16 or 10 at *pp; at least one, no overflow of max. */
static int parse_num(const char **pp, const char *end, unsigned int base, uint64_t max,
		     uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	int d;

	if (p == end)
		return -EINVAL;
	for (; p < end; p++) {
		d = hexval(*p);
		if (d < 0 || (unsigned int)d >= base)
			break;
		if (v > (max - d) / base)
			return -EINVAL;
		v = v * base + d;
	}
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

MMEXT_API int mmext_maps_parse_line(const char *line, size_t len, struct mmext_vma *vma)
{
	const char *p = line, *end;
	struct mmext_vma v;
	uint64_t major, minor;

	if (!line || !vma)
		return -EINVAL;
	end = line + len;
	if (p < end && end[-1] == '\n')
		end--;
	memset(&v, 0, sizeof(v));
	if (parse_num(&p, end, 16, UINT64_MAX, &v.start) || expect(&p, end, '-') ||
	    parse_num(&p, end, 16, UINT64_MAX, &v.end) || expect(&p, end, ' ') ||
	    parse_perms(&p, end, &v.prot) || expect(&p, end, ' ') ||
	    parse_num(&p, end, 16, UINT64_MAX, &v.offset) || expect(&p, end, ' ') ||
	    parse_num(&p, end, 16, UINT32_MAX, &major) || expect(&p, end, ':') ||
	    parse_num(&p, end, 16, UINT32_MAX, &minor) ||
	    expect(&p, end, ' ') || parse_num(&p, end, 10, UINT64_MAX, &v.inode))
		return -EINVAL;
	if (v.start >= v.end)
		return -EINVAL;
	if (p < end && *p != ' ')
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	/* Lines are short next to 4 GiB; a longer one is not a maps line. */
	if ((size_t)(end - p) > UINT32_MAX)
		return -EINVAL;
	v.dev_major = major;
	v.dev_minor = minor;
	v.name = p;
	v.name_len = end - p;
	mmext__vma_classify(&v);
	*vma = v;
	return 0;
}
