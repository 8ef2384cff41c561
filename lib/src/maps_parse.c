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
 * Digit value + 1 for 0-9, a-f, A-F; 0 for anything else. A table and no division: at
 * 60k lines per listing, a division per digit to check for overflow would dominate
 * parsing.
 */
static const unsigned char hex_digit[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/*
 * The field parsers come in two forms: bounded by end, or (sentinel) relying on a byte
 * at end that no field accepts, as the library's reader leaves after its text. The
 * second drops a bounds check per byte; always_inline makes each its own copy.
 */
#define FIELD static inline __attribute__((always_inline))

#define ONES	0x0101010101010101ULL
#define HIGH	(0x80 * ONES)

/* 0x80 in each byte of x that is a hex digit, 0 elsewhere. */
static inline uint64_t hex_bytes(uint64_t x)
{
	/* Per byte below 0x80, b + (0x80 - lo) sets bit 7 iff b >= lo: no carries. */
	uint64_t x7 = x & ~HIGH, l7 = x7 | 0x20 * ONES;	/* l7: A-F folded to a-f */
	uint64_t digit = (x7 + (0x80 - '0') * ONES) & ~(x7 + (0x7f - '9') * ONES);
	uint64_t alpha = (l7 + (0x80 - 'a') * ONES) & ~(l7 + (0x7f - 'f') * ONES);

	return (digit | alpha) & ~x & HIGH;
}

/* The value of the n (1 to 8) hex digits in the low bytes of x, the first lowest. */
static inline uint64_t hex_value8(uint64_t x, int n)
{
	x = (x & 0x0f * ONES) + (x >> 6 & ONES) * 9;	/* a-f, A-F have bit 6 */
	x <<= 8 * (8 - n);		/* the bytes after the digits leave at the top */
	x = ((x << 4) | (x >> 8)) & 0x00ff00ff00ff00ffULL;
	x = ((x << 8) | (x >> 16)) & 0x0000ffff0000ffffULL;
	return ((x << 16) | (x >> 32)) & 0xffffffffULL;
}

/*
 * Hex digits at *pp, at least one, of at most max_digits (8 or 16) significant ones.
 * The loop keeps the low 64 bits and checks the count once at the end, not per digit.
 * A 64-bit field with 16 bytes before end (little-endian only) is read eight digits
 * at a time, without a branch per digit, when it has at most 15: half the
 * instructions of the loop for the 12-digit addresses of a 64-bit process.
 */
FIELD int parse_hex(const char **pp, const char *end, bool sentinel, int max_digits,
		    uint64_t *out)
{
	const char *p = *pp, *first = p;
	uint64_t v = 0;
	unsigned int d, e;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	if (max_digits == 16 && end - p >= 16) {
		uint64_t a, b, na, nb;
		int n;

		memcpy(&a, p, 8);
		na = ~hex_bytes(a) & HIGH;	/* the bytes that end the digits */
		if (na) {
			n = __builtin_ctzll(na) / 8;
			if (!n)
				return -EINVAL;
			*out = hex_value8(a, n);
			*pp = p + n;
			return 0;
		}
		memcpy(&b, p + 8, 8);
		nb = ~hex_bytes(b) & HIGH;
		if (nb) {
			n = __builtin_ctzll(nb) / 8;
			v = hex_value8(a, 8);
			*out = n ? v << 4 * n | hex_value8(b, n) : v;
			*pp = p + 8 + n;
			return 0;
		}
		/* 16 digits or more: the loop below. */
	}
#endif
	/* The device numbers: two digits, as the kernel prints them, without the loop. */
	if (max_digits == 8 && (sentinel || end - p >= 3) &&
	    (d = hex_digit[(unsigned char)p[0]]) && (e = hex_digit[(unsigned char)p[1]]) &&
	    !hex_digit[(unsigned char)p[2]]) {
		*out = (d - 1) << 4 | (e - 1);
		*pp = p + 2;
		return 0;
	}
	for (; (sentinel || p < end) && (d = hex_digit[(unsigned char)*p]); p++)
		v = v << 4 | (d - 1);
	if (p == first)
		return -EINVAL;
	if (p - first > max_digits) {
		while (first < p && *first == '0')
			first++;
		if (p - first > max_digits)
			return -EINVAL;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* Decimal digits at *pp, at least one, no overflow of 64 bits. */
FIELD int parse_dec(const char **pp, const char *end, bool sentinel, uint64_t *out)
{
	const char *p = *pp;
	uint64_t v = 0;
	unsigned int d;

	for (; (sentinel || p < end) && (d = (unsigned char)*p - '0') <= 9; p++)
		if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, d, &v))
			return -EINVAL;
	if (p == *pp)
		return -EINVAL;
	*pp = p;
	*out = v;
	return 0;
}

FIELD int expect(const char **pp, const char *end, bool sentinel, char c)
{
	if ((!sentinel && *pp == end) || **pp != c)
		return -EINVAL;
	(*pp)++;
	return 0;
}

/* Byte by byte, stopping at the first wrong one: never past a sentinel. */
FIELD int parse_perms(const char **pp, const char *end, bool sentinel, uint32_t *prot)
{
	static const char want[4][2] = { { 'r', '-' }, { 'w', '-' }, { 'x', '-' }, { 's', 'p' } };
	static const uint32_t bit[4] = { MMEXT_VMA_READ, MMEXT_VMA_WRITE, MMEXT_VMA_EXEC,
					 MMEXT_VMA_SHARED };
	const char *p = *pp;
	int i;

	if (!sentinel && end - p < 4)
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
FIELD int parse_head(const char **pp, const char *end, bool sentinel, struct head *h)
{
	const char *p = *pp;

	if (parse_hex(&p, end, sentinel, 16, &h->start) || expect(&p, end, sentinel, '-') ||
	    parse_hex(&p, end, sentinel, 16, &h->end) || expect(&p, end, sentinel, ' ') ||
	    parse_perms(&p, end, sentinel, &h->prot) || expect(&p, end, sentinel, ' ') ||
	    parse_hex(&p, end, sentinel, 16, &h->offset) || expect(&p, end, sentinel, ' ') ||
	    parse_hex(&p, end, sentinel, 8, &h->major) || expect(&p, end, sentinel, ':') ||
	    parse_hex(&p, end, sentinel, 8, &h->minor) ||
	    expect(&p, end, sentinel, ' ') || parse_dec(&p, end, sentinel, &h->inode))
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
	memset(vma->reserved, 0, sizeof(vma->reserved));
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
	if (parse_head(&p, end, false, &h) || (p < end && *p != ' '))
		return -EINVAL;
	while (p < end && *p == ' ')
		p++;
	if (NAME_TOO_LONG(p, end))
		return -EINVAL;
	fill(vma, &h, p, end);
	return 0;
}

MMEXT_API int mmext_maps_parse_line_sz(const char *line, size_t len, struct mmext_vma *vma,
				       size_t size)
{
	struct mmext_vma tmp, *to = size >= sizeof(tmp) ? vma : &tmp;
	int ret;

	if (!vma || !mmext__vma_size_ok(size))
		return -EINVAL;
	ret = mmext_maps_parse_line(line, len, to);
	if (!ret)
		mmext__vma_out(vma, to, size);
	return ret;
}

int mmext__maps_parse_next(const char *line, const char *end, struct mmext_vma *vma,
			   const char **next)
{
	const char *p = line, *nl;
	struct head h;

	if (parse_head(&p, end, true, &h) || (*p != ' ' && *p != '\n'))
		/* Malformed, or cut short by the end of the buffer. */
		return memchr(line, '\n', end - line) ? -EINVAL : -EAGAIN;
	while (*p == ' ')
		p++;
	/* Most VMAs have no name: then the newline is right here. */
	nl = *p == '\n' ? p : memchr(p, '\n', end - p);
	if (!nl)
		return -EAGAIN;
	if (NAME_TOO_LONG(p, nl))
		return -EINVAL;
	fill(vma, &h, p, nl);
	*next = nl + 1;
	return 0;
}
