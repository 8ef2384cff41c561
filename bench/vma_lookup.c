// SPDX-License-Identifier: GPL-2.0
/*
 * VMA queries at 1k and 60k VMAs: point lookup and full listing through libmmext with
 * PROCMAP_QUERY and with the text of /proc/self/maps, and the mmext command against
 * procps pmap on this same process. The VMAs are single pages of alternating
 * protection, so they cannot merge.
 *
 * --vmas N measures the kernel's side only (lookups, read(2), listings) at N VMAs;
 * --writer adds a thread that unmaps and maps back random pages of its own range the
 * whole time, so that readers meet a concurrent mmap_lock writer (lockless maps).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

extern char **environ;

static const char usage[] =
	"Usage: vma_lookup [--runs N] [--json FILE] [--vmas N] [--writer] [--lockless 0|1|ab]\n"
	"                  [--file]\n"
	"Time VMA lookups and listings at 1k and 60k VMAs, and mmext maps against pmap.\n"
	"--vmas N: only N VMAs, kernel side only; --writer: with a concurrent mmap writer;\n"
	"--lockless 0|1: set /sys/kernel/mm/lockless_maps/enabled for the run (root; the\n"
	"mmap_lock reader and the lockless one on the same boot), restored at exit;\n"
	"--lockless ab (with --vmas): both readers in alternate runs, as pairs;\n"
	"--file: the VMAs map a memfd instead of anonymous memory.\n"
	"The mmext binary is $MMEXT, else ../bin/mmext next to this program.\n";

static long only_vmas;		/* --vmas */
static int with_writer;		/* --writer */
static int file_vmas;		/* --file */
static int lockless = -1;	/* --lockless: 0, 1, or AB for both in pairs */
#define AB 2
static volatile int writer_stop;
static unsigned long writer_ops;

static int opt(int val, const char *arg)
{
	char *end;

	switch (val) {
	case 256:
		only_vmas = strtol(arg, &end, 10);
		return *end || only_vmas < 2 ? -1 : 0;
	case 257:
		with_writer = 1;
		return 0;
	case 259:
		file_vmas = 1;
		return 0;
	case 258:
		lockless = !strcmp(arg, "1") ? 1 : !strcmp(arg, "0") ? 0 : !strcmp(arg, "ab") ? AB : -2;
		return lockless < 0 ? -1 : 0;
	}
	return -1;
}

static size_t psz;
static int nvmas;		/* VMAs of the process when measured */
static char mmext_path[PATH_MAX];
static char pidstr[16];

static int count_vmas(void)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_TEXT);
	struct mmext_maps *m;
	struct mmext_vma v;
	int n = 0;

	if (mmext_maps_open(0, &o, &m))
		return -1;
	while (mmext_maps_next(m, &v) > 0)
		n++;
	mmext_maps_close(m);
	return n;
}

static char *make_vmas(size_t pages)
{
	int fd = -1, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
	char *p;
	size_t i;

	/*
	 * --file: lines with a path to print. One memfd for all the VMAs; the lockless
	 * maps reader takes each one's VMA lock, as PROCMAP_QUERY does.
	 */
	if (file_vmas) {
		fd = memfd_create("vma_lookup", MFD_CLOEXEC);
		if (fd < 0 || ftruncate(fd, pages * psz))
			return NULL;
		flags = MAP_PRIVATE;
	}
	p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE, flags, fd, 0);
	if (fd >= 0)
		close(fd);
	if (p == MAP_FAILED)
		return NULL;
	for (i = 1; i < pages; i += 2)
		if (mprotect(p + i * psz, psz, PROT_READ))
			return NULL;
	return p;
}

static void extra_of(char *buf, size_t n)
{
	snprintf(buf, n, "\"vmas\":%d,\"writer\":%s,\"lockless\":%d,\"file\":%s", nvmas,
		 with_writer ? "true" : "false", lockless, file_vmas ? "true" : "false");
}

