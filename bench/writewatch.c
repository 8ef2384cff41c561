// SPDX-License-Identifier: GPL-2.0
/*
 * Write watch on 8192 pages with every backend this kernel allows, the cases of the
 * PAGEMAP_SCAN series' performance patch: get + reset (two calls), reset only, atomic
 * get-and-reset; plus get only (what the two-call case spends before its reset) and the
 * cost of the first write to a watched page. Each get/reset case runs with 1% and with
 * 100% of the pages written beforehand.
 *
 * The kernel's floor under the two-call get + reset is timed too: the same two
 * PAGEMAP_SCAN walks the library makes, issued here with the raw ioctl on the same range
 * with the same flags (bare_walks()). Then the goals' cases run again as pairs
 * (goal_pairs()), for an interval: PAGEMAP_SCAN's atomic get-and-reset against the other
 * backends', and the library's two calls against the bare walks.
 *
 * The mprotect baseline the goals are measured against is this program's own (mp_*
 * below): the library has no such backend, it would need a process-wide SIGSEGV
 * handler. It sits in the slot of MMEXT_WW_MPROTECT, the value the library reserves.
 *
 * Each backend runs in its own child process (clear_refs, soft-dirty's reset, walks the
 * whole process, and the mprotect baseline's signal handler is process-wide), and the
 * runs are interleaved: run r of every backend, then run r + 1, so a shared machine's
 * load changes hit every backend alike and the ratios stay fair.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>
#include <mmext/uapi.h>
#include "bench.h"

#define NPAGES 8192
#define NB 4	/* indexed by enum mmext_ww_backend; 0 (auto) unused */
#define LONG_BITS (8 * sizeof(unsigned long))

static const char usage[] =
	"Usage: writewatch [--runs N] [--pairs N] [--json FILE]\n"
	"Time libmmext write watch on 8192 pages for every available backend.\n"
	"--pairs N: the goals' cases again, N interleaved rounds (default: --runs)\n";

/* C_BARE: the kernel's floor under C_GET_RESET, PAGEMAP_SCAN's child only. */
enum { C_FIRST, C_GET_RESET, C_RESET, C_ATOMIC, C_GET, C_BARE, C__N };
static const char *const case_names[C__N] = {
	"first_write", "get_reset", "reset_only", "atomic_get_reset", "get_only", "bare_walks"
};
static const int dirty_pcts[] = { 1, 100 };
#define ND (sizeof(dirty_pcts) / sizeof(dirty_pcts[0]))

/* Medians per backend, case and dirty level, for the ratios. */
static double med[NB][C__N][ND];
static int have[NB];
static size_t psz;
static void *pages[NPAGES];
static int pagemap_fd = -1;	/* PAGEMAP_SCAN's child: our own, for the bare walks */
static int npairs;		/* --pairs */

static int opt(int val, const char *arg)
{
	char *end;

	npairs = strtol(arg, &end, 10);
	return *end || npairs < 1 || npairs > 100000 ? -1 : 0;
}

/* One measurement asked of a backend's child, and its answer. */
struct cmd {
	int c, d, r;
};
struct answer {
	double t;	/* ns per page for C_FIRST, else us */
	size_t n;	/* pages reported */
	int err;	/* -errno of a failed call, or 0 */
};

struct child {
	pid_t pid;
	int to, from;	/* pipe ends: commands out, answers in */
};
static struct child kids[NB];

static void dirty(char *buf, int pct, int round)
{
	size_t step = 100 / pct, i;

	for (i = 0; i < NPAGES; i += step)
		buf[i * psz + (round % 64) * 8] = (char)round;
}

/*
 * The two PAGEMAP_SCAN walks under the library's get + reset (scan_range() in
 * lib/src/writewatch.c), with the raw ioctl: the same range, flags, masks, vector and
 * page limit; one walk reports the written pages, the next write-protects them. No
 * addresses are collected: the floor is the kernel's work alone. Returns the pages
 * reported, or -errno.
 */
