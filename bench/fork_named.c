// SPDX-License-Identifier: GPL-2.0
/*
 * Anonymous VMA names' fork benchmark: a process with many anonymous VMAs forks, the
 * child exits at once, and the parent times fork() until it returns. Unnamed against
 * named: every VMA with a distinct 79-byte name, the longest the kernel takes.
 *
 * Two worker processes build the same VMAs up front; one is named, and the driver has
 * them fork in turn, in pairs ordered AB, BA, AB, ..., so the two forks of a pair are a
 * moment apart and a shared machine's drift hits both alike. The regression is read
 * from the per-pair ratios named/unnamed. Two processes differ by a few percent on
 * their own (where their pages and slab objects landed), so the roles swap between
 * rounds (unnamed, named, named, unnamed for the first process): the process effect
 * enters each round's ratio once upwards and once downwards and cancels, and naming
 * 64K VMAs happens once per round, in both processes at once. Neighbouring VMAs
 * alternate read-write and read-only so they cannot merge whether named or not.
 */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

static const char usage[] =
	"Usage: fork_named [--runs N] [--seconds S] [--rounds R] [--min-pairs M] [--json FILE]\n"
	"                  [--vmas N] [--pages P] [--warmup W] [--cpu C] [--rt 0|1] [--aa]\n"
	"Time fork() of a process with N anonymous VMAs (default 64000) against the same\n"
	"with every VMA named, each VMA holding P pages of random data (default 0:\n"
	"unpopulated). Two processes, one per case, fork in turn: up to N pairs in all\n"
	"(--runs, default 200) in R rounds (default 2) that swap which process is named,\n"
	"each round stopping after S/R seconds of pairs (default 0: no limit) but not before\n"
	"M pairs (default 4), and starting with W untimed forks each (default 3). Both are\n"
	"pinned to CPU C (default 0; -1: not pinned) and run SCHED_FIFO so a child cannot\n"
	"run before fork() returns (--rt 0: not). --aa names neither (an A/A test: the noise\n"
	"floor of the design); so does a kernel that cannot name VMAs.\n";

enum { O_VMAS = 256, O_PAGES, O_WARMUP, O_CPU, O_RT, O_SECONDS, O_ROUNDS, O_MIN, O_AA };
static const struct option extra_opts[] = {
	{ "vmas", required_argument, NULL, O_VMAS },
	{ "pages", required_argument, NULL, O_PAGES },
	{ "warmup", required_argument, NULL, O_WARMUP },
	{ "cpu", required_argument, NULL, O_CPU },
	{ "rt", required_argument, NULL, O_RT },
	{ "seconds", required_argument, NULL, O_SECONDS },
	{ "rounds", required_argument, NULL, O_ROUNDS },
	{ "min-pairs", required_argument, NULL, O_MIN },
	{ "aa", no_argument, NULL, O_AA },
	{ 0 }
};

/* Pairs per round even when its time has run out: a median needs a few. */
static long min_pairs = 4;
static long nvmas = 64000, npages, warmup = 3, cpu, rt = 1, seconds, rounds = 2, aa;
static size_t psz;