/* Size class of a case name: the historical 1k/60k, or the exact count with --vmas. */
static const char *size_name(void)
{
	static char buf[64];

	if (!only_vmas)
		return nvmas > 10000 ? "60k" : "1k";
	snprintf(buf, sizeof(buf), "%ldk%s%s%s", only_vmas / 1000, file_vmas ? " file" : "",
		 with_writer ? " +writer" : "",
		 lockless == 0 ? " mmap_lock reader" : lockless == 1 ? " lockless reader" : "");
	return buf;
}

static void *writer(void *arg)
{
	size_t pages = 1024;
	char *r = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t x = 2463534242ULL;

	if (r == MAP_FAILED)
		return NULL;
	while (!writer_stop) {
		char *p;

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		p = r + (x % pages) * psz;
		munmap(p, psz);
		mmap(p, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		     -1, 0);
		writer_ops++;
	}
	return NULL;
}

static const char *backend_name(int b)
{
	return b == MMEXT_MAPS_IOCTL ? "procmap_query" : "text";
}

/* One run of per_run lookups at random pages of the region: microseconds per lookup. */
static double lookup_run(struct mmext_maps *m, char *region, size_t pages, int per_run,
			 uint64_t *x)
{
	struct mmext_vma v;
	double t0 = bench_ns();
	int i, ret;

	for (i = 0; i < per_run; i++) {
		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		ret = mmext_maps_find(m, (uintptr_t)region + (*x % pages) * psz, 0, &v);
		if (ret)
			fprintf(stderr, "vma_lookup: find: %s\n", strerror(-ret));
	}
	return (bench_ns() - t0) / 1e3 / per_run;
}

static void lookups(char *region, size_t pages, int backend, int runs, int per_run)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = backend);
	double *t = calloc(runs, sizeof(double));
	struct mmext_maps *m;
	struct bench_stats s;
	uint64_t x = 88172645463325252ULL;
	char extra[96], what[64];
	int r, ret;

	ret = mmext_maps_open(0, &o, &m);
	if (ret) {
		printf("%-14s %-26s %-13s unavailable: %s\n", "vma", "point_lookup",
		       backend_name(backend), strerror(-ret));
		free(t);
		return;
	}
	for (r = 0; r < runs; r++)
		t[r] = lookup_run(m, region, pages, per_run, &x);
	s = bench_stats(t, runs);
	extra_of(extra, sizeof(extra));
	snprintf(what, sizeof(what), "point_lookup %s", size_name());
	bench_result("vma", what, backend_name(backend), extra, "us_per_lookup", &s);
	mmext_maps_close(m);
	free(t);
}

static double listing(int backend, int runs)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = backend);
	double *t = calloc(runs, sizeof(double));
	struct mmext_maps *m;
	struct mmext_vma v;
	struct bench_stats s;
	char extra[96], what[64];
	int r, n = 0, ret;

	ret = mmext_maps_open(0, &o, &m);
	if (ret) {
		printf("%-14s %-26s %-13s unavailable: %s\n", "vma", "full_listing",
		       backend_name(backend), strerror(-ret));
		free(t);
		return 0;
	}
	for (r = 0; r < runs; r++) {
		double t0 = bench_ns();

		mmext_maps_rewind(m);
		for (n = 0; mmext_maps_next(m, &v) > 0; n++)
			;
		t[r] = (bench_ns() - t0) / 1e6;
	}
	if (n < nvmas - 4 || n > nvmas + 4)
		printf("# WARNING: listing saw %d VMAs, expected %d\n", n, nvmas);
	s = bench_stats(t, runs);
	extra_of(extra, sizeof(extra));
	snprintf(what, sizeof(what), "full_listing %s", size_name());
	bench_result("vma", what, backend_name(backend), extra, "ms", &s);
	mmext_maps_close(m);
	free(t);
	return s.median;
}