static long bare_walks(uintptr_t start, uintptr_t end)
{
	static struct page_region reg[256];	/* the library's SCAN_REGIONS */
	struct pm_scan_arg arg;
	uintptr_t cur;
	long n, i, got = 0;
	int wp;

	for (wp = 0; wp < 2; wp++) {
		/* The get stops when the page array would be full, as the library's does. */
		for (cur = start; cur < end && (wp || got < NPAGES);) {
			memset(&arg, 0, sizeof(arg));
			arg.size = sizeof(arg);
			arg.flags = PM_SCAN_CHECK_WPASYNC | (wp ? PM_SCAN_WP_MATCHING : 0);
			arg.start = cur;
			arg.end = end;
			arg.category_mask = PAGE_IS_WRITTEN;
			arg.return_mask = PAGE_IS_WRITTEN;
			if (!wp) {
				arg.vec = (uintptr_t)reg;
				arg.vec_len = 256;
				arg.max_pages = NPAGES - got;
			}
			n = ioctl(pagemap_fd, PAGEMAP_SCAN, &arg);
			if (n < 0)
				return -errno;
			for (i = 0; i < n && !wp; i++)
				got += (reg[i].end - reg[i].start) / psz;
			if (arg.walk_end <= cur)
				return -EIO;
			cur = arg.walk_end;
		}
	}
	return got;
}

/*
 * The mprotect baseline, as a program tracking its own writes would do it: the range
 * read-only, a SIGSEGV handler that records the first write to a page and makes the
 * page writable, a get that reads the record, a reset that clears it and protects
 * the pages again (the ones returned, or the whole range in one call). One range per
 * process.
 */
static struct {
	uintptr_t start, end;
	unsigned long bits[NPAGES / LONG_BITS];
} mp;

static void mp_fault(int sig, siginfo_t *si, void *uc)
{
	uintptr_t a = (uintptr_t)si->si_addr & ~(psz - 1);
	size_t i = (a - mp.start) / psz;

	/* Not ours: the default action, which the faulting access then takes. */
	if (si->si_code != SEGV_ACCERR || a < mp.start || a >= mp.end ||
	    mprotect((void *)a, psz, PROT_READ | PROT_WRITE)) {
		signal(SIGSEGV, SIG_DFL);
		return;
	}
	__atomic_fetch_or(&mp.bits[i / LONG_BITS], 1UL << (i % LONG_BITS), __ATOMIC_RELAXED);
}

static int mp_open(char *buf, size_t len)
{
	struct sigaction sa = { .sa_sigaction = mp_fault, .sa_flags = SA_SIGINFO | SA_RESTART };

	sigemptyset(&sa.sa_mask);
	mp.start = (uintptr_t)buf;
	mp.end = mp.start + len;
	if (sigaction(SIGSEGV, &sa, NULL) || mprotect(buf, len, PROT_READ))
		return -errno;
	return 0;
}

/* Clear the record of pages [i, j), then protect them: a write in between is missed. */
static int mp_protect(size_t i, size_t j)
{
	size_t k;

	for (k = i; k < j; k++)
		__atomic_fetch_and(&mp.bits[k / LONG_BITS], ~(1UL << (k % LONG_BITS)),
				   __ATOMIC_RELAXED);
	return mprotect((void *)(mp.start + i * psz), (j - i) * psz, PROT_READ) ? -errno : 0;
}

static int mp_reset(void)
{
	return mp_protect(0, (mp.end - mp.start) / psz);
}

/* The written pages, lowest first, at most *n; with reset, protect them again by runs. */
static int mp_get(bool reset, void **out, size_t *n)
{
	size_t cap = *n, got = 0, i, w, run = 0;
	unsigned long x;
	int ret = 0;

	for (w = 0; w < NPAGES / LONG_BITS && got < cap; w++) {
		x = __atomic_load_n(&mp.bits[w], __ATOMIC_RELAXED);
		while (x && got < cap) {
			i = w * LONG_BITS + __builtin_ctzl(x);
			x &= x - 1;
			out[got++] = (void *)(mp.start + i * psz);
		}
	}
	for (i = 0; reset && i < got && !ret; i = run) {
		size_t first = ((uintptr_t)out[i] - mp.start) / psz;

		for (run = i + 1; run < got &&
		     ((uintptr_t)out[run] - mp.start) / psz == first + (run - i); run++)
			;
		ret = mp_protect(first, first + (run - i));
	}
	*n = got;
	return ret;
}

/* The calls measured: the library's watch, or the baseline when w is NULL. */
static int ww_get(struct mmext_ww *w, char *buf, size_t len, unsigned int flags, size_t *n)
{
	if (!w)
		return mp_get(flags & MMEXT_WW_RESET, pages, n);
	return mmext_ww_get(w, buf, len, flags, pages, n);
}

