// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the /proc/PID/maps line parser. Feeds the input both as one
 * line and split at newlines as the library's reader does, and checks the parser's
 * promises: it never reads outside the line, and what it accepts is consistent.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mmext.h>

static void check(const char *line, size_t len)
{
	struct mmext_vma v;

	if (mmext_maps_parse_line(line, len, &v))
		return;
	if (v.start >= v.end)
		abort();
	if (v.name < line || v.name + v.name_len > line + len)
		abort();
	if (v.prot & ~(MMEXT_VMA_READ | MMEXT_VMA_WRITE | MMEXT_VMA_EXEC | MMEXT_VMA_SHARED))
		abort();
	if (v.kind > MMEXT_VMA_SPECIAL)
		abort();
	if (v.anon_name && (v.anon_name < v.name ||
			    v.anon_name + v.anon_name_len > v.name + v.name_len))
		abort();
	if ((v.kind == MMEXT_VMA_ANON_NAMED || v.kind == MMEXT_VMA_ANON_SHMEM_NAMED) !=
	    (v.anon_name != NULL))
		abort();
	if (v.flags & MMEXT_VMA_DELETED && v.kind != MMEXT_VMA_FILE)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* A private copy, exactly sized, so ASan catches any overread. */
	char *buf = malloc(size ? size : 1);
	const char *p, *nl, *end;

	if (!buf)
		return 0;
	memcpy(buf, data, size);
	check(buf, size);
	for (p = buf, end = buf + size; p < end; p = nl + 1) {
		nl = memchr(p, '\n', end - p);
		if (!nl)
			nl = end;
		check(p, nl - p);
	}
	free(buf);
	return 0;
}
