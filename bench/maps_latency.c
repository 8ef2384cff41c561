// SPDX-License-Identifier: GPL-2.0
/*
 * Lockless maps' benchmark: a mapper unmaps and maps back single 4 KiB pages at random
 * in a 128 MiB anonymous range, timing every munmap() and mmap(), while two scanner
 * processes read its /proc/PID/maps over and over. Per run of fixed length: the largest
 * and the mean operation latency; over all runs, the median operation latency. The
 * scanners start first and the mapper waits until both have read the file once.
 *
 * Beside the wall clock, when the kernel keeps scheduler statistics (CONFIG_SCHEDSTATS,
 * CONFIG_SCHED_DEBUG, kernel.sched_schedstats=1): per run, how long the mapper was
 * blocked, i.e. asleep in TASK_UNINTERRUPTIBLE or TASK_KILLABLE, which is how it waits for
 * mmap_lock or a VMA lock that a scanner holds (rwsem write waits). Time the mapper's vCPU
 * loses to the host while the mapper runs is not blocked time, so with nobody reading it
 * stays at zero where the wall-clock maxima have a floor of 9-22 ms under emulation; but
 * once the mapper sleeps, host delays of the lock holder's vCPU and of the wakeup (see
 * TTWU_QUEUE below) lengthen the sleep. The stats are reset before each run by writing to
 * /proc/self/sched and read from it after.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
	"Usage: maps_latency [--runs N] [--seconds S] [--scanners N] [--pin] [--schedstats]\n"
	"                    [--json FILE]\n"
	"Time mmap()/munmap() of 4 KiB pages in a 128 MiB range while N processes (default 2)\n"
	"read this process's /proc/PID/maps; S seconds per run (default 1). --pin: the mapper\n"
	"alone on CPU 0, the scanners on the other CPUs (needs 2 or more). --schedstats: turn\n"
	"on kernel.sched_schedstats for the runs (root; a system-wide setting, meant for a test\n"
	"guest; restored at exit), so that the mapper's blocked time is measured. Without it,\n"
	"blocked time is reported only when schedstats are already on.\n";

#define REGION	(128UL << 20)
#define MAX_OPS	(4 << 20)

static double seconds = 1.0;
static int nscanners = 2;
static bool pin;
static bool want_schedstats;

static int opt(int val, const char *arg)
{
	char *end;

	switch (val) {
	case 256:
		seconds = strtod(arg, &end);
		return *end || seconds <= 0 ? -1 : 0;
	case 257:
		nscanners = strtol(arg, &end, 10);
		return *end || nscanners < 0 || nscanners > 16 ? -1 : 0;
	case 258:
		pin = true;
		return 0;
	case 259:
		want_schedstats = true;
		return 0;
	}
	return -1;
}

struct shared {
	volatile int stop;
	volatile int started;		/* scanners that have read the file once */
	volatile unsigned long reads[16];
};

/*
 * With fewer CPUs than processes, the mapper's latency is mostly waiting for a
 * CPU, and scanners that never block (the lockless kernel) take more of it
 * than scanners that sleep on mmap_lock.  Upstream's test machine (the v3
 * cover letter's) had a CPU for each; --pin gives the mapper one of its own.
 */
static void pin_to(int cpu, int ncpus)
{
	cpu_set_t set;
	int c;

	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	else
		for (c = 1; c < ncpus; c++)
			CPU_SET(c, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "maps_latency: cannot pin: %s\n", strerror(errno));
}

static void scanner(struct shared *sh, pid_t target, int id)
{
	static char buf[4096];
	char path[64];
	int first = 1;

	snprintf(path, sizeof(path), "/proc/%d/maps", target);
	while (!sh->stop) {
		int fd = open(path, O_RDONLY);

		if (fd < 0)
			_exit(0);	/* the mapper is gone */
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		close(fd);
		sh->reads[id]++;
		if (first) {
			__atomic_fetch_add(&sh->started, 1, __ATOMIC_RELEASE);
			first = 0;
		}
	}
	_exit(0);
}

/* A /proc/vmstat counter, or -1 when this kernel does not count it. */
static long vmstat(const char *name)
{
	char key[64];
	long val, ret = -1;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return -1;
	while (fscanf(f, "%63s %ld", key, &val) == 2)
		if (!strcmp(key, name))
			ret = val;
	fclose(f);
	return ret;
}