static int ww_reset(struct mmext_ww *w, char *buf, size_t len)
{
	return w ? mmext_ww_reset(w, buf, len) : mp_reset();
}

static struct answer measure(struct mmext_ww *w, char *buf, const struct cmd *k)
{
	size_t len = NPAGES * psz, i;
	struct answer a = { 0 };
	long ret = 0;
	double t0;

	ww_reset(w, buf, len);
	if (k->c == C_FIRST) {
		t0 = bench_ns();
		for (i = 0; i < NPAGES; i++)
			((volatile char *)buf)[i * psz] = (char)k->r;
		a.t = (bench_ns() - t0) / NPAGES;
		return a;
	}
	dirty(buf, dirty_pcts[k->d], k->r);
	a.n = NPAGES;
	t0 = bench_ns();
	switch (k->c) {
	case C_GET_RESET:
		ret = ww_get(w, buf, len, 0, &a.n);
		if (ret >= 0)
			ret = ww_reset(w, buf, len);
		break;
	case C_RESET:
		ret = ww_reset(w, buf, len);
		a.n = (NPAGES + 100 / dirty_pcts[k->d] - 1) / (100 / dirty_pcts[k->d]);
		break;
	case C_ATOMIC:
		ret = ww_get(w, buf, len, MMEXT_WW_RESET, &a.n);
		break;
	case C_BARE:
		ret = bare_walks((uintptr_t)buf, (uintptr_t)buf + len);
		a.n = ret < 0 ? 0 : ret;
		break;
	default:
		ret = ww_get(w, buf, len, 0, &a.n);
	}
	a.t = (bench_ns() - t0) / 1e3;
	a.err = ret < 0 ? (int)ret : 0;
	return a;
}

/* The child: open the watch, say whether it worked, then serve commands until EOF. */
static void serve(int backend, int in, int out)
{
	MMEXT_OPTS(mmext_ww_opts, o, .backend = backend);
	size_t len = NPAGES * psz;
	struct mmext_ww *w = NULL;
	struct answer a;
	struct cmd k;
	char *buf;
	int ret;

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("mmap");
		_exit(1);
	}
	/* Populated first: the first-write case measures tracking, not allocation. */
	memset(buf, 1, len);
	if (backend == MMEXT_WW_MPROTECT)
		ret = mp_open(buf, len);
	else
		ret = mmext_ww_open(buf, len, &o, &w);
	if (!ret && backend == MMEXT_WW_PAGEMAP_SCAN) {
		pagemap_fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
		if (pagemap_fd < 0)
			ret = -errno;
	}
	if (write(out, &ret, sizeof(ret)) != sizeof(ret) || ret)
		_exit(0);
	while (read(in, &k, sizeof(k)) == sizeof(k)) {
		a = measure(w, buf, &k);
		if (write(out, &a, sizeof(a)) != sizeof(a))
			break;
	}
	mmext_ww_close(w);
	_exit(0);
}

static void start(int backend)
{
	const char *bname = mmext_ww_backend_name(backend);
	int down[2], up[2], ret = -EIO;
	struct child *k = &kids[backend];

	if (pipe(down) || pipe(up)) {
		perror("pipe");
		exit(1);
	}
	fflush(NULL);	/* or the child's exit would print our buffered output again */
	k->pid = fork();
	if (k->pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!k->pid) {
		int b;

		/* Only the parent may hold the other children's pipes, or they never see EOF. */
		for (b = 1; b < backend; b++) {
			close(kids[b].to);
			close(kids[b].from);
		}
		close(down[1]);
		close(up[0]);
		serve(backend, down[0], up[1]);
	}
	close(down[0]);
	close(up[1]);
	k->to = down[1];
	k->from = up[0];
	if (read(k->from, &ret, sizeof(ret)) == sizeof(ret) && !ret) {
		have[backend] = 1;
		return;
	}
	{
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
	}
}

static struct answer ask(int backend, int c, int d, int r)
{
	struct cmd k = { c, d, r };
	struct answer a;

	if (write(kids[backend].to, &k, sizeof(k)) != sizeof(k) ||
	    read(kids[backend].from, &a, sizeof(a)) != sizeof(a)) {
		fprintf(stderr, "writewatch: %s: child died\n", mmext_ww_backend_name(backend));
		exit(1);
	}
	return a;
}

