// SPDX-License-Identifier: GPL-2.0
/*
 * The mmext maps command against procps pmap on a target process with 60,000 VMAs
 * (single pages of alternating protection, so they cannot merge): the CPU time (user +
 * sys) and the wall time of each command, and one bare read(2) pass over the target's
 * /proc/PID/maps, the least any reader of the text does. pmap runs as `pmap PID`, the
 * listing comparable to `mmext maps PID` (start, size, permissions, name per VMA, from
 * /proc/PID/maps); `pmap -x` adds RSS and dirty from smaps, as `mmext maps --rss` does.
 *
 * A command's CPU time is its own, from wait4()'s rusage; its wall time runs from the
 * spawn to the reaping. The read pass is timed here, in this process, without the cost of
 * starting a program: a strict floor for the command's wall time.
 *
 * The three run in rounds, each once per round in a rotating order, after one untimed
 * round that counts the commands' lines; the rounds give the pairs bench/pairstats.py
 * turns into intervals.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mmext.h>
#include "bench.h"

extern char **environ;

static const char usage[] =
	"Usage: maps_command [--runs N] [--json FILE] [--vmas N]\n"
	"Time `mmext maps PID` against `pmap PID` and one read(2) pass over /proc/PID/maps,\n"
	"on a target process with 60,000 VMAs (--vmas N: N), in N interleaved rounds.\n"
	"The mmext binary is $MMEXT, else mmext or ../bin/mmext next to this program.\n";

static long want_vmas = 60000;
static size_t psz;
static char pidstr[16];
static char maps_path[64];
static char mmext_path[PATH_MAX];

static int opt(int val, const char *arg)
{
	char *end;

	want_vmas = strtol(arg, &end, 10);
	return *end || want_vmas < 2 ? -1 : 0;
}

/*
 * The target: a child that maps `pages` pages, protects every other one read-only and
 * waits for EOF on its pipe. Returns its pid, with *fd the pipe's write end to close.
 */
