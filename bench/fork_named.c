// SPDX-License-Identifier: GPL-2.0
/*
 * Seed 000's fork benchmark: a process with many anonymous VMAs forks, the child exits
 * at once, and the parent times fork() until it returns. The same VMAs are timed
 * unnamed and named (a distinct 79-byte name each, the longest the kernel takes), in
 * blocks ordered unnamed, named, named, unnamed, ... so slow drift of a shared machine
 * hits both cases alike. Neighbouring VMAs alternate read-write and read-only so they
 * cannot merge whether named or not.
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

static const char usage[] =
	"Usage: fork_named [--runs N] [--json FILE] [--vmas N] [--pages P] [--warmup W]\n"
	"                  [--blocks B] [--cpu C] [--rt 0|1]\n"
	"Time fork() of a process with N anonymous VMAs (default 64000), unnamed and named,\n"
	"each VMA holding P pages of random data (default 0: unpopulated). N forks per case\n"
	"(--runs, default 200) in B blocks per case (default 2), W untimed forks before each\n"
	"block (default 3), the process pinned to CPU C (default 0; -1: not pinned), the\n"
	"parent SCHED_FIFO so the child cannot run before fork() returns (--rt 0: not).\n";

enum { O_VMAS = 256, O_PAGES, O_WARMUP, O_BLOCKS, O_CPU, O_RT };
static const struct option extra_opts[] = {
	{ "vmas", required_argument, NULL, O_VMAS },
	{ "pages", required_argument, NULL, O_PAGES },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "blocks", required_argument, NULL, O_BLOCKS },
	{ "cpu", required_argument, NULL, O_CPU },
	{ "rt", required_argument, NULL, O_RT },
	{ 0 }
};

static long nvmas = 64000, npages, warmup = 3, blocks = 2, cpu, rt = 1;
static size_t psz;

static int parse_opt(int val, const char *arg)
{
	char *end;
	long v = strtol(arg, &end, 10);

	if (*end || end == arg)
		return -1;
	switch (val) {
	case O_VMAS: nvmas = v; return v < 1 || v > 1000000 ? -1 : 0;
	case O_PAGES: npages = v; return v < 0 || v > 1024 ? -1 : 0;
	case O_WARMUP: warmup = v; return v < 0 ? -1 : 0;
	case O_BLOCKS: blocks = v; return v < 1 || v > 1000 ? -1 : 0;
	case O_CPU: cpu = v; return v < -1 ? -1 : 0;
	case O_RT: rt = v; return v < 0 || v > 1 ? -1 : 0;
	}
	return -1;
}

static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int c, n = 0;

	while (f && (c = getc_unlocked(f)) != EOF)
		n += c == '\n';
	if (f)
		fclose(f);
	return n;
}

/* Random, so no page is the zero page or mergeable by KSM; xorshift is cheap under TCG. */
static void fill_random(char *p, size_t len)
{
	static uint64_t x = 0x9e3779b97f4a7c15ull;
	uint64_t *w = (uint64_t *)p;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		w[i] = x;
	}
}

static int set_names(char *base, size_t vsz, int named)
{
	char name[MMEXT_NAME_MAX + 1];
	long i;
	int ret;

	if (!named)
		return mmext_name_clear(base, nvmas * vsz);
	for (i = 0; i < nvmas; i++) {
		/* Distinct names, each the maximum length. */
		int n = snprintf(name, sizeof(name), "mmext-fork-bench-%07ld-", i);

		memset(name + n, 'x', MMEXT_NAME_MAX - n);
		name[MMEXT_NAME_MAX] = '\0';
		ret = mmext_name_set(base + i * vsz, vsz, name);
		if (ret)
			return ret;
	}
	return 0;
}

static double time_fork(void)
{
	double t0 = bench_ns(), t;
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	t = bench_ns() - t0;
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	/* Reaped before the next fork, so the child's teardown is not timed in it. */
	waitpid(pid, NULL, 0);
	return t / 1e6;
}

