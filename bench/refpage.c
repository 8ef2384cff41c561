// SPDX-License-Identifier: GPL-2.0
/*
 * Pattern-initialised memory, the reference pages series' microbenchmark: map 4 MiB
 * whose contents must read as a pattern byte, write 4 KiB of it (sparse) or all of
 * it (dense), unmap. Backends:
 *   anon           plain anonymous memory, no pattern (the baseline)
 *   memset         anonymous memory filled with the pattern by memset()
 *   anon_4k, memset_4k  the same with MADV_NOHUGEPAGE: base pages only, as reference
 *                  pages always are (with THP, 4 MiB of anon takes two huge page faults)
 *   refpage        libmmext pattern memory on reference pages (its cached page: one
 *                  mmap() per mapping once the pattern's page exists)
 *   refpage_nocache  the same with MMEXT_PATTERN_NOCACHE: a new page per mapping
 *   refpage_reuse  one reference page fd, mmap()ed for every mapping, without libmmext
 *   emulated       libmmext pattern memory, memfd emulation
 * Time per mapping (map + fill + write + unmap) and the mapping's RSS once written
 * (smaps Rss of its VMAs).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mmext.h>
#include <mmext/uapi.h>
#include "bench.h"

#define LEN	(4UL << 20)
#define PATTERN	0xa5

static const char usage[] =
	"Usage: refpage [--runs N] [--json FILE]\n"
	"Time 4 MiB of pattern-initialised memory, 4 KiB or all of it written, per backend.\n";

enum {
	B_ANON, B_ANON_4K, B_MEMSET, B_MEMSET_4K, B_REFPAGE, B_REFPAGE_NOCACHE, B_REFPAGE_REUSE,
	B_EMULATED, B__N
};
static const char *const names[B__N] = {
	"anon", "anon_4k", "memset", "memset_4k", "refpage", "refpage_nocache", "refpage_reuse",
	"emulated"
};

static size_t psz;
static int reuse_fd = -1;

/* Rss (smaps) of the VMAs in [p, p + LEN): the emulation has one per tile. */
static long rss_kib(const char *p)
{
	unsigned long s, e, a = (unsigned long)p;
	long sum = 0, v;
	bool in = false;
	char line[512];
	FILE *f = fopen("/proc/self/smaps", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &s, &e) == 2)
			in = s >= a && s < a + LEN;
		else if (in && sscanf(line, "Rss: %ld", &v) == 1)
			sum += v;
	}
	fclose(f);
	return sum;
}

/* The reference page fd an allocator would keep, or -errno. */
struct mapping {
	char *p;
	struct mmext_pattern *pat;
};

static int map(int b, struct mapping *m)
{
	static const unsigned char pattern = PATTERN;
	MMEXT_OPTS(mmext_pattern_opts, o, .backend = b == B_EMULATED ? MMEXT_PATTERN_EMULATED :
					    MMEXT_PATTERN_KERNEL,
		   .flags = b == B_REFPAGE_NOCACHE ? MMEXT_PATTERN_NOCACHE : 0);
	int ret;

	m->pat = NULL;
	switch (b) {
	case B_ANON:
	case B_ANON_4K:
	case B_MEMSET:
	case B_MEMSET_4K:
		m->p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (m->p == MAP_FAILED)
			return -errno;
		if ((b == B_ANON_4K || b == B_MEMSET_4K) && madvise(m->p, LEN, MADV_NOHUGEPAGE)) {
			munmap(m->p, LEN);
			return -errno;
		}
		if (b == B_MEMSET || b == B_MEMSET_4K)
			memset(m->p, PATTERN, LEN);
		return 0;
	case B_REFPAGE_REUSE:
		m->p = mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, reuse_fd, 0);
		return m->p == MAP_FAILED ? -errno : 0;
	default:
		ret = mmext_pattern_map(&pattern, 1, LEN, &o, &m->pat);
		if (ret)
			return ret;
		m->p = mmext_pattern_addr(m->pat);
		return 0;
	}
}

static void unmap(struct mapping *m)
{
	if (m->pat)
		mmext_pattern_unmap(m->pat);
	else
		munmap(m->p, LEN);
}

/* One mapping of backend b: map (and fill), write touched bytes, unmap; us, or < 0. */
static double time_one(int b, size_t touched)
{
	double t0 = bench_ns();
	struct mapping m;

	if (map(b, &m))
		return -1;
	memset(m.p, 0x11, touched);
	unmap(&m);
	return (bench_ns() - t0) / 1e3;
}