/* The lockless maps counters, read before and after all runs. */
enum { VMA_LOCK, MMAP_LOCK, WAIT, RETRY, QUEUE, NCOUNTERS };
static const char *const counter_names[NCOUNTERS] = {
	"proc_maps_vma_lock", "proc_maps_mmap_lock",
	/* Kernels whose readers wait for the writer before taking mmap_lock. */
	"proc_maps_wait", "proc_maps_retry", "proc_maps_mmap_queue",
};

static void read_counters(long *v)
{
	for (int i = 0; i < NCOUNTERS; i++)
		v[i] = vmstat(counter_names[i]);
}

/*
 * The mapper's scheduler statistics over one run (/proc/self/sched; 6.12 prints them in
 * kernel/sched/debug.c, counts them in kernel/sched/stats.c). A sleep counts as blocked
 * when the task's state had TASK_UNINTERRUPTIBLE at dequeue (TASK_KILLABLE has it too):
 * mmap_write_lock_killable() in mmap() and munmap(), down_write() of a VMA lock in
 * vma_start_write(). It lasts until the wakeup enqueues the task again; time spent
 * runnable but waiting for the CPU is "wait", not "block". Optimistic spinning on the
 * rwsem (at most 10-25 us on a reader-owned lock, kernel/locking/rwsem.c) is not a sleep
 * and is not counted.
 */
struct sched_run {
	double block_max, block_sum;	/* us */
	double sleep_sum;		/* us, blocked included */
	double wait_max, wait_sum;	/* us runnable, not running */
	long nvcsw;			/* voluntary switches: sleeps */
};

static bool have_schedstats;
static int old_schedstats = -1;		/* to restore; -1: untouched */

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY), ret;

	if (fd < 0)
		return -1;
	ret = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return ret;
}

#define SCHED_FEATURES	"/sys/kernel/debug/sched/features"

/*
 * Scheduler features that bear on blocked time; left as they are (default: both on),
 * since turning them off changes what is measured (TTWU_QUEUE off cuts the stock mapper's
 * operations per second 3.5-9x in a TCG guest), and reported with the results:
 * - TTWU_QUEUE: a wakeup aimed at an idle CPU is queued to it, and the sleeper is enqueued,
 *   ending its blocked time, only when that CPU takes the IPI: under emulation, when the
 *   host runs the halted vCPU's thread again. That latency is in the blocked time.
 * - DELAY_DEQUEUE (6.12): a task that sleeps while not eligible stays queued and its sleep
 *   is counted only from the real dequeue, or not at all if it is woken first: blocked time
 *   can only be undercounted (the mapper is alone on its CPU with --pin, so rarely).
 */
