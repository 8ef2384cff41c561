// SPDX-License-Identifier: GPL-2.0
/*
 * Reference pages under concurrency: N workers (threads of one process, or processes)
 * each map 1 MiB, write every page and unmap it, again and again for a fixed time.
 * Reference-page workers all map one reference page's descriptor, so whatever that
 * page serialises (its lock, its refcount, its inode's mapping tree) shows here; the
 * baseline is anonymous memory with base pages only (MADV_NOHUGEPAGE), as reference
 * pages always are. Prints MiB written per second for each backend and worker count.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

#define LEN	(1UL << 20)

static const char usage[] =
	"Usage: refpage_scale [--runs N] [--json FILE] [--workers N] [--seconds S] [--processes]\n"
	"N workers (default 2; also 1) map 1 MiB, write every page and unmap, for S seconds\n"
	"(default 1) per run; anonymous memory against one shared reference page. Threads of\n"
	"one process unless --processes.\n";

static int nworkers = 2;
static double seconds = 1.0;
static bool processes;
static int refpage_fd = -1;	/* -1: anonymous */
static atomic_bool stop;

static int opt(int val, const char *arg)
{
	char *end;

	switch (val) {
	case 256:
		nworkers = strtol(arg, &end, 10);
		return *end || nworkers < 1 || nworkers > 256 ? -1 : 0;
	case 257:
		seconds = strtod(arg, &end);
		return *end || seconds <= 0 ? -1 : 0;
	case 258:
		processes = true;
		return 0;
	}
	return -1;
}

/* Map, write every page, unmap until told to stop; the number of mappings done. */
static long work(void)
{
	long psz = sysconf(_SC_PAGESIZE), n = 0;

	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		char *p = refpage_fd < 0 ?
			  mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
			  mmap(NULL, LEN, PROT_READ | PROT_WRITE, MAP_PRIVATE, refpage_fd, 0);

		if (p == MAP_FAILED)
			return -1;
		if (refpage_fd < 0)
			madvise(p, LEN, MADV_NOHUGEPAGE);
		for (size_t off = 0; off < LEN; off += psz)
			p[off] = 1;
		munmap(p, LEN);
		n++;
	}
	return n;
}

static void *thread_fn(void *arg)
{
	*(long *)arg = work();
	return NULL;
}

/* One run with @workers workers: MiB written per second, or -1. */
static double run(int workers)
{
	long done[256] = { 0 }, total = 0;
	pthread_t tid[256];
	int pipes[256][2];
	pid_t pid[256];
	double t0;

	atomic_store(&stop, false);
	t0 = bench_ns();
	for (int i = 0; i < workers; i++) {
		if (!processes) {
			if (pthread_create(&tid[i], NULL, thread_fn, &done[i]))
				return -1;
			continue;
		}
		if (pipe(pipes[i]))
			return -1;
		pid[i] = fork();
		if (pid[i] < 0)
			return -1;
		if (!pid[i]) {
			struct timespec ts = { (time_t)seconds,
					       (long)((seconds - (time_t)seconds) * 1e9) };
			pthread_t t;
			long n = 0;

			/* a thread of the child does the work; the child stops it */
			if (pthread_create(&t, NULL, thread_fn, &n))
				_exit(1);
			nanosleep(&ts, NULL);
			atomic_store(&stop, true);
			pthread_join(t, NULL);
			_exit(write(pipes[i][1], &n, sizeof(n)) == sizeof(n) ? 0 : 1);
		}
		close(pipes[i][1]);
	}
	if (!processes) {
		struct timespec ts = { (time_t)seconds,
				       (long)((seconds - (time_t)seconds) * 1e9) };

		nanosleep(&ts, NULL);
		atomic_store(&stop, true);
		for (int i = 0; i < workers; i++)
			pthread_join(tid[i], NULL);
	} else {
		for (int i = 0; i < workers; i++) {
			int status;

			if (read(pipes[i][0], &done[i], sizeof(done[i])) != sizeof(done[i]))
				done[i] = -1;
			close(pipes[i][0]);
			waitpid(pid[i], &status, 0);
		}
	}
	for (int i = 0; i < workers; i++) {
		if (done[i] < 0)
			return -1;
		total += done[i];
	}
	return total * (double)(LEN >> 20) / ((bench_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "workers", required_argument, NULL, 256 },
		{ "seconds", required_argument, NULL, 257 },
		{ "processes", no_argument, NULL, 258 },
		{ NULL, 0, NULL, 0 },
	};
	int counts[2] = { 1, 0 }, runs = 5, fd0;

	bench_init_opts(argc, argv, "refpage_scale", usage, &runs, extra, opt);
	counts[1] = nworkers;
	fd0 = bench_refpage_fd(0xa5);
	for (int b = 0; b < 2; b++) {
		int fd = b ? fd0 : -1;

		if (b && fd < 0) {
			printf("# refpage_scale: no reference pages on this kernel\n");
			bench_json("\"group\":\"refpage_scale\",\"case\":\"unavailable\"");
			break;
		}
		for (int c = 0; c < 2 && !(c && counts[1] == 1); c++) {
			double *v = calloc(runs, sizeof(*v));
			char what[64], extra_json[96];
			struct bench_stats s;

			if (!v)
				return 1;
			refpage_fd = fd;
			for (int r = 0; r < runs; r++) {
				v[r] = run(counts[c]);
				if (v[r] < 0) {
					fprintf(stderr, "refpage_scale: a worker failed: %s\n",
						strerror(errno));
					return 1;
				}
			}
			snprintf(what, sizeof(what), "%d %s", counts[c],
				 processes ? "processes" : "threads");
			snprintf(extra_json, sizeof(extra_json),
				 "\"workers\":%d,\"processes\":%s", counts[c],
				 processes ? "true" : "false");
			s = bench_stats(v, runs);
			bench_result("refpage_scale", what, b ? "refpage" : "anon_4k", extra_json,
				     "MiB_per_s", &s);
			free(v);
		}
	}
	return 0;
}