static int parse_opt(int val, const char *arg)
{
	char *end;
	long v;

	if (val == O_AA) {
		aa = 1;
		return 0;
	}
	v = strtol(arg, &end, 10);
	if (*end || end == arg)
		return -1;
	switch (val) {
	case O_VMAS: nvmas = v; return v < 1 || v > 1000000 ? -1 : 0;
	case O_PAGES: npages = v; return v < 0 || v > 1024 ? -1 : 0;
	case O_WARMUP: warmup = v; return v < 0 || v > 10000 ? -1 : 0;
	case O_CPU: cpu = v; return v < -1 ? -1 : 0;
	case O_RT: rt = v; return v < 0 || v > 1 ? -1 : 0;
	case O_SECONDS: seconds = v; return v < 0 || v > 86400 ? -1 : 0;
	case O_ROUNDS: rounds = v; return v < 1 || v > 100 ? -1 : 0;
	case O_MIN: min_pairs = v; return v < 1 || v > 100000 ? -1 : 0;
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
static void fill_random(char *p, size_t len, uint64_t *x)
{
	uint64_t *w = (uint64_t *)p;
	size_t i;

	for (i = 0; i < len / sizeof(*w); i++) {
		*x ^= *x << 13;
		*x ^= *x >> 7;
		*x ^= *x << 17;
		w[i] = *x;
	}
}

static int name_all(char *base, size_t vsz)
{
	char name[MMEXT_NAME_MAX + 1];
	long i;
	int ret;

	for (i = 0; i < nvmas; i++) {
		/* Distinct names, each the maximum length. */
		int n = snprintf(name, sizeof(name), "mmext-fork-bench-%07ld-", i);

		memset(name + n, 'x', MMEXT_NAME_MAX - n);
		name[MMEXT_NAME_MAX] = '\0';
		ret = mmext_name_set(base + i * vsz, vsz, name);
		if (ret) {
			/* Half-named would be neither case. */
			mmext_name_clear(base, nvmas * vsz);
			return ret;
		}
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
		perror("fork_named: fork");
		exit(1);
	}
	/* Reaped before the next fork, so the child's teardown is not timed in it. */
	waitpid(pid, NULL, 0);
	return t / 1e6;
}

/*
 * Timing: pinned and SCHED_FIFO. A new child on the parent's CPU may run before the
 * parent returns from fork(), and its exit (unmapping every VMA) would be timed as fork.
 * The parent runs SCHED_FIFO and the child, by SCHED_RESET_ON_FORK, as normal: the child
 * waits until the parent sleeps in waitpid(). Also keeps other work off the CPU.
 * Naming: as started, so both workers name at once on different CPUs.
 */
static void timing_mode(int on, const cpu_set_t *all)
{
	struct sched_param sp = { .sched_priority = on };
	cpu_set_t set;

	if (cpu >= 0) {
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		if (sched_setaffinity(0, sizeof(set), on ? &set : all) && on)
			fprintf(stderr, "fork_named: cannot pin to CPU %ld: %s\n", cpu,
				strerror(errno));
	}
	if (rt && sched_setscheduler(0, on ? SCHED_FIFO | SCHED_RESET_ON_FORK : SCHED_OTHER,
				     &sp) && on) {
		fprintf(stderr, "fork_named: cannot run SCHED_FIFO (%s); the child may run "
			"first\n", strerror(errno));
		rt = 0;
	}
}

/*
 * A worker builds the VMAs unnamed and answers with the number of lines in its maps
 * (or -errno), then for each command byte read: 'f' forks once and answers with the
 * time in ms, 'n' names every VMA and 'u' clears the names, answering 0 or -errno.
 * Exits at end of file.
 */
static void worker(int cmd, int res, uint64_t seed)
{
	size_t vsz = (npages ? npages : 1) * psz, len = nvmas * vsz;
	double ans = 0;
	int timing = 0;
	cpu_set_t all;
	char *base, c;
	long i;

	sched_getaffinity(0, sizeof(all), &all);
	/* One mapping split into VMAs of max(P, 1) pages by alternating protection. */
	base = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		ans = -errno;
	for (i = 0; !ans && i < nvmas; i++) {
		if (npages)
			fill_random(base + i * vsz, vsz, &seed);
		if (i % 2 && mprotect(base + i * vsz, vsz, PROT_READ))
			ans = -errno;
	}
	if (!ans)
		ans = count_maps();
	if (write(res, &ans, sizeof(ans)) != sizeof(ans) || ans < 0)
		_exit(1);
	while (read(cmd, &c, 1) == 1) {
		if (timing != (c == 'f'))
			timing_mode(timing = c == 'f', &all);
		if (c == 'f')
			ans = time_fork();
		else
			ans = c == 'n' ? name_all(base, vsz) : mmext_name_clear(base, len);
		if (write(res, &ans, sizeof(ans)) != sizeof(ans))
			_exit(1);
	}
	_exit(0);
}

struct proc {
	pid_t pid;
	int cmd, res;		/* the driver's ends of its pipes */
};

static int read_full(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n) {
		ssize_t got = read(fd, p, n);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return -1;
		p += got;
		n -= got;
	}
	return 0;
}

/* Fork worker w; close_fds are the driver's ends of earlier workers' pipes. */
static void start(struct proc *w, uint64_t seed, const int *close_fds, int nclose)
{
	int c[2], r[2], i;

	if (pipe(c) || pipe(r)) {
		perror("fork_named: pipe");
		exit(1);
	}
	w->pid = fork();
	if (w->pid < 0) {
		perror("fork_named: fork");
		exit(1);
	}
	if (w->pid == 0) {
		/* Only the driver may hold the other worker's pipes, or it never sees EOF. */
		for (i = 0; i < nclose; i++)
			close(close_fds[i]);
		close(c[1]);
		close(r[0]);
		worker(c[0], r[1], seed);
	}
	close(c[0]);
	close(r[1]);
	w->cmd = c[1];
	w->res = r[0];
}

/* Send command c to w (or just wait for its answer: c = 0). */
static void ask(struct proc *w, char c)
{
	if (c && write(w->cmd, &c, 1) != 1) {
		fprintf(stderr, "fork_named: worker %d died\n", (int)w->pid);
		exit(1);
	}
}

static double answer(struct proc *w)
{
	double ans;

	if (read_full(w->res, &ans, sizeof(ans))) {
		fprintf(stderr, "fork_named: worker %d died\n", (int)w->pid);
		exit(1);
	}
	return ans;
}

static double fork_in(struct proc *w)
{
	ask(w, 'f');
	return answer(w);
}

/* Median of b[i] / a[i] over [0, n); tmp holds n. */
static double median_ratio(const double *a, const double *b, double *tmp, long n)
{
	long i;

	for (i = 0; i < n; i++)
		tmp[i] = b[i] / a[i];
	return bench_stats(tmp, n).median;
}

/* Append v[0..n) as a JSON array at p (room: 16 bytes a value, plus 3); returns the end. */
static char *json_array(char *p, const double *v, long n)
{
	long i;

	*p++ = '[';
	for (i = 0; i < n; i++)
		p += sprintf(p, "%s%.5g", i ? "," : "", v[i]);
	*p++ = ']';
	*p = '\0';
	return p;
}

/* Whether worker 0 plays the named case in round r: unnamed, named, named, unnamed, ... */
static int first_named(long r)
{
	return r % 4 == 1 || r % 4 == 2;
}

int main(int argc, char **argv)
{
	const char *bname;
	int runs = 200, k, fds[2], maps = 0, ret;
	long n = 0, r, i, *per_round, start_n;
	double *t[2], *tmp, mean[2], med[2], t0, last, el = 0, lsum = 0, ans, t_start;
	char extra[256], *json, *p;
	struct proc w[2];
	struct bench_stats s;

	t_start = bench_ns();
	bench_init_opts(argc, argv, "fork_named", usage, &runs, extra_opts, parse_opt);
	psz = sysconf(_SC_PAGESIZE);
	signal(SIGPIPE, SIG_IGN);	/* a dead worker is an error message, not a silent exit */
	if (runs < rounds * min_pairs)
		runs = rounds * min_pairs;

	/* Both build their VMAs at once, on both CPUs, with the same data. */
	start(&w[0], 0x9e3779b97f4a7c15ull, NULL, 0);
	fds[0] = w[0].cmd;
	fds[1] = w[0].res;
	start(&w[1], 0x9e3779b97f4a7c15ull, fds, 2);
	for (k = 0; k < 2; k++) {
		ans = answer(&w[k]);
		if (ans < 0) {
			fprintf(stderr, "fork_named: %ld VMAs of %ld pages: %s (vm.max_map_count? "
				"memory?)\n", nvmas, npages, strerror((int)-ans));
			return 1;
		}
		maps = ans;
	}
	if (!aa) {
		ask(&w[first_named(0)], 'n');
		ret = answer(&w[first_named(0)]);
		if (ret) {
			/* Still measured, as A/A: a kernel without names gives the noise floor. */
			fprintf(stderr, "fork_named: cannot name VMAs: %s\n", strerror(-ret));
			snprintf(extra, sizeof(extra), "\"group\":\"fork\",\"case\":\"unavailable\","
				 "\"backend\":\"named\",\"errno\":%d,\"vmas\":%ld,\"pages\":%ld",
				 -ret, nvmas, npages);
			bench_json(extra);
			aa = 1;
		}
	}
	bname = aa ? "unnamed-b" : "named";
	printf("# %ld VMAs of %ld populated pages (%d lines in maps), unnamed against %s, up to "
	       "%d pairs or %ld s (0: no limit) in %ld rounds, %ld warm-up forks each per round, "
	       "CPU %ld, %s\n", nvmas, npages, maps, aa ? "unnamed (A/A)" : "named", runs,
	       seconds, rounds, warmup, cpu, rt ? "SCHED_FIFO" : "SCHED_OTHER");

	t[0] = calloc(runs, sizeof(double));
	t[1] = calloc(runs, sizeof(double));
	tmp = calloc(runs, sizeof(double));
	per_round = calloc(rounds, sizeof(long));
	json = malloc(512 + (2 * 16 + 24) * (size_t)runs);
	if (!t[0] || !t[1] || !tmp || !per_round || !json)
		return 1;
	t0 = last = bench_ns();
	for (r = 0; r < rounds; r++) {
		/* Worker u plays unnamed this round; t[0] is always the unnamed case. */
		int u = first_named(r), swap = r && u != first_named(r - 1);
		double rt0;

		if (swap && !aa) {
			/* Both at once: u drops its names while the other takes them. */
			ask(&w[u], 'u');
			ask(&w[!u], 'n');
			if (answer(&w[u]) || answer(&w[!u])) {
				fprintf(stderr, "fork_named: renaming failed in round %ld\n", r + 1);
				return 1;
			}
		}
		fprintf(stderr, "fork_named: %ld VMAs x %ld pages: round %ld/%ld at %.0f s, "
			"process %d plays %s\n", nvmas, npages, r + 1, rounds,
			(bench_ns() - t_start) / 1e9, !u + 1, bname);
		for (i = 0; i < warmup; i++) {
			fork_in(&w[u]);
			fork_in(&w[!u]);
		}
		rt0 = bench_ns();
		start_n = n;
		while (n < runs * (r + 1) / rounds) {
			/* Pairs AB, BA, AB, ...: neither case always goes first. */
			int first = (n - start_n) % 2;

			if (seconds && n - start_n >= min_pairs &&
			    bench_ns() - rt0 >= 1e9 * seconds / rounds)
				break;
			t[first][n] = fork_in(&w[first ? !u : u]);
			t[!first][n] = fork_in(&w[first ? u : !u]);
			n++;
			if (bench_ns() - last >= 10e9) {
				last = bench_ns();
				fprintf(stderr, "fork_named: %ld VMAs x %ld pages: %ld pairs in %.0f s, "
					"this round's median ratio %+.1f%%\n", nvmas, npages, n,
					(last - t0) / 1e9, 100 * (median_ratio(t[0] + start_n,
					t[1] + start_n, tmp, n - start_n) - 1));
			}
		}
		per_round[r] = n - start_n;
		/* The estimate: the geometric mean of the rounds' median ratios. */
		lsum += log(median_ratio(t[0] + start_n, t[1] + start_n, tmp, per_round[r]));
	}
	el = (bench_ns() - t0) / 1e9;
	for (k = 0; k < 2; k++)
		close(w[k].cmd);
	for (k = 0; k < 2; k++)
		waitpid(w[k].pid, NULL, 0);

	for (k = 0; k < 2; k++) {
		for (i = 0, mean[k] = 0; i < n; i++)
			mean[k] += t[k][i] / n;
		memcpy(tmp, t[k], n * sizeof(double));
		s = bench_stats(tmp, n);
		med[k] = s.median;
		snprintf(extra, sizeof(extra), "\"vmas\":%ld,\"pages\":%ld,\"maps\":%d,"
			 "\"mean\":%.6g,\"rounds\":%ld,\"warmup\":%ld,\"cpu\":%ld,\"rt\":%ld,"
			 "\"seconds\":%.1f", nvmas, npages, maps, mean[k], rounds, warmup, cpu, rt,
			 el);
		bench_result("fork", k ? bname : "unnamed", "fork", extra, "ms", &s);
	}
	/* The pairs themselves, for the report's confidence interval (bench/pairstats.py). */
	p = json + sprintf(json, "\"group\":\"fork\",\"case\":\"regression\",\"vmas\":%ld,"
			   "\"pages\":%ld,\"aa\":%ld,\"pairs\":%ld,\"seconds\":%.1f,"
			   "\"mean_pct\":%.4g,\"median_pct\":%.4g,\"pair_pct\":%.4g,\"round_pairs\":[",
			   nvmas, npages, aa, n, el, 100 * (mean[1] / mean[0] - 1),
			   100 * (med[1] / med[0] - 1), 100 * (exp(lsum / rounds) - 1));
	for (r = 0; r < rounds; r++)
		p += sprintf(p, "%s%ld", r ? "," : "", per_round[r]);
	p += sprintf(p, "],\"a\":");
	p = json_array(p, t[0], n);
	p += sprintf(p, ",\"b\":");
	json_array(p, t[1], n);
	bench_json(json);
	printf("# %ld VMAs x %ld pages, %ld pairs in %.0f s (%.0f s in all): unnamed %.3f ms "
	       "mean / %.3f median, %s %.3f / %.3f; paired %+.1f%% (bench/pairstats.py gives the interval)\n", nvmas,
	       npages, n, el, (bench_ns() - t_start) / 1e9, mean[0], med[0], bname, mean[1], med[1],
	       100 * (exp(lsum / rounds) - 1));
	return 0;
}