/* One read(2) of the whole text, in ms: the kernel's share of any maps reader, pmap's too. */
static double read_run(void)
{
	static char buf[1 << 16];
	double t0 = bench_ns();
	int fd = open("/proc/self/maps", O_RDONLY);

	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		;
	if (fd >= 0)
		close(fd);
	return (bench_ns() - t0) / 1e6;
}

/* Returns the median, in ms. */
static double raw_read(int runs)
{
	double *t = calloc(runs, sizeof(double));
	struct bench_stats s;
	char extra[96], what[64];
	int r;

	for (r = 0; r < runs; r++)
		t[r] = read_run();
	s = bench_stats(t, runs);
	extra_of(extra, sizeof(extra));
	snprintf(what, sizeof(what), "read(2) only %s", size_name());
	bench_result("vma", what, "text", extra, "ms", &s);
	free(t);
	return s.median;
}

/* Run argv with stdout to /dev/null; ms per run, or a negative value if it failed. */
static double command(char *const argv[], const char *label, const char *what, int runs)
{
	double *t = calloc(runs, sizeof(double));
	posix_spawn_file_actions_t fa;
	struct bench_stats s;
	char extra[96];
	int r, status;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (r = 0; r < runs; r++) {
		double t0 = bench_ns();

		/* posix_spawn uses CLONE_VM: no copy of our 60k VMAs is timed. */
		if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) ||
		    waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
		    WEXITSTATUS(status)) {
			printf("%-14s %-26s %-13s failed to run %s\n", "command", what, label,
			       argv[0]);
			posix_spawn_file_actions_destroy(&fa);
			free(t);
			return -1;
		}
		t[r] = (bench_ns() - t0) / 1e6;
	}
	posix_spawn_file_actions_destroy(&fa);
	s = bench_stats(t, runs);
	extra_of(extra, sizeof(extra));
	bench_result("command", what, label, extra, "ms", &s);
	free(t);
	return s.median;
}

static void ratio(const char *what, double slow, double fast, double goal)
{
	char json[256];

	if (slow <= 0 || fast <= 0)
		return;
	printf("ratio %-40s = %.2fx", what, slow / fast);
	if (goal > 0)
		printf("  (goal >= %.0fx: %s)", goal, slow / fast >= goal ? "met" : "NOT met");
	putchar('\n');
	snprintf(json, sizeof(json), "\"group\":\"vma\",\"case\":\"ratio\",\"what\":\"%s\","
		 "\"vmas\":%d,\"ratio\":%.4g,\"goal\":%.0f,\"goal_met\":%s", what, nvmas,
		 slow / fast, goal, goal > 0 && slow / fast >= goal ? "true" : "false");
	bench_json(json);
}