static pid_t start_target(size_t pages, int *fd)
{
	int go[2], ready[2];
	char ok = 0;
	pid_t pid;

	if (pipe(go) || pipe(ready)) {
		perror("pipe");
		exit(1);
	}
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		perror("fork");
		exit(1);
	}
	if (!pid) {
		char *p = mmap(NULL, pages * psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		size_t i;

		close(go[1]);
		close(ready[0]);
		ok = p != MAP_FAILED;
		for (i = 1; ok && i < pages; i += 2)
			ok = !mprotect(p + i * psz, psz, PROT_READ);
		if (!ok)
			perror("maps_command: target: making VMAs");
		if (write(ready[1], &ok, 1) != 1)
			_exit(1);
		while (read(go[0], &ok, 1) > 0)
			;
		_exit(0);
	}
	close(go[0]);
	close(ready[1]);
	if (read(ready[0], &ok, 1) != 1 || !ok) {
		fprintf(stderr, "maps_command: the target could not make its VMAs\n");
		exit(1);
	}
	close(ready[0]);
	*fd = go[1];
	return pid;
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* One read(2) pass over the target's maps: wall and CPU ms; lines counted if asked. */
static int read_pass(double *wall, double *cpu, long *lines)
{
	static char buf[1 << 16];
	double t0 = bench_ns(), c0 = cpu_ns();
	int fd = open(maps_path, O_RDONLY | O_CLOEXEC);
	ssize_t n, i;

	if (fd < 0)
		return -errno;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		for (i = 0; lines && i < n; i++)
			*lines += buf[i] == '\n';
	close(fd);
	*wall = (bench_ns() - t0) / 1e6;
	*cpu = (cpu_ns() - c0) / 1e6;
	return n < 0 ? -EIO : 0;
}

/*
 * Run argv with stdout to out_fd (or /dev/null when -1): wall and CPU (user + sys) ms of
 * the child. Returns 0, or -1 if it could not run or failed.
 */
static int command(char *const argv[], int out_fd, double *wall, double *cpu)
{
	posix_spawn_file_actions_t fa;
	struct rusage ru;
	int status, ret;
	double t0;
	pid_t pid;

	posix_spawn_file_actions_init(&fa);
	if (out_fd >= 0)
		posix_spawn_file_actions_adddup2(&fa, out_fd, 1);
	else
		posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	t0 = bench_ns();
	ret = posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	if (ret || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		return -1;
	*wall = (bench_ns() - t0) / 1e6;
	*cpu = (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return 0;
}

/*
 * Run argv once with its output kept, as the untimed round: the lines it printed, or -1
 * if it failed. The listing is checked for length, not content (cli tests do that).
 */
static long lines_of(char *const argv[])
{
	int fd = memfd_create("maps_command", MFD_CLOEXEC);
	long lines = -1;
	double w, c;
	FILE *f;
	int ch;

	if (fd < 0)
		return -1;
	if (!command(argv, fd, &w, &c) && lseek(fd, 0, SEEK_SET) == 0) {
		f = fdopen(fd, "r");
		if (f) {
			lines = 0;
			while ((ch = getc(f)) != EOF)
				lines += ch == '\n';
			fclose(f);
			return lines;
		}
	}
	close(fd);
	return lines;
}

static void find_mmext(void)
{
	char exe[PATH_MAX], *dir;
	ssize_t n;

	if (getenv("MMEXT")) {
		snprintf(mmext_path, sizeof(mmext_path), "%s", getenv("MMEXT"));
		return;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	exe[n > 0 ? n : 0] = '\0';
	dir = dirname(exe);
	/* The guest payload carries it beside the benchmarks; a build tree in ../bin. */
	snprintf(mmext_path, sizeof(mmext_path), "%s/mmext", dir);
	if (access(mmext_path, X_OK))
		snprintf(mmext_path, sizeof(mmext_path), "%s/../bin/mmext", dir);
}

enum { K_MMEXT, K_PMAP, K_READ, K__N };
static const char *const kind_names[K__N] = { "mmext maps", "pmap", "read(2) pass" };

static void result(const char *what, const char *backend, const char *extra, double *v, int n)
{
	double *copy = malloc(n * sizeof(*copy));
	struct bench_stats s;

	if (!copy)
		return;
	memcpy(copy, v, n * sizeof(*copy));	/* bench_stats sorts; the pairs need order */
	s = bench_stats(copy, n);
	bench_result("maps_command", what, backend, extra, "ms", &s);
	free(copy);
}

static void pairs(const char *what, const char *backend, const char *extra, double *a,
		  double *b, int n)
{
	char head[384];
	double *r = malloc(n * sizeof(*r));
	struct bench_stats s;
	int i;

	if (!r)
		return;
	for (i = 0; i < n; i++)
		r[i] = b[i] / a[i];
	s = bench_stats(r, n);
	printf("goal %-30s %s = %.3f (median of %d pairs)\n", what, backend, s.median, n);
	snprintf(head, sizeof(head), "\"group\":\"maps_command\",\"case\":\"regression\","
		 "\"what\":\"%s\",\"backend\":\"%s\",%s", what, backend, extra);
	bench_pairs(head, a, b, n);
	free(r);
}

int main(int argc, char **argv)
{
	static const struct option extra_opts[] = {
		{ "vmas", required_argument, NULL, 256 },
		{ NULL, 0, NULL, 0 },
	};
	char *mm[] = { mmext_path, "maps", pidstr, NULL };
	char *pm[] = { "pmap", pidstr, NULL };
	double *wall[K__N], *cpu[K__N], w, c;
	struct mmext_feature_status st;
	long max_map, vmas = 0, lm, lp;
	int runs = 11, r, k, kind, go, have_pmap;
	char extra[192];
	pid_t target;

	bench_init_opts(argc, argv, "maps_command", usage, &runs, extra_opts, opt);
	psz = sysconf(_SC_PAGESIZE);
	find_mmext();
	if (access(mmext_path, X_OK)) {
		printf("# %s not found: build it with make -C cli (or set $MMEXT)\n", mmext_path);
		return 0;
	}
	have_pmap = bench_in_path("pmap");
	if (!have_pmap)
		printf("# pmap not installed (procps): mmext maps and read(2) only\n");
	/* Room for the target's own mappings (libc, stack, ...) under the limit. */
	max_map = bench_read_long("/proc/sys/vm/max_map_count", 65530);
	if (want_vmas + 200 > max_map) {
		want_vmas = max_map - 200;
		printf("# vm.max_map_count is %ld: the target gets %ld VMAs\n", max_map, want_vmas);
	}
	target = start_target(want_vmas, &go);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)target);
	snprintf(maps_path, sizeof(maps_path), "/proc/%d/maps", (int)target);
	/* The untimed round: each once, the commands' output counted. */
	if (read_pass(&w, &c, &vmas)) {
		perror(maps_path);
		return 1;
	}
	mmext_probe(MMEXT_FEAT_PROCMAP_QUERY, &st);
	/* mmext prints its command line, a header and a total; pmap the first and last. */
	lm = lines_of(mm);
	lp = have_pmap ? lines_of(pm) : -1;
	printf("# target %d: %ld VMAs; mmext maps printed %ld lines, pmap %ld; "
	       "PROCMAP_QUERY %s (%s)\n", (int)target, vmas, lm, lp,
	       st.available ? "available" : "unavailable", st.detail);
	if (have_pmap && lp < 0) {
		printf("# pmap %s failed: mmext maps and read(2) only\n", pidstr);
		have_pmap = 0;
	}
	if (lm < 0) {
		fprintf(stderr, "maps_command: %s maps %s failed\n", mmext_path, pidstr);
		return 1;
	}
	snprintf(extra, sizeof(extra), "\"vmas\":%ld,\"mmext_lines\":%ld,\"pmap_lines\":%ld,"
		 "\"procmap_query\":%s,\"pmap_args\":\"pmap PID\"", vmas, lm, lp,
		 st.available ? "true" : "false");

	for (kind = 0; kind < K__N; kind++) {
		wall[kind] = calloc(runs, sizeof(double));
		cpu[kind] = calloc(runs, sizeof(double));
		if (!wall[kind] || !cpu[kind]) {
			perror("calloc");
			return 1;
		}
	}
	for (r = 0; r < runs; r++) {
		for (k = 0; k < K__N; k++) {
			kind = (r + k) % K__N;
			if (kind == K_PMAP && !have_pmap)
				continue;
			if (kind == K_READ ? read_pass(&w, &c, NULL) :
			    command(kind == K_MMEXT ? mm : pm, -1, &w, &c)) {
				fprintf(stderr, "maps_command: %s failed\n", kind_names[kind]);
				return 1;
			}
			wall[kind][r] = w;
			cpu[kind][r] = c;
		}
	}
	for (kind = 0; kind < K__N; kind++) {
		char what[64];

		if (kind == K_PMAP && !have_pmap)
			continue;
		snprintf(what, sizeof(what), "cpu %s", kind_names[kind]);
		result(what, kind == K_PMAP ? "pmap" : kind == K_MMEXT ? "mmext" : "read",
		       extra, cpu[kind], runs);
		snprintf(what, sizeof(what), "wall %s", kind_names[kind]);
		result(what, kind == K_PMAP ? "pmap" : kind == K_MMEXT ? "mmext" : "read",
		       extra, wall[kind], runs);
	}
	printf("\n# goals: %d interleaved rounds; ratios b/a per pair\n", runs);
	if (have_pmap)
		pairs("cpu: mmext maps / pmap", "mmext/pmap", extra, cpu[K_PMAP], cpu[K_MMEXT],
		      runs);
	pairs("wall: mmext maps / read(2) pass", "mmext/read", extra, wall[K_READ],
	      wall[K_MMEXT], runs);
	if (have_pmap)
		pairs("wall: mmext maps / pmap", "mmext/pmap wall", extra, wall[K_PMAP],
		      wall[K_MMEXT], runs);
	close(go);
	waitpid(target, NULL, 0);
	return 0;
}
