// SPDX-License-Identifier: GPL-2.0
/*
 * Write watch on 8192 pages with every backend this kernel allows, the cases of the
 * PAGEMAP_SCAN series' performance patch: get + reset (two calls), reset only, atomic
 * get-and-reset; plus the cost of the first write to a watched page. Each get/reset
 * case runs with 1% and with 100% of the pages written beforehand.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

#define NPAGES 8192

static const char usage[] =
	"Usage: writewatch [--runs N] [--json FILE]\n"
	"Time libmmext write watch on 8192 pages for every available backend.\n";

enum { C_FIRST, C_GET_RESET, C_RESET, C_ATOMIC, C__N };
static const char *const case_names[C__N] = {
	"first_write", "get_reset", "reset_only", "atomic_get_reset"
};
static const int dirty_pcts[] = { 1, 100 };
#define ND (sizeof(dirty_pcts) / sizeof(dirty_pcts[0]))

/* Medians per backend, case and dirty level, for the ratios. */
static double med[4][C__N][ND];
static int have[4];
static size_t psz;
static void *pages[NPAGES];

static void dirty(char *buf, int pct, int round)
{
	size_t step = 100 / pct, i;

	for (i = 0; i < NPAGES; i += step)
		buf[i * psz + (round % 64) * 8] = (char)round;
}

static void run_backend(int backend, int runs)
{
	MMEXT_OPTS(mmext_ww_opts, o, .backend = backend);
	const char *bname = mmext_ww_backend_name(backend);
	double *t = calloc(runs, sizeof(double));
	char extra[128];
	struct mmext_ww *w;
	struct bench_stats s;
	size_t len = NPAGES * psz, i, n;
	char *buf;
	int c, d, r, ret;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED || !t) {
		perror("mmap");
		exit(1);
	}
	/* Populated first: the first-write case measures tracking, not allocation. */
	memset(buf, 1, len);
	ret = mmext_ww_open(buf, len, &o, &w);
	if (ret) {
		struct mmext_feature_status st = { .detail = "not available" };
		char json[512];

		if (backend == MMEXT_WW_PAGEMAP_SCAN)
			mmext_probe(MMEXT_FEAT_WRITEWATCH, &st);
		else if (backend == MMEXT_WW_SOFT_DIRTY)
			mmext_probe(MMEXT_FEAT_SOFT_DIRTY, &st);
		printf("%-14s %-26s %-13s unavailable: %s (%s)\n", "writewatch", "-", bname,
		       strerror(-ret), st.detail);
		snprintf(json, sizeof(json), "\"group\":\"writewatch\",\"case\":\"unavailable\","
			 "\"backend\":\"%s\",\"errno\":%d,\"detail\":\"%s\"", bname, -ret,
			 st.detail);
		bench_json(json);
		munmap(buf, len);
		free(t);
		return;
	}
	have[backend] = 1;

	for (r = 0; r < runs; r++) {
		double t0;

		mmext_ww_reset(w, buf, len);
		t0 = bench_ns();
		for (i = 0; i < NPAGES; i++)
			((volatile char *)buf)[i * psz] = (char)r;
		t[r] = (bench_ns() - t0) / NPAGES;
	}
	s = bench_stats(t, runs);
	snprintf(extra, sizeof(extra), "\"pages\":%d", NPAGES);
	bench_result("writewatch", case_names[C_FIRST], bname, extra, "ns_per_page", &s);
	med[backend][C_FIRST][0] = med[backend][C_FIRST][1] = s.median;

	for (c = C_GET_RESET; c < C__N; c++) {
		for (d = 0; d < (int)ND; d++) {
			size_t want = (NPAGES + 100 / dirty_pcts[d] - 1) / (100 / dirty_pcts[d]);
			size_t got = 0;

			for (r = 0; r < runs; r++) {
				double t0;

				mmext_ww_reset(w, buf, len);
				dirty(buf, dirty_pcts[d], r);
				n = NPAGES;
				t0 = bench_ns();
				if (c == C_GET_RESET) {
					ret = mmext_ww_get(w, buf, len, 0, pages, &n);
					if (ret >= 0)
						ret = mmext_ww_reset(w, buf, len);
				} else if (c == C_RESET) {
					ret = mmext_ww_reset(w, buf, len);
					n = want;
				} else {
					ret = mmext_ww_get(w, buf, len, MMEXT_WW_RESET, pages, &n);
				}
				t[r] = (bench_ns() - t0) / 1e3;
				if (ret < 0)
					fprintf(stderr, "writewatch: %s: %s\n", bname, strerror(-ret));
				got = n;
			}
			s = bench_stats(t, runs);
			snprintf(extra, sizeof(extra), "\"pages\":%d,\"dirty_pct\":%d,\"reported\":%zu",
				 NPAGES, dirty_pcts[d], got);
			{
				char what[64];

				snprintf(what, sizeof(what), "%s dirty=%d%%", case_names[c],
					 dirty_pcts[d]);
				bench_result("writewatch", what, bname, extra, "us", &s);
			}
			/* Soft-dirty may report more (supersets); fewer is a bug worth seeing. */
			if (got < want)
				printf("# WARNING: %s reported %zu of %zu written pages\n", bname,
				       got, want);
			med[backend][c][d] = s.median;
		}
	}
	mmext_ww_close(w);
	munmap(buf, len);
	free(t);
}

static void ratio(int other, int c, int d, double goal)
{
	const char *o = mmext_ww_backend_name(other);
	char what[64], json[512];
	double x;

	if (c == C_FIRST)
		snprintf(what, sizeof(what), "%s", case_names[c]);
	else
		snprintf(what, sizeof(what), "%s dirty=%d%%", case_names[c], dirty_pcts[d]);
	if (!have[MMEXT_WW_PAGEMAP_SCAN] || !have[other]) {
		printf("ratio %-26s %s/pagemap_scan: not measurable (%s unavailable)\n", what, o,
		       have[other] ? "pagemap_scan" : o);
		return;
	}
	x = med[other][c][d] / med[MMEXT_WW_PAGEMAP_SCAN][c][d];
	printf("ratio %-26s %s/pagemap_scan = %.2fx", what, o, x);
	if (goal > 0)
		printf("  (goal >= %.0fx: %s)", goal, x >= goal ? "met" : "NOT met");
	putchar('\n');
	snprintf(json, sizeof(json), "\"group\":\"writewatch\",\"case\":\"ratio\",\"what\":\"%s\","
		 "\"numerator\":\"%s\",\"denominator\":\"pagemap_scan\",\"ratio\":%.4g,"
		 "\"goal\":%.0f,\"goal_met\":%s", what, o, x, goal, goal > 0 && x >= goal ?
		 "true" : "false");
	bench_json(json);
}

int main(int argc, char **argv)
{
	int runs = 15, b, c, d;

	bench_init(argc, argv, "writewatch", usage, &runs);
	psz = sysconf(_SC_PAGESIZE);
	for (b = MMEXT_WW_PAGEMAP_SCAN; b <= MMEXT_WW_MPROTECT; b++)
		run_backend(b, runs);
	printf("\n# ratios: median of the other backend / median of pagemap_scan (higher: "
	       "pagemap_scan faster)\n");
	for (c = C_FIRST; c < C__N; c++) {
		for (d = 0; d < (c == C_FIRST ? 1 : (int)ND); d++) {
			ratio(MMEXT_WW_MPROTECT, c, d, c == C_GET_RESET ? 10 : 0);
			ratio(MMEXT_WW_SOFT_DIRTY, c, d, c == C_GET_RESET ? 3 : 0);
		}
	}
	return 0;
}