/* Whether backend b has case c: the bare walks are PAGEMAP_SCAN's alone. */
static int has_case(int b, int c)
{
	return have[b] && (c != C_BARE || b == MMEXT_WW_PAGEMAP_SCAN);
}

/* All runs of one case, interleaved across backends; prints each backend's result. */
static void run_case(int c, int d, int runs)
{
	double *t[NB] = { NULL };
	size_t got[NB] = { 0 }, want;
	struct bench_stats s;
	struct answer a;
	char extra[128], what[64];
	int b, r;

	for (b = 1; b < NB; b++) {
		t[b] = calloc(runs, sizeof(double));
		if (!t[b]) {
			perror("calloc");
			exit(1);
		}
	}
	for (r = 0; r < runs; r++) {
		for (b = 1; b < NB; b++) {
			if (!has_case(b, c))
				continue;
			a = ask(b, c, d, r);
			if (a.err)
				fprintf(stderr, "writewatch: %s: %s\n", mmext_ww_backend_name(b),
					strerror(-a.err));
			t[b][r] = a.t;
			got[b] = a.n;
		}
	}
	for (b = 1; b < NB; b++) {
		if (!has_case(b, c))
			continue;
		s = bench_stats(t[b], runs);
		if (c == C_FIRST) {
			snprintf(extra, sizeof(extra), "\"pages\":%d", NPAGES);
			bench_result("writewatch", case_names[c], mmext_ww_backend_name(b), extra,
				     "ns_per_page", &s);
			med[b][c][0] = med[b][c][1] = s.median;
			continue;
		}
		snprintf(extra, sizeof(extra), "\"pages\":%d,\"dirty_pct\":%d,\"reported\":%zu",
			 NPAGES, dirty_pcts[d], got[b]);
		snprintf(what, sizeof(what), "%s dirty=%d%%", case_names[c], dirty_pcts[d]);
		bench_result("writewatch", what, mmext_ww_backend_name(b), extra, "us", &s);
		/* Soft-dirty may report more (supersets); fewer is a bug worth seeing. */
		want = (NPAGES + 100 / dirty_pcts[d] - 1) / (100 / dirty_pcts[d]);
		if (got[b] < want)
			printf("# WARNING: %s reported %zu of %zu written pages\n",
			       mmext_ww_backend_name(b), got[b], want);
		med[b][c][d] = s.median;
	}
	for (b = 1; b < NB; b++)
		free(t[b]);
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

/* The goals' measurements: a backend, a case, and the goal's role in it. */
enum { G_PMS_ATOMIC, G_MPROT_ATOMIC, G_SD_ATOMIC, G_PMS_TWO, G_BARE, G__N };
static const struct {
	int backend, c;
} goal_case[G__N] = {
	[G_PMS_ATOMIC] = { MMEXT_WW_PAGEMAP_SCAN, C_ATOMIC },
	[G_MPROT_ATOMIC] = { MMEXT_WW_MPROTECT, C_ATOMIC },
	[G_SD_ATOMIC] = { MMEXT_WW_SOFT_DIRTY, C_ATOMIC },
	[G_PMS_TWO] = { MMEXT_WW_PAGEMAP_SCAN, C_GET_RESET },
	[G_BARE] = { MMEXT_WW_PAGEMAP_SCAN, C_BARE },
};

/* One goal's pairs ("a" the reference, "b" what the goal is about) as a JSON line. */
static void goal_line(double *t[G__N], int ga, int gb, const char *what, const char *name,
		      int n)
{
	double *r = malloc(n * sizeof(*r));
	struct bench_stats s;
	char head[384];
	int i;

	if (!r || !have[goal_case[ga].backend] || !have[goal_case[gb].backend]) {
		printf("goal %-26s %s: not measurable\n", what, name);
		free(r);
		return;
	}
	for (i = 0; i < n; i++)
		r[i] = t[gb][i] / t[ga][i];
	s = bench_stats(r, n);
	printf("goal %-26s %s = %.3f (median of %d pairs)\n", what, name, s.median, n);
	snprintf(head, sizeof(head), "\"group\":\"writewatch\",\"case\":\"regression\","
		 "\"what\":\"%s\",\"backend\":\"%s\",\"pages\":%d,\"dirty_pct\":1", what, name,
		 NPAGES);
	bench_pairs(head, t[ga], t[gb], n);
	free(r);
}

/*
 * The goals' cases at 1% written, in rounds: each case once per round, the order
 * rotating, so that the two sides of a pair run a moment apart and a shared machine's
 * drift cancels in their ratio. One untimed round first.
 */
static void goal_pairs(int n)
{
	double *t[G__N];
	struct bench_stats s;
	struct answer a;
	char extra[96];
	int g, k, r;

	for (g = 0; g < G__N; g++) {
		t[g] = calloc(n, sizeof(double));
		if (!t[g]) {
			perror("calloc");
			exit(1);
		}
	}
	for (r = -1; r < n; r++) {
		for (k = 0; k < G__N; k++) {
			g = (r + 1 + k) % G__N;
			if (!have[goal_case[g].backend])
				continue;
			a = ask(goal_case[g].backend, goal_case[g].c, 0, r + 1);
			if (a.err)
				fprintf(stderr, "writewatch: %s: %s\n",
					mmext_ww_backend_name(goal_case[g].backend),
					strerror(-a.err));
			if (r >= 0)
				t[g][r] = a.t;
		}
	}
	printf("\n# goals: %d interleaved rounds at 1%% written; ratios b/a per pair\n", n);
	goal_line(t, G_MPROT_ATOMIC, G_PMS_ATOMIC, "atomic_get_reset dirty=1%",
		  "pagemap_scan/mprotect", n);
	goal_line(t, G_SD_ATOMIC, G_PMS_ATOMIC, "atomic_get_reset dirty=1%",
		  "pagemap_scan/soft_dirty", n);
	goal_line(t, G_BARE, G_PMS_TWO, "get_reset dirty=1%", "pagemap_scan/bare_walks", n);
	/* Each side's own figures from the same rounds (bench_stats sorts: after the pairs). */
	for (g = 0; g < G__N; g++) {
		if (!have[goal_case[g].backend])
			continue;
		s = bench_stats(t[g], n);
		snprintf(extra, sizeof(extra), "\"pages\":%d,\"dirty_pct\":1,\"goal_rounds\":true",
			 NPAGES);
		bench_result("writewatch_goal", case_names[goal_case[g].c],
			     mmext_ww_backend_name(goal_case[g].backend), extra, "us", &s);
	}
	for (g = 0; g < G__N; g++)
		free(t[g]);
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "pairs", required_argument, NULL, 256 },
		{ NULL, 0, NULL, 0 },
	};
	int runs = 15, b, c, d;

	bench_init_opts(argc, argv, "writewatch", usage, &runs, extra, opt);
	if (!npairs)
		npairs = runs;
	psz = sysconf(_SC_PAGESIZE);
	for (b = MMEXT_WW_PAGEMAP_SCAN; b <= MMEXT_WW_MPROTECT; b++)
		start(b);
	for (c = C_FIRST; c < C__N; c++)
		for (d = 0; d < (c == C_FIRST ? 1 : (int)ND); d++)
			run_case(c, d, runs);
	goal_pairs(npairs);
	for (b = MMEXT_WW_PAGEMAP_SCAN; b <= MMEXT_WW_MPROTECT; b++) {
		close(kids[b].to);
		close(kids[b].from);
		waitpid(kids[b].pid, NULL, 0);
	}
	printf("\n# ratios: median of the other backend / median of pagemap_scan (higher: "
	       "pagemap_scan faster)\n");
	/* The goals are on the atomic get-and-reset at 1% written. */
	for (c = C_FIRST; c < C_BARE; c++) {
		for (d = 0; d < (c == C_FIRST ? 1 : (int)ND); d++) {
			ratio(MMEXT_WW_MPROTECT, c, d, c == C_ATOMIC && !d ? 10 : 0);
			ratio(MMEXT_WW_SOFT_DIRTY, c, d, c == C_ATOMIC && !d ? 3 : 0);
		}
	}
	for (d = 0; d < (int)ND && have[MMEXT_WW_PAGEMAP_SCAN]; d++)
		printf("ratio %-26s pagemap_scan get_reset/bare_walks = %.2fx%s\n",
		       dirty_pcts[d] == 1 ? "get_reset dirty=1%" : "get_reset dirty=100%",
		       med[MMEXT_WW_PAGEMAP_SCAN][C_GET_RESET][d] /
		       med[MMEXT_WW_PAGEMAP_SCAN][C_BARE][d],
		       d ? "" : "  (goal <= 1.2x)");
	return 0;
}
