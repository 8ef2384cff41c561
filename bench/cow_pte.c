// SPDX-License-Identifier: GPL-2.0
/*
 * COW page tables' benchmarks: fork() of a process with populated private anonymous memory
 * (4 KiB pages, THP off) with plain fork against COW page tables, each side's VmPTE
 * after fork, the child's write-fault cost after fork (sequential over the whole area,
 * and random sparse writes), a fork-server loop (fork, the child writes a few pages
 * and exits) in executions per second, the reclaim of a fork server's memory
 * (memory.reclaim of a cgroup v2 group) once its children have gone and while one
 * still holds it, and move_pages() of memory a live child holds.
 *
 * Plain and COW runs alternate in one process (ABBA), so each repetition gives a pair
 * measured a moment apart on the same boot: besides each side's summary, a "regression"
 * line with both sides' values lets bench/pairstats.py put an interval on COW / plain.
 * On a kernel without COW page tables only the plain cases run.
 *
 * Timing: the parent runs pinned and SCHED_FIFO (its children reset to normal policy
 * but inherit the pin), so a new child cannot run, and exit, inside the timed fork():
 * it runs once the parent sleeps. A plain child's exit unmaps every page and would
 * otherwise be timed, in part, as the parent's fork.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

static const char usage[] =
	"Usage: cow_pte --case fork|vmpte|fault-seq|fault-rand|server|reclaim|reclaim-held|\n"
	"                      migrate [--mb N]\n"
	"               [--runs R] [--writes W] [--children C] [--no-rt] [--json FILE]\n"
	"fork:       time fork() of a process with N MiB (default 512) populated\n"
	"vmpte:      VmPTE of parent and child right after fork\n"
	"fault-seq:  the child writes every page once; ns per page\n"
	"fault-rand: the child writes W (default 100000) random pages; ns per write\n"
	"server:     fork, the child writes 4 pages and exits, 20 times; executions/s\n"
	"reclaim:    a process with N MiB forks C (default 16) children that write 4 pages\n"
	"            and exit, then memory.reclaim of its cgroup asks for N MiB; ms and\n"
	"            MiB reclaimed (needs cgroup v2 at /sys/fs/cgroup and N MiB of free swap)\n"
	"reclaim-held: the same while one more child lives and holds the memory\n"
	"migrate:    a process with N MiB forks a child that holds them, then move_pages()\n"
	"            (MPOL_MF_MOVE_ALL) moves them all to the other NUMA node; ms\n"
	"--no-rt:    do not pin the parent or run it SCHED_FIFO\n"
	"Each case runs R (default 10) repetitions of plain and COW fork, alternating.\n";

enum { O_CASE = 256, O_MB, O_WRITES, O_CHILDREN, O_NORT };
static const struct option extra_opts[] = {
	{ "case", required_argument, NULL, O_CASE },
	{ "mb", required_argument, NULL, O_MB },
	{ "writes", required_argument, NULL, O_WRITES },
	{ "children", required_argument, NULL, O_CHILDREN },
	{ "no-rt", no_argument, NULL, O_NORT },
	{ 0 }
};

static const char *bcase = "fork";
static long mb = 512, writes = 100000, children = 16;
static int have_cow;	/* the kernel shares page tables when asked (libmmext) */
static int rt = 1;

static int parse_opt(int val, const char *arg)
{
	char *end;
	long v;

	if (val == O_CASE) {
		bcase = arg;
		return 0;
	}
	if (val == O_NORT) {
		rt = 0;
		return 0;
	}
	v = strtol(arg, &end, 10);
	if (*end || end == arg)
		return -1;
	if (val == O_MB)
		mb = v;
	else if (val == O_CHILDREN)
		children = v;
	else
		writes = v;
	return v < 0 || v > (1L << 20) ? -1 : 0;
}

/* Write @s to @dir/@name; 0 or -errno. */
static int write_file(const char *dir, const char *name, const char *s)
{
	char path[256];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, s, strlen(s));
	n = n < 0 ? -errno : 0;
	close(fd);
	return n;
}

static long cg_long(const char *dir, const char *name)
{
	char path[256];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return bench_read_long(path, -1);
}

/* Pinned to the CPU it runs on and SCHED_FIFO; children normal, same CPU (see top). */
static void timing_mode(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (!rt)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu < 0 ? 0 : cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "cow_pte: cannot pin to CPU %d: %s\n", cpu, strerror(errno));
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		fprintf(stderr, "cow_pte: cannot run SCHED_FIFO (%s); a child may run inside "
			"the timed fork\n", strerror(errno));
		rt = 0;
	}
}