static void measure(char *region, size_t pages, int runs)
{
	char *mm[] = { mmext_path, "maps", pidstr, NULL };
	char *mmr[] = { mmext_path, "maps", "--rss", pidstr, NULL };
	char *pm[] = { "pmap", pidstr, NULL };
	char *pmx[] = { "pmap", "-x", pidstr, NULL };
	int big = pages > 10000, have_pmap = bench_in_path("pmap"), have_ioctl;
	double text, ioc, raw, a, b;
	struct mmext_feature_status st;
	char what[96];

	nvmas = count_vmas();
	printf("# %d VMAs in this process\n", nvmas);
	mmext_probe(MMEXT_FEAT_PROCMAP_QUERY, &st);
	have_ioctl = st.available;
	if (have_ioctl)
		lookups(region, pages, MMEXT_MAPS_IOCTL, runs, big ? 2000 : 5000);
	else
		printf("# PROCMAP_QUERY unavailable: %s\n", st.detail);
	/* A text lookup reads the file up to the address: few per run at 60k. */
	lookups(region, pages, MMEXT_MAPS_TEXT, runs, big ? 2 : 50);
	raw = raw_read(runs);
	text = listing(MMEXT_MAPS_TEXT, runs);
	ioc = have_ioctl ? listing(MMEXT_MAPS_IOCTL, runs) : 0;
	snprintf(what, sizeof(what), "full_listing ioctl/text at %d VMAs", nvmas);
	ratio(what, ioc, text, 0);
	if (only_vmas)
		return;

	if (access(mmext_path, X_OK)) {
		printf("# %s not found: build it with make -C cli (or set $MMEXT)\n", mmext_path);
		return;
	}
	a = command(mm, "mmext", "maps", runs);
	if (!have_pmap) {
		printf("# pmap not installed (apt-get install procps): no comparison\n");
		return;
	}
	b = command(pm, "pmap", "maps", runs);
	snprintf(what, sizeof(what), "pmap/mmext maps at %d VMAs", nvmas);
	ratio(what, b, a, big ? 5 : 0);
	/* The kernel's text is in both: no maps reader gets above this ratio. */
	snprintf(what, sizeof(what), "pmap/read(2) only at %d VMAs (bound)", nvmas);
	ratio(what, b, raw, 0);
	snprintf(what, sizeof(what), "pmap/mmext maps beyond read(2) at %d VMAs", nvmas);
	ratio(what, b - raw, a - raw, 0);
	/* smaps walks page tables: the slow, opt-in path; fewer runs. */
	a = command(mmr, "mmext", "maps --rss / pmap -x", runs > 3 ? 3 : runs);
	b = command(pmx, "pmap", "maps --rss / pmap -x", runs > 3 ? 3 : runs);
	snprintf(what, sizeof(what), "pmap -x / mmext maps --rss at %d VMAs", nvmas);
	ratio(what, b, a, 0);
}

#define LOCKLESS_SWITCH "/sys/kernel/mm/lockless_maps/enabled"

/* Write the lockless maps switch; returns the old value, or -1 with a message. */
static int set_switch(int val)
{
	char old = 0;
	int fd = open(LOCKLESS_SWITCH, O_RDWR);

	if (fd < 0 || read(fd, &old, 1) != 1 || pwrite(fd, val ? "1" : "0", 1, 0) != 1) {
		fprintf(stderr, "vma_lookup: %s: %s\n", LOCKLESS_SWITCH, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return old == '1';
}

/* Both readers' rows, then the pairs as one record ("a": mmap_lock reader, "b": lockless). */
static void paired_result(const char *what, const char *backend, const char *unit,
			  double *t[2], int runs)
{
	double *v = malloc(runs * sizeof(*v));
	char json[256], extra[96], name[96];
	struct bench_stats s;
	int reader;

	for (reader = 0; reader < 2; reader++) {
		lockless = reader;	/* names the row, as a single-reader run would */
		memcpy(v, t[reader], runs * sizeof(*v));
		s = bench_stats(v, runs);
		extra_of(extra, sizeof(extra));
		snprintf(name, sizeof(name), "%s %s", what, size_name());
		bench_result("vma", name, backend, extra, unit, &s);
	}
	lockless = AB;
	snprintf(json, sizeof(json), "\"group\":\"vma\",\"case\":\"regression\",\"what\":\"%s\","
		 "\"backend\":\"%s\",\"vmas\":%d,\"file\":%s", what, backend, nvmas,
		 file_vmas ? "true" : "false");
	bench_pairs(json, t[0], t[1], runs);
	free(v);
}

/*
 * --lockless ab: the patched kernel's two readers in alternate runs, AB then BA, so that
 * drift (TCG's translation cache, a busy host) scales both alike and cancels in each
 * pair's ratio; the suite turns the pairs into an interval (pairstats.py).
 */
static int paired(char *region, size_t pages, int runs)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_IOCTL);
	double *rd[2], *lk[2];
	struct mmext_maps *m = NULL;
	uint64_t x = 88172645463325252ULL;
	int r, k, reader, ret = 0;

	nvmas = count_vmas();
	printf("# %d VMAs in this process; both readers in alternate runs\n", nvmas);
	if (mmext_maps_open(0, &o, &m)) {
		printf("# PROCMAP_QUERY unavailable: maps read(2) only\n");
		m = NULL;
	}
	for (reader = 0; reader < 2; reader++) {
		rd[reader] = calloc(runs, sizeof(double));
		lk[reader] = calloc(runs, sizeof(double));
	}
	/* Warm-up, untimed: the first reads after start-up are slower for both. */
	for (r = -1; r < runs; r++) {
		for (k = 0; k < 2; k++) {
			reader = (r + 2 + k) % 2;
			if (set_switch(reader) < 0) {
				ret = 1;
				goto out;
			}
			if (r < 0) {
				read_run();
				if (m)
					lookup_run(m, region, pages, 5000, &x);
				continue;
			}
			rd[reader][r] = read_run();
			if (m)
				lk[reader][r] = lookup_run(m, region, pages, 5000, &x);
		}
	}
	paired_result("read(2) only", "text", "ms", rd, runs);
	if (m)
		paired_result("point_lookup", "procmap_query", "us_per_lookup", lk, runs);
out:
	mmext_maps_close(m);
	for (reader = 0; reader < 2; reader++) {
		free(rd[reader]);
		free(lk[reader]);
	}
	return ret;
}

