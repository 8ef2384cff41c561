// SPDX-License-Identifier: GPL-2.0
/*
 * Reference pages' real-program question (asked by upstream's v3 cover letter): what
 * does pattern-initialising the heap cost an allocation-heavy program? Runs a command
 * under pattern_shim.so once per method (anon, memset, refpage, emulated) and times it:
 * real time and maximum RSS of the process (wait4()), median over the runs; methods
 * alternate within each round so that a slow spell of the machine hits them all. The
 * command's standard output is hashed and must be the same under every method: the shim
 * must not change what the program does.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext/probe.h>
#include "bench.h"

static const char usage[] =
	"Usage: pattern_heap [--runs N] [--json FILE] --cmd 'PROGRAM ARGS...' [--shim SO]\n"
	"                    [--min BYTES]\n"
	"Real time and max RSS of PROGRAM with its large blocks pattern-initialised by each\n"
	"method of pattern_shim.so (default: beside this program). ARGS are split at spaces.\n";

enum { M_ANON, M_MEMSET, M_REFPAGE, M_EMULATED, M__N };
static const char *const names[M__N] = { "anon", "memset", "refpage", "emulated" };

static char *cmd[64], shim[4096], rel[4096], min_size[32] = "131072";

static int opt(int val, const char *arg)
{
	char *s, *tok;
	int n = 0;

	switch (val) {
	case 256:
		s = strdup(arg);
		for (tok = strtok(s, " "); tok && n < 63; tok = strtok(NULL, " "))
			cmd[n++] = tok;
		cmd[n] = NULL;
		return n ? 0 : -1;
	case 257:
		snprintf(shim, sizeof(shim), "%s", arg);
		return 0;
	case 258:
		snprintf(min_size, sizeof(min_size), "%s", arg);
		return 0;
	}
	return -1;
}

struct run {
	double secs;
	long maxrss_kib;
	unsigned long long hash;
	unsigned long blocks;
};

/* One run of the command under method m; -1 if it failed. */
static int run_once(int m, struct run *r)
{
	char stats[64], buf[1 << 16];
	unsigned long long h = 0xcbf29ce484222325ULL;
	struct rusage ru;
	int pfd[2], status;
	double t0;
	ssize_t n, i;
	pid_t pid;
	FILE *f;

	snprintf(stats, sizeof(stats), "/tmp/pattern_heap.%d.stats", (int)getpid());
	unlink(stats);
	if (pipe(pfd))
		return -1;
	t0 = bench_ns();
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		setenv("LD_PRELOAD", shim, 1);
		setenv("MMEXT_SHIM", names[m], 1);
		setenv("MMEXT_SHIM_MIN", min_size, 1);
		setenv("MMEXT_SHIM_STATS", stats, 1);
		execvp(cmd[0], cmd);
		perror(cmd[0]);
		_exit(127);
	}
	close(pfd[1]);
	while ((n = read(pfd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		for (i = 0; i < n; i++)
			h = (h ^ (unsigned char)buf[i]) * 0x100000001b3ULL;
	close(pfd[0]);
	if (wait4(pid, &status, 0, &ru) != pid)
		return -1;
	r->secs = (bench_ns() - t0) / 1e9;
	r->maxrss_kib = ru.ru_maxrss;
	r->hash = h;
	r->blocks = 0;
	f = fopen(stats, "r");
	if (f) {
		if (fscanf(f, "blocks=%lu", &r->blocks) != 1)
			r->blocks = 0;
		fclose(f);
	}
	unlink(stats);
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "pattern_heap: %s under %s: status %#x\n", cmd[0], names[m], status);
		return -1;
	}
	return 0;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "cmd", required_argument, NULL, 256 },
		{ "shim", required_argument, NULL, 257 },
		{ "min", required_argument, NULL, 258 },
		{ 0 }
	};
	struct run first[M__N], r;
	double *t[M__N];
	long *rss[M__N];
	bool avail[M__N];
	char json[512], *slash;
	int runs = 5, m, i, bad = 0;
	struct bench_stats s;

	bench_init_opts(argc, argv, "pattern_heap", usage, &runs, extra, opt);
	if (!cmd[0]) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	if (!shim[0]) {
		slash = strrchr(argv[0], '/');
		snprintf(shim, sizeof(shim), "%.*s/pattern_shim.so",
			 slash ? (int)(slash - argv[0]) : 1, slash ? argv[0] : ".");
	}
	if (access(shim, R_OK)) {
		perror(shim);
		return 2;
	}
	/* A relative path would be resolved against the program's directory. */
	if (shim[0] != '/' && !realpath(strcpy(rel, shim), shim))
		return 2;
	/* One untimed run per method: warms the caches, checks the output. */
	for (m = 0; m < M__N; m++) {
		avail[m] = m != M_REFPAGE || !access(MMEXT_REFPAGE_SYSFS, R_OK) ||
			   !access(MMEXT_REFPAGE_PAGES_SYSFS, R_OK);
		t[m] = calloc(runs, sizeof(double));
		rss[m] = calloc(runs, sizeof(long));
		if (!avail[m]) {
			printf("%-14s %-26s %-13s unavailable: no %s or %s\n", "pattern_heap",
			       "-", names[m], MMEXT_REFPAGE_SYSFS, MMEXT_REFPAGE_PAGES_SYSFS);
			snprintf(json, sizeof(json), "\"group\":\"pattern_heap\",\"case\":"
				 "\"unavailable\",\"backend\":\"%s\",\"errno\":%d", names[m], ENOSYS);
			bench_json(json);
			continue;
		}
		if (run_once(m, &first[m]))
			return 1;
		if (first[m].hash != first[M_ANON].hash) {
			printf("# pattern_heap: output under %s differs from anon's\n", names[m]);
			bad = 1;
		}
	}
	for (i = 0; i < runs; i++)
		for (m = 0; m < M__N; m++) {
			if (!avail[m])
				continue;
			if (run_once(m, &r))
				return 1;
			t[m][i] = r.secs;
			rss[m][i] = r.maxrss_kib;
			if (r.hash != first[M_ANON].hash) {
				printf("# pattern_heap: output under %s changed\n", names[m]);
				bad = 1;
			}
		}
	for (m = 0; m < M__N; m++) {
		if (!avail[m])
			continue;
		qsort(rss[m], runs, sizeof(long), cmp_long);
		s = bench_stats(t[m], runs);
		snprintf(json, sizeof(json), "\"maxrss_kib\":%ld,\"maxrss_min_kib\":%ld,"
			 "\"maxrss_max_kib\":%ld,\"blocks\":%lu,\"output_fnv\":\"%016llx\","
			 "\"output_same\":%s", rss[m][runs / 2], rss[m][0], rss[m][runs - 1],
			 first[m].blocks, first[m].hash,
			 first[m].hash == first[M_ANON].hash ? "true" : "false");
		bench_result("pattern_heap", "real_time", names[m], json, "s", &s);
	}
	printf("\n# %s: median real time, median max RSS, large blocks per run, "
	       "output FNV-1a\n", cmd[0]);
	for (m = 0; m < M__N; m++)
		if (avail[m])
			printf("#   %-9s %8.3f s %9ld KiB %7lu blocks  %016llx\n", names[m],
			       bench_stats(t[m], runs).median, rss[m][runs / 2], first[m].blocks,
			       first[m].hash);
	return bad;
}