/* Untimed: check the pattern reads back and measure one written mapping's RSS. */
static int check_one(int b, size_t touched, long *rss)
{
	struct mapping m;
	int ret = map(b, &m);

	if (ret)
		return ret;
	memset(m.p, 0x11, touched);
	if (b != B_ANON && b != B_ANON_4K && touched < LEN && m.p[LEN - 1] != (char)PATTERN) {
		fprintf(stderr, "refpage: %s does not read as the pattern\n", names[b]);
		exit(1);
	}
	*rss = rss_kib(m.p);
	unmap(&m);
	return 0;
}

/* refpage against a memset baseline, pair by pair (bench/pairstats.py). */
static void pairs(const char *what, int base, double *t[B__N], int runs)
{
	char head[128];

	if (!t[base] || !t[B_REFPAGE])
		return;
	snprintf(head, sizeof(head), "\"group\":\"refpage\",\"case\":\"regression\","
		 "\"what\":\"%s vs %s\",\"backend\":\"refpage\"", what, names[base]);
	bench_pairs(head, t[base], t[B_REFPAGE], runs);
}

/*
 * The backends take turns, run by run (and in reverse order every other run), so that
 * a shared machine's drift hits them alike and the ratios between them stay fair. Each
 * timed mapping follows an untimed one of the same backend: under TCG a mapping timed
 * right after a memset one took about 100 us longer, more than a whole reference page
 * mapping, so a backend's time depended on its neighbour in the order.
 */
int main(int argc, char **argv)
{
	static const size_t touched[] = { 4096, LEN };
	double *t[B__N] = { NULL }, med[B__N][2] = { { 0 } }, *v;
	long rss[B__N][2] = { { 0 } };
	char extra[160], json[256];
	int runs = 200, b, d, r, k, ret;
	struct bench_stats s;

	bench_init(argc, argv, "refpage", usage, &runs);
	psz = sysconf(_SC_PAGESIZE);
	reuse_fd = bench_refpage_fd(PATTERN);
	v = calloc(runs, sizeof(*v));
	for (b = 0; b < B__N; b++) {
		ret = b == B_REFPAGE_REUSE && reuse_fd < 0 ? reuse_fd : check_one(b, 4096, &rss[b][0]);
		if (ret) {
			printf("%-14s %-26s %-13s unavailable: %s\n", "refpage", "-", names[b],
			       strerror(-ret));
			snprintf(json, sizeof(json), "\"group\":\"refpage\",\"case\":\"unavailable\","
				 "\"backend\":\"%s\",\"errno\":%d", names[b], -ret);
			bench_json(json);
			continue;
		}
		if (check_one(b, LEN, &rss[b][1]))
			return 1;
		t[b] = calloc(runs, sizeof(double));
		if (!t[b] || !v)
			return 1;
	}
	for (d = 0; d < 2; d++) {
		for (r = 0; r < runs; r++) {
			for (k = 0; k < B__N; k++) {
				b = r % 2 ? B__N - 1 - k : k;
				if (t[b] && (time_one(b, touched[d]) < 0 ||
					     (t[b][r] = time_one(b, touched[d])) < 0))
					return 1;
			}
		}
		for (b = 0; b < B__N; b++) {
			if (!t[b])
				continue;
			memcpy(v, t[b], runs * sizeof(*v));
			s = bench_stats(v, runs);
			med[b][d] = s.median;
			snprintf(extra, sizeof(extra), "\"mib\":4,\"touched_kib\":%zu,\"rss_kib\":%ld",
				 touched[d] / 1024, rss[b][d]);
			bench_result("refpage", d ? "dense" : "sparse", names[b], extra, "us", &s);
		}
		pairs(d ? "dense" : "sparse", B_MEMSET_4K, t, runs);
		pairs(d ? "dense" : "sparse", B_MEMSET, t, runs);
	}
	printf("\n# RSS added by one written mapping (KiB): sparse / dense\n");
	for (b = 0; b < B__N; b++)
		if (med[b][0])
			printf("#   %-16s %8ld / %8ld\n", names[b], rss[b][0], rss[b][1]);
	printf("# memset / backend and memset_4k / backend, median time (> 1: faster):\n"
	       "#   backend           sparse    dense | sparse    dense (4k)\n");
	for (b = 0; b < B__N; b++)
		if (med[b][0])
			printf("#   %-16s %7.1fx %7.2fx | %6.1fx %7.2fx\n", names[b],
			       med[B_MEMSET][0] / med[b][0], med[B_MEMSET][1] / med[b][1],
			       med[B_MEMSET_4K][0] / med[b][0], med[B_MEMSET_4K][1] / med[b][1]);
	if (reuse_fd >= 0)
		close(reuse_fd);
	for (b = 0; b < B__N; b++)
		free(t[b]);
	free(v);
	return 0;
}