int main(int argc, char **argv)
{
	static const char *const cname[2] = { "unnamed", "named" };
	int runs = 200, have_names = 1, maps, ret, k;
	long per_block, b, i, n[2] = { 0, 0 };
	double *t[2], sum[2] = { 0, 0 }, med[2], mean[2];
	size_t vsz, len;
	char *base, extra[256], json[512];
	struct bench_stats s;

	bench_init_opts(argc, argv, "fork_named", usage, &runs, extra_opts, parse_opt);
	psz = sysconf(_SC_PAGESIZE);
	per_block = (runs + blocks - 1) / blocks;
	runs = per_block * blocks;

	if (cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "fork_named: cannot pin to CPU %ld: %s\n", cpu,
				strerror(errno));
	}
	/*
	 * A new child on the parent's CPU may run before the parent returns from fork(),
	 * and its exit (unmapping every VMA) would be timed as fork. The parent runs
	 * SCHED_FIFO and the child, by SCHED_RESET_ON_FORK, as normal: the child waits
	 * until the parent sleeps in waitpid(). Also keeps other work off the CPU.
	 */
	if (rt) {
		struct sched_param sp = { .sched_priority = 1 };

		if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
			fprintf(stderr, "fork_named: cannot run SCHED_FIFO (%s); the child may "
				"run first\n", strerror(errno));
			rt = 0;
		}
	}

	/* One mapping split into VMAs of max(P, 1) pages by alternating protection. */
	vsz = (npages ? npages : 1) * psz;
	len = nvmas * vsz;
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	for (i = 0; i < nvmas; i++) {
		if (npages)
			fill_random(base + i * vsz, npages * psz);
		if (i % 2 && mprotect(base + i * vsz, vsz, PROT_READ)) {
			fprintf(stderr, "fork_named: mprotect at VMA %ld: %s (vm.max_map_count?)\n",
				i, strerror(errno));
			return 1;
		}
	}
	maps = count_maps();
	ret = set_names(base, vsz, 1);
	if (ret) {
		/* Unnamed still measured, so a kernel without names gives a baseline. */
		fprintf(stderr, "fork_named: cannot name VMAs: %s\n", strerror(-ret));
		have_names = 0;
		snprintf(json, sizeof(json), "\"group\":\"fork\",\"case\":\"unavailable\","
			 "\"backend\":\"named\",\"errno\":%d,\"vmas\":%ld,\"pages\":%ld", -ret,
			 nvmas, npages);
		bench_json(json);
	}
	printf("# %ld VMAs of %ld populated pages (%d lines in maps), %d forks per case in "
	       "%ld blocks, %ld warm-up forks per block, CPU %ld, %s\n", nvmas, npages, maps,
	       runs, blocks, warmup, cpu, rt ? "SCHED_FIFO" : "SCHED_OTHER");

	t[0] = calloc(runs, sizeof(double));
	t[1] = calloc(runs, sizeof(double));
	if (!t[0] || !t[1])
		return 1;
	/* Blocks in ABBA order: unnamed, named, named, unnamed, ... */
	for (b = 0; b < 2 * blocks; b++) {
		int named = (b % 4 == 1 || b % 4 == 2);

		if (named && !have_names)
			continue;
		ret = have_names ? set_names(base, vsz, named) : 0;
		if (ret) {
			fprintf(stderr, "fork_named: naming: %s\n", strerror(-ret));
			return 1;
		}
		fprintf(stderr, "fork_named: %ld VMAs x %ld pages: block %ld/%ld %s\n", nvmas,
			npages, b + 1, 2 * blocks, cname[named]);
		for (i = 0; i < warmup; i++)
			time_fork();
		for (i = 0; i < per_block; i++) {
			double x = time_fork();

			t[named][n[named]++] = x;
			sum[named] += x;
		}
	}

	for (k = 0; k < 2; k++) {
		if (!n[k])
			continue;
		mean[k] = sum[k] / n[k];
		s = bench_stats(t[k], n[k]);
		med[k] = s.median;
		snprintf(extra, sizeof(extra), "\"vmas\":%ld,\"pages\":%ld,\"maps\":%d,"
			 "\"mean\":%.6g,\"blocks\":%ld,\"warmup\":%ld,\"cpu\":%ld,\"rt\":%ld", nvmas,
			 npages, maps, mean[k], blocks, warmup, cpu, rt);
		bench_result("fork", cname[k], "fork", extra, "ms", &s);
	}
	if (n[0] && n[1]) {
		double rmean = 100 * (mean[1] / mean[0] - 1), rmed = 100 * (med[1] / med[0] - 1);

		printf("# %ld VMAs x %ld pages: unnamed %.3f ms mean / %.3f median, named %.3f / "
		       "%.3f, regression %+.1f%% (mean) %+.1f%% (median)\n", nvmas, npages,
		       mean[0], med[0], mean[1], med[1], rmean, rmed);
		snprintf(json, sizeof(json), "\"group\":\"fork\",\"case\":\"regression\","
			 "\"vmas\":%ld,\"pages\":%ld,\"mean_pct\":%.4g,\"median_pct\":%.4g",
			 nvmas, npages, rmean, rmed);
		bench_json(json);
	}
	return 0;
}