/* Whether feature name is on (1), off (0), or unknown (-1). */
static int sched_feat_state(const char *name)
{
	static char buf[4096];
	char *tok, *save;
	ssize_t n;
	int fd = open(SCHED_FEATURES, O_RDONLY);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	for (tok = strtok_r(buf, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		if (!strcmp(tok, name))
			return 1;
		if (!strncmp(tok, "NO_", 3) && !strcmp(tok + 3, name))
			return 0;
	}
	return -1;
}

static void schedstats_restore(void)
{
	if (old_schedstats == 0)
		write_file("/proc/sys/kernel/sched_schedstats", "0");
}

static bool sched_reset(void)
{
	return write_file("/proc/self/sched", "0") == 0;
}

/* The run's figures; false when /proc/self/sched shows no schedstats. */
static bool sched_read(struct sched_run *sr, long nvcsw_before)
{
	char line[256], key[128];
	double v;
	int got = 0;
	FILE *f = fopen("/proc/self/sched", "r");

	if (!f)
		return false;
	memset(sr, 0, sizeof(*sr));
	while (fgets(line, sizeof(line), f)) {
		char *k = key;

		if (sscanf(line, " %127[^: ] : %lf", key, &v) != 2)
			continue;
		if (!strncmp(k, "stats.", 6))	/* older and newer kernels' spelling */
			k += 6;
		if (!strcmp(k, "block_max"))
			sr->block_max = v * 1e3, got++;
		else if (!strcmp(k, "sum_block_runtime"))
			sr->block_sum = v * 1e3, got++;
		else if (!strcmp(k, "sum_sleep_runtime"))
			sr->sleep_sum = v * 1e3;
		else if (!strcmp(k, "wait_max"))
			sr->wait_max = v * 1e3;
		else if (!strcmp(k, "wait_sum"))
			sr->wait_sum = v * 1e3;
		else if (!strcmp(k, "nr_voluntary_switches"))
			sr->nvcsw = (long)v - nvcsw_before;
	}
	fclose(f);
	return got == 2;
}

static long nvcsw_now(void)
{
	struct sched_run sr;

	sched_read(&sr, 0);
	return sr.nvcsw;
}

static void schedstats_setup(void)
{
	char json[256];
	struct sched_run sr;
	int cur = (int)bench_read_long("/proc/sys/kernel/sched_schedstats", -1);

	if (want_schedstats && cur == 0) {
		if (write_file("/proc/sys/kernel/sched_schedstats", "1"))
			fprintf(stderr, "maps_latency: cannot turn on sched_schedstats: %s\n",
				strerror(errno));
		else
			old_schedstats = 0;
	}
	atexit(schedstats_restore);
	have_schedstats = bench_read_long("/proc/sys/kernel/sched_schedstats", -1) == 1 &&
			  sched_reset() && sched_read(&sr, 0);
	snprintf(json, sizeof(json), "\"group\":\"maps_latency\",\"case\":\"%s\","
		 "\"ttwu_queue\":%d,\"delay_dequeue\":%d",
		 have_schedstats ? "schedstats" : "no schedstats",
		 sched_feat_state("TTWU_QUEUE"), sched_feat_state("DELAY_DEQUEUE"));
	bench_json(json);
	if (!have_schedstats)
		printf("# blocked time unavailable: no schedstats in /proc/self/sched (needs "
		       "CONFIG_SCHEDSTATS, CONFIG_SCHED_DEBUG and kernel.sched_schedstats=1)\n");
	else
		printf("# blocked time from /proc/self/sched (schedstats; TTWU_QUEUE %d, "
		       "DELAY_DEQUEUE %d: 1 on, 0 off, -1 unknown)\n",
		       sched_feat_state("TTWU_QUEUE"), sched_feat_state("DELAY_DEQUEUE"));
}

/* JSON members of a run's schedstats, or "" without them. */
static const char *sched_json(const struct sched_run *sr, bool ok)
{
	static char buf[256];

	if (!ok)
		return "";
	snprintf(buf, sizeof(buf), ",\"block_max_us\":%.3f,\"block_sum_us\":%.3f,"
		 "\"sleep_sum_us\":%.3f,\"wait_max_us\":%.3f,\"wait_sum_us\":%.3f,\"sleeps\":%ld",
		 sr->block_max, sr->block_sum, sr->sleep_sum, sr->wait_max, sr->wait_sum,
		 sr->nvcsw);
	return buf;
}

/* One run of mapper operations: fills ops[], returns how many. */
static int mapper_run(char *region, size_t npages, size_t psz, uint64_t *x, double *ops)
{
	double t_end = bench_ns() + seconds * 1e9;
	int n = 0;

	while (n + 2 <= MAX_OPS && bench_ns() < t_end) {
		char *p;
		double t0, t1, t2;

		*x ^= *x << 13, *x ^= *x >> 7, *x ^= *x << 17;
		p = region + (*x % npages) * psz;
		t0 = bench_ns();
		if (munmap(p, psz))
			return perror("munmap"), -1;
		t1 = bench_ns();
		if (mmap(p, psz, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) != p)
			return perror("mmap"), -1;
		t2 = bench_ns();
		ops[n++] = (t1 - t0) / 1e3;
		ops[n++] = (t2 - t1) / 1e3;
	}
	return n;
}

/* Append ops[0..n) to all[] (up to MAX_OPS); their maximum and, in *sum, their total. */
static double absorb(const double *ops, int n, double *all, size_t *nall, double *sum)
{
	double max = 0;
	int i;

	*sum = 0;
	for (i = 0; i < n; i++) {
		*sum += ops[i];
		if (ops[i] > max)
			max = ops[i];
		if (*nall < MAX_OPS)
			all[(*nall)++] = ops[i];
	}
	return max;
}

/* What every run shares: the mapper's range and random state, and the latencies. */
struct mapper {
	char *region;
	size_t npages, psz;
	uint64_t x;
	double *ops;		/* this run's operations */
	double *all;		/* every run's, up to MAX_OPS */
	size_t nall;
};

/*
 * This VM's floor: the same runs with nobody reading maps, a fifth as many. Their maxima
 * show what the machine adds by itself (under emulation, vCPU preemption). 0, or 1 when
 * the mapper failed.
 */
static int floor_runs(struct mapper *m, int runs)
{
	struct bench_stats s;
	char json[512];
	int r, n;

	for (r = 0; r < (runs + 4) / 5; r++) {
		double sum, max;
		struct sched_run sr = { 0 };
		long nv = have_schedstats ? nvcsw_now() : 0;
		bool ok = have_schedstats && sched_reset();

		n = mapper_run(m->region, m->npages, m->psz, &m->x, m->ops);
		if (n <= 0)
			return 1;
		ok = ok && sched_read(&sr, nv);
		max = absorb(m->ops, n, m->all, &m->nall, &sum);
		printf("uncontended run %3d: %7d ops, max %9.1f us", r, n, max);
		if (ok)
			printf(", blocked max %8.1f us, sum %8.1f us in %ld sleeps",
			       sr.block_max, sr.block_sum, sr.nvcsw);
		printf("\n");
		snprintf(json, sizeof(json), "\"group\":\"maps_latency\",\"case\":"
			 "\"uncontended run\",\"run\":%d,\"ops\":%d,\"max_us\":%.3f%s", r, n, max,
			 sched_json(&sr, ok));
		bench_json(json);
	}
	s = bench_stats(m->all, m->nall);
	bench_result("maps_latency", "mmap/munmap op uncontended", "all runs", NULL, "us", &s);
	m->nall = 0;
	return 0;
}

/* Fork the scanners and wait until each has read the maps once. 0, or 1 on failure. */
static int start_scanners(struct shared *sh, pid_t *pids, int ncpus)
{
	int i;

	for (i = 0; i < nscanners; i++) {
		pids[i] = fork();
		if (pids[i] < 0) {
			perror("maps_latency: fork");
			return 1;
		}
		if (!pids[i]) {
			if (pin)
				pin_to(-1, ncpus);
			scanner(sh, getppid(), i);
		}
	}
	while (sh->started < nscanners)
		usleep(1000);
	return 0;
}

/*
 * Run r with the scanners reading: the mapper's latencies, the scanners' reads, and where
 * the kernel counts them the lookups that fell back to mmap_lock. 0, or 1 when the mapper
 * failed.
 */
static int contended_run(struct mapper *m, struct shared *sh, int r)
{
	double sum, max;
	unsigned long reads = 0;
	struct sched_run sr = { 0 };
	long nv = have_schedstats ? nvcsw_now() : 0;
	long fb = vmstat("proc_maps_mmap_lock");	/* lockless lookups fallen back */
	long qd = vmstat("proc_maps_mmap_queue");	/* of which queued on it */
	char fbj[80] = "", json[512];
	bool ok;
	int i, n;

	for (i = 0; i < nscanners; i++)
		reads -= sh->reads[i];
	ok = have_schedstats && sched_reset();
	n = mapper_run(m->region, m->npages, m->psz, &m->x, m->ops);
	if (n < 0)
		return 1;
	ok = ok && sched_read(&sr, nv);
	max = absorb(m->ops, n, m->all, &m->nall, &sum);
	for (i = 0; i < nscanners; i++)
		reads += sh->reads[i];
	if (fb >= 0)
		snprintf(fbj, sizeof(fbj), ",\"fallbacks\":%ld",
			 vmstat("proc_maps_mmap_lock") - fb);
	if (fb >= 0 && qd >= 0)
		snprintf(fbj + strlen(fbj), sizeof(fbj) - strlen(fbj),
			 ",\"queued\":%ld", vmstat("proc_maps_mmap_queue") - qd);
	printf("run %3d: %7d ops, max %9.1f us, mean %7.2f us, %lu maps reads",
	       r, n, max, n ? sum / n : 0, reads);
	if (ok)
		printf(", blocked max %8.1f us, sum %8.1f us in %ld sleeps",
		       sr.block_max, sr.block_sum, sr.nvcsw);
	printf("\n");
	snprintf(json, sizeof(json), "\"group\":\"maps_latency\",\"case\":\"run\","
		 "\"run\":%d,\"ops\":%d,\"max_us\":%.3f,\"mean_us\":%.4f,"
		 "\"scanner_reads\":%lu,\"scanners\":%d,\"seconds\":%.3f%s%s",
		 r, n, max, n ? sum / n : 0, reads, nscanners, seconds, sched_json(&sr, ok),
		 fbj);
	bench_json(json);
	return 0;
}

/* The lockless maps counters' change over the contended runs. */
static void report_counters(const long *before, const long *after)
{
	char json[512];
	long vl, ml;

	if (before[VMA_LOCK] < 0 || after[VMA_LOCK] < 0) {
		printf("# /proc/vmstat has no proc_maps_* counters on this kernel\n");
		return;
	}
	vl = after[VMA_LOCK] - before[VMA_LOCK];
	ml = after[MMAP_LOCK] - before[MMAP_LOCK];
	printf("# maps lookups during the runs: %ld without mmap_lock, %ld repeated "
	       "under it (%.2f%%)\n", vl, ml, vl + ml ? 100.0 * ml / (vl + ml) : 0);
	snprintf(json, sizeof(json), "\"group\":\"maps_latency\",\"case\":\"vmstat\","
		 "\"vma_lock\":%ld,\"mmap_lock\":%ld", vl, ml);
	bench_json(json);
	if (before[WAIT] >= 0 && after[WAIT] >= 0) {
		long w = after[WAIT] - before[WAIT], rt = after[RETRY] - before[RETRY];
		long q = after[QUEUE] - before[QUEUE];

		printf("# waits for an mmap_lock writer: %ld, lockless retries: %ld, "
		       "lookups queued on mmap_lock: %ld\n", w, rt, q);
		snprintf(json, sizeof(json), "\"group\":\"maps_latency\","
			 "\"case\":\"vmstat_wait\",\"wait\":%ld,\"retry\":%ld,"
			 "\"queued\":%ld", w, rt, q);
		bench_json(json);
	}
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "seconds", required_argument, NULL, 256 },
		{ "scanners", required_argument, NULL, 257 },
		{ "pin", no_argument, NULL, 258 },
		{ "schedstats", no_argument, NULL, 259 },
		{ NULL, 0, NULL, 0 },
	};
	struct mapper m = {
		.ops = malloc(MAX_OPS * sizeof(double)),
		.all = malloc(MAX_OPS * sizeof(double)),
		.psz = sysconf(_SC_PAGESIZE),
		.x = 88172645463325252ULL,
	};
	pid_t pids[16];
	struct shared *sh;
	struct bench_stats s;
	char json[512];
	int runs = 20, r, i, ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	long before[NCOUNTERS], after[NCOUNTERS];

	m.npages = REGION / m.psz;
	bench_init_opts(argc, argv, "maps_latency", usage, &runs, extra, opt);
	if (pin && ncpus < 2) {
		fprintf(stderr, "maps_latency: --pin needs 2 or more CPUs\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	m.region = mmap(NULL, REGION, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	if (!m.ops || !m.all || sh == MAP_FAILED || m.region == MAP_FAILED) {
		perror("maps_latency: setup");
		return 1;
	}
	if (pin)
		pin_to(0, ncpus);
	schedstats_setup();
	if (floor_runs(&m, runs) || start_scanners(sh, pids, ncpus))
		return 1;

	printf("# %d scanners, %d runs of %.2f s, 4 KiB pages in a 128 MiB range%s\n",
	       nscanners, runs, seconds,
	       pin ? ", mapper alone on CPU 0, scanners on the others" : "");
	read_counters(before);
	for (r = 0; r < runs; r++)
		if (contended_run(&m, sh, r))
			return 1;
	sh->stop = 1;
	for (i = 0; i < nscanners; i++)
		waitpid(pids[i], NULL, 0);

	read_counters(after);

	s = bench_stats(m.all, m.nall);	/* sorts */
	/* The tail over all runs: steadier under emulation than per-run maxima. */
	snprintf(json, sizeof(json), "\"scanners\":%d,\"pinned\":%s,\"p99\":%.6g,"
		 "\"p999\":%.6g", nscanners, pin ? "true" : "false",
		 m.nall ? m.all[(size_t)(m.nall * 0.99)] : 0,
		 m.nall ? m.all[(size_t)(m.nall * 0.999)] : 0);
	bench_result("maps_latency", "mmap/munmap op", "all runs", json, "us", &s);
	report_counters(before, after);
	return 0;
}
