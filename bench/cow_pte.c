// SPDX-License-Identifier: GPL-2.0
/*
 * Seed 003's benchmarks: fork() of a process with populated private anonymous memory
 * (4 KiB pages, THP off) with plain fork against COW page tables, each side's VmPTE
 * after fork, the child's write-fault cost after fork (sequential over the whole area,
 * and random sparse writes) and a fork-server loop (fork, the child writes a few pages
 * and exits) in executions per second. Plain and COW runs alternate per repetition.
 * On a kernel without COW page tables only the plain cases run.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
	"Usage: cow_pte --case fork|vmpte|fault-seq|fault-rand|server [--mb N] [--runs R]\n"
	"               [--writes W] [--json FILE]\n"
	"fork:       time fork() of a process with N MiB (default 512) populated\n"
	"vmpte:      VmPTE of parent and child right after fork\n"
	"fault-seq:  the child writes every page once; ns per page\n"
	"fault-rand: the child writes W (default 100000) random pages; ns per write\n"
	"server:     fork, the child writes 4 pages and exits, R times; executions/s\n";

enum { O_CASE = 256, O_MB, O_WRITES };
static const struct option extra_opts[] = {
	{ "case", required_argument, NULL, O_CASE },
	{ "mb", required_argument, NULL, O_MB },
	{ "writes", required_argument, NULL, O_WRITES },
	{ 0 }
};

static const char *bcase = "fork";
static long mb = 512, writes = 100000;
static long cow_opt = -1;

static int parse_opt(int val, const char *arg)
{
	char *end;
	long v;

	if (val == O_CASE) {
		bcase = arg;
		return 0;
	}
	v = strtol(arg, &end, 10);
	if (*end || end == arg)
		return -1;
	if (val == O_MB)
		mb = v;
	else
		writes = v;
	return v < 0 || v > (1L << 20) ? -1 : 0;
}

static long read_option(void)
{
	return bench_read_long("/sys/kernel/mm/cow_pte/prctl_option", -1);
}

static long status_kb(const char *key)
{
	char line[256];
	long val = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			val = strtol(line + strlen(key), NULL, 10);
	if (f)
		fclose(f);
	return val;
}

static char *populate(size_t len)
{
	char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	madvise(p, len, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = (char)(i >> 12 | 1);
	return p;
}

static void set_cow(int on)
{
	if (prctl(cow_opt, on, 0, 0, 0)) {
		perror("prctl");
		exit(1);
	}
}

/* Child body for the fault cases: writes and reports ns per write through a pipe. */
static void child_faults(char *p, size_t len, int wfd, int random_writes)
{
	size_t pages = len >> 12;
	uint64_t x = 0x2545f4914f6cdd1dULL;
	double t0, ns;
	long n = 0;

	t0 = bench_ns();
	if (random_writes) {
		for (n = 0; n < writes; n++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			p[(x % pages) << 12] = 1;
		}
	} else {
		for (size_t i = 0; i < len; i += 4096, n++)
			p[i] = 2;
	}
	ns = (bench_ns() - t0) / (n ? n : 1);
	if (write(wfd, &ns, sizeof(ns)) != sizeof(ns))
		_exit(1);
	_exit(0);
}

int main(int argc, char **argv)
{
	int runs = 10, methods, m, r;
	size_t len;
	char *p;

	bench_init_opts(argc, argv, "cow_pte", usage, &runs, extra_opts, parse_opt);
	cow_opt = read_option();
	methods = cow_opt >= 0 ? 2 : 1;
	len = (size_t)mb << 20;
	p = populate(len ? len : 4096);
	if (!len)
		munmap(p, 4096);

	double *v[2] = { calloc(runs, sizeof(double)), calloc(runs, sizeof(double)) };
	double *v2[2] = { calloc(runs, sizeof(double)), calloc(runs, sizeof(double)) };

	for (r = 0; r < runs; r++) {
		for (m = 0; m < methods; m++) {
			/* ABBA order: drift of a shared machine hits both alike. */
			int cow = methods == 1 ? 0 : (r & 1) ? !m : m;
			int pfd[2], st;
			double t0, t1;
			pid_t pid;

			if (cow >= methods)
				continue;
			if (cow_opt >= 0)
				set_cow(cow);
			if (pipe(pfd))
				return 1;
			if (!strcmp(bcase, "server")) {
				t0 = bench_ns();
				for (int i = 0; i < 20; i++) {
					pid = fork();
					if (!pid) {
						for (int k = 0; k < 4; k++)
							p[(size_t)k * (len / 4)] = 3;
						_exit(0);
					}
					waitpid(pid, &st, 0);
				}
				v[cow][r] = 20 / ((bench_ns() - t0) / 1e9);
				close(pfd[0]);
				close(pfd[1]);
				continue;
			}
			t0 = bench_ns();
			pid = fork();
			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid) {
				double kb;

				if (!strcmp(bcase, "fault-seq") || !strcmp(bcase, "fault-rand"))
					child_faults(p, len, pfd[1], !strcmp(bcase, "fault-rand"));
				kb = status_kb("VmPTE:");
				if (write(pfd[1], &kb, sizeof(kb)) != sizeof(kb))
					_exit(1);
				_exit(0);
			}
			t1 = bench_ns();
			double got = 0;

			if (read(pfd[0], &got, sizeof(got)) != sizeof(got))
				got = -1;
			waitpid(pid, &st, 0);
			close(pfd[0]);
			close(pfd[1]);
			if (!strcmp(bcase, "fork")) {
				v[cow][r] = (t1 - t0) / 1e3;
			} else if (!strcmp(bcase, "vmpte")) {
				v[cow][r] = status_kb("VmPTE:");
				v2[cow][r] = got;
			} else {
				v[cow][r] = got;
			}
		}
	}
	if (cow_opt >= 0)
		set_cow(0);

	for (m = 0; m < methods; m++) {
		const char *name = m ? "cow_pte" : "plain";
		char extra[64], what[64];
		struct bench_stats s = bench_stats(v[m], runs);

		snprintf(extra, sizeof(extra), "\"mb\":%ld", mb);
		snprintf(what, sizeof(what), "%ld MiB", mb);
		if (!strcmp(bcase, "fork")) {
			bench_result("fork", what, name, extra, "us", &s);
		} else if (!strcmp(bcase, "vmpte")) {
			struct bench_stats c = bench_stats(v2[m], runs);

			bench_result("vmpte-parent", what, name, extra, "kB", &s);
			bench_result("vmpte-child", what, name, extra, "kB", &c);
		} else if (!strcmp(bcase, "server")) {
			bench_result("server", what, name, extra, "execs_per_s", &s);
		} else {
			bench_result(bcase, what, name, extra, "ns_per_write", &s);
		}
	}
	return 0;
}