int main(int argc, char **argv)
{
	int runs = 7;
	long max_map;
	size_t big = 60000;
	char exe[PATH_MAX], *region;
	ssize_t n;

	static const struct option extra[] = {
		{ "vmas", required_argument, NULL, 256 },
		{ "writer", no_argument, NULL, 257 },
		{ "lockless", required_argument, NULL, 258 },
		{ "file", no_argument, NULL, 259 },
		{ NULL, 0, NULL, 0 },
	};
	int old_switch = -1, ret = 0;
	pthread_t wt;

	bench_init_opts(argc, argv, "vma_lookup", usage, &runs, extra, opt);
	psz = sysconf(_SC_PAGESIZE);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)getpid());
	if (getenv("MMEXT")) {
		snprintf(mmext_path, sizeof(mmext_path), "%s", getenv("MMEXT"));
	} else {
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
		snprintf(mmext_path, sizeof(mmext_path), "%s/../bin/mmext", dirname(exe));
	}
	max_map = bench_read_long("/proc/sys/vm/max_map_count", 65530);
	if ((long)big + 200 > max_map) {
		big = max_map - 200;
		printf("# vm.max_map_count is %ld: the large case uses %zu VMAs\n", max_map, big);
	}

	if (lockless == AB && !only_vmas) {
		fprintf(stderr, "vma_lookup: --lockless ab needs --vmas N\n");
		return 2;
	}
	if (lockless >= 0) {
		old_switch = set_switch(lockless == AB ? 0 : lockless);
		if (old_switch < 0)
			return 1;
		if (lockless != AB)
			printf("# %s reader (lockless_maps/enabled = %d)\n",
			       lockless ? "lockless" : "mmap_lock", lockless);
	}
	if (with_writer && pthread_create(&wt, NULL, writer, NULL)) {
		perror("starting the writer");
		return 1;
	}
	if (only_vmas) {
		region = make_vmas(only_vmas);
		if (!region) {
			perror("making VMAs");
			return 1;
		}
		if (lockless == AB)
			ret = paired(region, only_vmas, runs);
		else
			measure(region, only_vmas, runs);
		if (with_writer) {
			writer_stop = 1;
			pthread_join(wt, NULL);
			printf("# the writer made %lu munmap+mmap pairs\n", writer_ops);
		}
		if (old_switch >= 0)
			set_switch(old_switch);
		return ret;
	}
	region = make_vmas(1000);
	if (!region) {
		perror("making 1k VMAs");
		return 1;
	}
	measure(region, 1000, runs);
	munmap(region, 1000 * psz);
	region = make_vmas(big);
	if (!region) {
		perror("making 60k VMAs");
		return 1;
	}
	measure(region, big, runs);
	munmap(region, big * psz);
	return 0;
}