/* What else shapes the figures: NUMA balancing, THP, swap, the timing mode. */
static void settings(void)
{
	char thp[128] = "unknown", json[512];
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "r");

	if (f) {
		if (fgets(thp, sizeof(thp), f))
			thp[strcspn(thp, "\n\"\\")] = '\0';
		fclose(f);
	}
	snprintf(json, sizeof(json), "\"group\":\"settings\",\"case\":\"%s\","
		 "\"numa_balancing\":%ld,\"thp\":\"%s\",\"swap_kb\":%ld,\"rt\":%d,"
		 "\"cow_enabled\":%ld", bcase,
		 bench_read_long("/proc/sys/kernel/numa_balancing", -1), thp,
		 bench_proc_kb("/proc/meminfo", "SwapTotal"), rt,
		 bench_read_long("/sys/kernel/mm/cow_pte/enabled", -1));
	bench_json(json);
}

/* COW against plain, pair by pair, for bench/pairstats.py. */
static void pairs(const char *measure, double *plain, double *cow, int n)
{
	char head[192];

	snprintf(head, sizeof(head), "\"group\":\"pairs\",\"case\":\"regression\","
		 "\"measure\":\"%s\",\"what\":\"%s %ld MiB\",\"backend\":\"cow_pte\","
		 "\"mb\":%ld", measure, measure, mb, mb);
	bench_pairs(head, plain, cow, n);
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
	int err = mmext_cow_pte_set(on);

	if (err) {
		fprintf(stderr, "cow_pte: mmext_cow_pte_set(%d): %s\n", on, strerror(-err));
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

/* A reason the reclaim case cannot run here, or NULL. */
static const char *reclaim_unavailable(size_t len, char *why, size_t sz)
{
	char ctl[256] = "";
	FILE *f = fopen("/sys/fs/cgroup/cgroup.subtree_control", "r");
	long swap_free = bench_proc_kb("/proc/meminfo", "SwapFree");

	if (!f)
		return "no cgroup v2 hierarchy at /sys/fs/cgroup";
	if (!fgets(ctl, sizeof(ctl), f))
		ctl[0] = '\0';
	fclose(f);
	if (!strstr(ctl, "memory"))
		return "the memory controller is not enabled for child groups of /sys/fs/cgroup";
	if (swap_free < (long)(len >> 10)) {
		snprintf(why, sz, "anonymous memory needs swap: %ld kB free, %zu kB wanted",
			 swap_free < 0 ? 0 : swap_free, len >> 10);
		return why;
	}
	return NULL;
}

/*
 * A child that holds its parent's memory, as it is after fork, until @go closes;
 * @wr, the write end of its pipe if this process has it, or -1.
 * -1 if fork failed, else its pid.
 */
static pid_t holder(int go, int wr)
{
	pid_t pid = fork();
	char c;

	if (!pid) {
		if (wr >= 0)
			close(wr);
		_exit(read(go, &c, 1) < 0);
	}
	return pid;
}

/*
 * The reclaim case's worker: joins @cg, populates, forks @children children that
 * each write 4 pages and exit (a fork server), with @held one more child that holds
 * the memory, then says so on @ready and waits for @go to close.
 */
static void reclaim_worker(const char *cg, size_t len, int cow, int held, int ready, int go)
{
	char c = 0, *p;
	pid_t h = 0;
	int st;

	if (write_file(cg, "cgroup.procs", "0"))
		_exit(3);
	if (have_cow && mmext_cow_pte_set(cow))
		_exit(4);
	p = populate(len);
	for (long i = 0; i < children; i++) {
		pid_t pid = fork();

		if (pid < 0)
			_exit(5);
		if (!pid) {
			for (int k = 0; k < 4; k++)
				p[(size_t)k * (len / 4)] = 3;
			_exit(0);
		}
		waitpid(pid, &st, 0);
	}
	if (held && (h = holder(go, -1)) < 0)
		_exit(8);
	if (write(ready, &c, 1) != 1)
		_exit(6);
	if (read(go, &c, 1) < 0)
		_exit(7);
	if (h && (waitpid(h, &st, 0) != h || st))
		_exit(9);
	_exit(0);
}

/* No result for @group: why it cannot run here. */
static void unavailable(const char *group, const char *why)
{
	char json[256];

	printf("cow_pte: %s: SKIP: %s\n", group, why);
	snprintf(json, sizeof(json), "\"group\":\"%s\",\"case\":\"unavailable\","
		 "\"reason\":\"%s\"", group, why);
	bench_json(json);
}

/* The reclaim and reclaim-held cases */
static int reclaim_case(int runs, int methods, int held)
{
	const char *group = held ? "reclaim-held" : "reclaim";
	const char *got_group = held ? "reclaimed-held" : "reclaimed";
	size_t len = (size_t)mb << 20;
	double *t[2], *got[2];
	char cg[128], why[160], req[32], extra[96], what[64];
	const char *no = reclaim_unavailable(len, why, sizeof(why));
	int r, m, failed = 0;

	if (!no) {
		snprintf(cg, sizeof(cg), "/sys/fs/cgroup/cow_pte_bench.%d", (int)getpid());
		if (mkdir(cg, 0755) && errno != EEXIST) {
			snprintf(why, sizeof(why), "cannot create %s: %s", cg, strerror(errno));
			no = why;
		}
	}
	if (no) {
		unavailable(group, no);
		return 0;
	}
	for (m = 0; m < 2; m++) {
		t[m] = calloc(runs, sizeof(double));
		got[m] = calloc(runs, sizeof(double));
	}
	snprintf(req, sizeof(req), "%zu", len);
	for (r = 0; r < runs && !failed; r++) {
		for (m = 0; m < methods; m++) {
			int cow = methods == 1 ? 0 : (r & 1) ? !m : m;
			int rdy[2], go[2], st, err;
			long before, after;
			double t0;
			pid_t pid;
			char c;

			if (pipe(rdy) || pipe(go))
				return 1;
			pid = fork();
			if (pid < 0) {
				perror("fork");
				return 1;
			}
			if (!pid) {
				close(rdy[0]);
				close(go[1]);
				reclaim_worker(cg, len, cow, held, rdy[1], go[0]);
			}
			close(rdy[1]);
			close(go[0]);
			if (read(rdy[0], &c, 1) != 1) {
				waitpid(pid, &st, 0);
				fprintf(stderr, "cow_pte: reclaim worker failed (exit %d)\n",
					WIFEXITED(st) ? WEXITSTATUS(st) : -1);
				failed = 1;
				break;
			}
			before = cg_long(cg, "memory.current");
			t0 = bench_ns();
			/* EAGAIN: less than asked for could be reclaimed; the bytes say how much. */
			err = write_file(cg, "memory.reclaim", req);
			t[cow][r] = (bench_ns() - t0) / 1e6;
			after = cg_long(cg, "memory.current");
			got[cow][r] = (before - after) / 1048576.0;
			if (err && err != -EAGAIN)
				fprintf(stderr, "cow_pte: memory.reclaim: %s\n", strerror(-err));
			close(go[1]);
			close(rdy[0]);
			if (waitpid(pid, &st, 0) != pid || st) {
				fprintf(stderr, "cow_pte: reclaim worker failed (status %#x)\n", st);
				failed = 1;
			}
		}
	}
	rmdir(cg);
	if (failed)
		return 1;
	/* Pairs first: bench_stats() sorts each side's values in place. */
	if (methods == 2) {
		pairs(group, t[0], t[1], runs);
		pairs(got_group, got[0], got[1], runs);
	}
	snprintf(extra, sizeof(extra), "\"mb\":%ld,\"children\":%ld", mb, children);
	snprintf(what, sizeof(what), "%ld MiB", mb);
	for (m = 0; m < methods; m++) {
		const char *name = m ? "cow_pte" : "plain";
		struct bench_stats s = bench_stats(t[m], runs);
		struct bench_stats b = bench_stats(got[m], runs);

		bench_result(group, what, name, extra, "ms", &s);
		bench_result(got_group, what, name, extra, "MiB", &b);
	}
	return 0;
}

#define MPOL_MF_MOVE_ALL	(1 << 2)

/* move_pages() of all @n pages of @pages to @node; how many went, or -1. */
static long move_all(void **pages, int *nodes, int *status, long n, int node, int flags)
{
	long moved = 0;

	for (long i = 0; i < n; i++)
		nodes[i] = node;
	if (syscall(SYS_move_pages, 0, n, pages, nodes, status, flags))
		return -1;
	for (long i = 0; i < n; i++)
		moved += status[i] == node;
	return moved;
}

/*
 * The migrate case: per repetition, all pages to node 0 first, then a child that
 * holds them (shared tables with COW), then the timed move of all to node 1.
 */
static int migrate_case(int runs, int methods)
{
	size_t len = (size_t)mb << 20;
	long n = len / 4096, moved;
	void **pages = calloc(n, sizeof(void *));
	int *nodes = calloc(n, sizeof(int)), *status = calloc(n, sizeof(int));
	double *t[2] = { calloc(runs, sizeof(double)), calloc(runs, sizeof(double)) };
	char extra[64], what[64], *p;
	int r, m;

	if (access("/sys/devices/system/node/node1", F_OK)) {
		unavailable("migrate", "one NUMA node");
		return 0;
	}
	if (!n || !pages || !nodes || !status || !t[0] || !t[1])
		return 1;
	p = populate(len);
	for (long i = 0; i < n; i++)
		pages[i] = p + i * 4096;
	for (r = 0; r < runs; r++) {
		for (m = 0; m < methods; m++) {
			int cow = methods == 1 ? 0 : (r & 1) ? !m : m;
			int go[2], st;
			double t0;
			pid_t h;

			if (have_cow)
				set_cow(cow);
			if (move_all(pages, nodes, status, n, 0, 0) != n) {
				fprintf(stderr, "cow_pte: migrate: cannot gather the pages on node 0\n");
				return 1;
			}
			if (pipe(go) || (h = holder(go[0], go[1])) < 0)
				return 1;
			t0 = bench_ns();
			moved = move_all(pages, nodes, status, n, 1, MPOL_MF_MOVE_ALL);
			t[cow][r] = (bench_ns() - t0) / 1e6;
			close(go[1]);
			close(go[0]);
			if (waitpid(h, &st, 0) != h || st || moved != n) {
				fprintf(stderr, "cow_pte: migrate: %ld of %ld pages moved (%s)\n",
					moved, n, moved < 0 ? strerror(errno) : "holder failed");
				return 1;
			}
		}
	}
	if (have_cow)
		set_cow(0);
	if (methods == 2)
		pairs("migrate", t[0], t[1], runs);
	snprintf(extra, sizeof(extra), "\"mb\":%ld", mb);
	snprintf(what, sizeof(what), "%ld MiB", mb);
	for (m = 0; m < methods; m++) {
		struct bench_stats s = bench_stats(t[m], runs);

		bench_result("migrate", what, m ? "cow_pte" : "plain", extra, "ms", &s);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int runs = 10, methods, m, r;
	size_t len;
	char *p;

	bench_init_opts(argc, argv, "cow_pte", usage, &runs, extra_opts, parse_opt);
	have_cow = mmext_cow_pte_get() >= 0;
	methods = have_cow ? 2 : 1;
	len = (size_t)mb << 20;
	timing_mode();
	settings();
	if (!strcmp(bcase, "reclaim") || !strcmp(bcase, "reclaim-held"))
		return reclaim_case(runs, methods, !strcmp(bcase, "reclaim-held"));
	if (!strcmp(bcase, "migrate"))
		return migrate_case(runs, methods);
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

			if (have_cow)
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
				kb = bench_proc_kb("/proc/self/status", "VmPTE");
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
				/*
				 * Where page tables are freed after an RCU grace period (7.3's
				 * x86; 6.12's only with PARAVIRT), a plain child's 512 per GiB
				 * would be freed inside the next timed fork, a COW one in ABBA
				 * order: let them go here.
				 */
				usleep(100000);
				v[cow][r] = (t1 - t0) / 1e3;
				/* The child's VmPTE, read right after fork: free here. */
				v2[cow][r] = got;
			} else if (!strcmp(bcase, "vmpte")) {
				v[cow][r] = bench_proc_kb("/proc/self/status", "VmPTE");
				v2[cow][r] = got;
			} else {
				v[cow][r] = got;
			}
		}
	}
	if (have_cow)
		set_cow(0);

	/* Pairs first: bench_stats() sorts each side's values in place. */
	if (methods == 2) {
		const char *measure = !strcmp(bcase, "fault-seq") ? "fault-seq" :
				      !strcmp(bcase, "fault-rand") ? "fault-rand" :
				      !strcmp(bcase, "server") ? "server" :
				      !strcmp(bcase, "vmpte") ? "vmpte-parent" : "fork";

		pairs(measure, v[0], v[1], runs);
		if (!strcmp(bcase, "fork") || !strcmp(bcase, "vmpte"))
			pairs("vmpte-child", v2[0], v2[1], runs);
	}
	for (m = 0; m < methods; m++) {
		const char *name = m ? "cow_pte" : "plain";
		char extra[64], what[64];
		struct bench_stats s = bench_stats(v[m], runs);

		snprintf(extra, sizeof(extra), "\"mb\":%ld", mb);
		snprintf(what, sizeof(what), "%ld MiB", mb);
		if (!strcmp(bcase, "fork")) {
			struct bench_stats c = bench_stats(v2[m], runs);

			bench_result("fork", what, name, extra, "us", &s);
			bench_result("fork-vmpte-child", what, name, extra, "kB", &c);
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
