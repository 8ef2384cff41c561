// SPDX-License-Identifier: GPL-2.0
/*
 * What reading another process's /proc/PID/maps costs the reader, in CPU time and wall
 * time per whole-file read, when the target is quiet and when its threads keep taking
 * mmap_lock for writing (mprotect() in a loop). A reader that waits for those writers
 * by spinning pays for them in CPU; one that queues on mmap_lock pays in wall time.
 * The target has --vmas single-page VMAs, alternately anonymous and file-backed (a
 * memfd), so that the file has as many lines.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
	"Usage: maps_reader_cpu [--runs N] [--json FILE] [--vmas N] [--writers N]\n"
	"Read a target process's /proc/PID/maps N times (default 30) while it is quiet, then\n"
	"N times while N threads of it (default 2) call mprotect() in a loop; print the\n"
	"reader's CPU time and wall time per whole-file read. --vmas: the target's VMAs\n"
	"(default 600).\n";

static int nvmas = 600;
static int nwriters = 2;

static int opt(int val, const char *arg)
{
	char *end;

	switch (val) {
	case 256:
		nvmas = strtol(arg, &end, 10);
		return *end || nvmas < 1 || nvmas > 60000 ? -1 : 0;
	case 257:
		nwriters = strtol(arg, &end, 10);
		return *end || nwriters < 1 || nwriters > 64 ? -1 : 0;
	}
	return -1;
}

static void *writer(void *arg)
{
	long psz = sysconf(_SC_PAGESIZE);
	char *p = arg;

	for (unsigned long i = 0;; i++)
		mprotect(p, psz, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE);
	return NULL;
}

/* The target: maps its VMAs, starts @writers threads, says so on @ready, then waits. */
static void target(int writers, int ready)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fd = memfd_create("maps_reader_cpu", MFD_CLOEXEC);
	char *area, *wpages;
	pthread_t t;

	area = mmap(NULL, 2 * nvmas * psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	wpages = mmap(NULL, 2 * (writers + 1) * psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		      -1, 0);
	if (fd < 0 || ftruncate(fd, psz) || area == MAP_FAILED || wpages == MAP_FAILED)
		_exit(1);
	/* One page in two: the PROT_NONE holes keep neighbours from merging. */
	for (int i = 0; i < nvmas; i++) {
		void *at = area + 2 * i * psz;
		void *p = i & 1 ? mmap(at, psz, PROT_READ, MAP_FIXED | MAP_SHARED, fd, 0) :
				  mmap(at, psz, PROT_READ, MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS,
				       -1, 0);

		if (p == MAP_FAILED)
			_exit(1);
	}
	for (int i = 0; i < writers; i++)
		if (pthread_create(&t, NULL, writer, wpages + 2 * (i + 1) * psz))
			_exit(1);
	if (write(ready, "", 1) != 1)
		_exit(1);
	for (;;)
		pause();
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* @runs whole reads of the target's maps with @writers busy; 0 or -1. */
static int measure(int writers, int runs)
{
	static char buf[1 << 16];
	double *cpu = calloc(runs, sizeof(*cpu)), *wall = calloc(runs, sizeof(*wall));
	char path[64], extra[96];
	struct bench_stats s;
	int pipefd[2], status, fd, ret = -1;
	long lines = 0;
	pid_t pid;
	char c;

	if (!cpu || !wall || pipe(pipefd))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		close(pipefd[0]);
		target(writers, pipefd[1]);
	}
	close(pipefd[1]);
	if (read(pipefd[0], &c, 1) != 1) {
		fprintf(stderr, "maps_reader_cpu: the target did not start\n");
		goto out;
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	for (int r = 0; r < runs; r++) {
		double c0 = cpu_ns(), w0 = bench_ns();
		ssize_t n;

		fd = open(path, O_RDONLY);
		if (fd < 0) {
			perror(path);
			goto out;
		}
		lines = 0;
		while ((n = read(fd, buf, sizeof(buf))) > 0)
			for (ssize_t i = 0; i < n; i++)
				lines += buf[i] == '\n';
		close(fd);
		if (n < 0) {
			perror(path);
			goto out;
		}
		cpu[r] = (cpu_ns() - c0) / 1e3;
		wall[r] = (bench_ns() - w0) / 1e3;
	}
	snprintf(extra, sizeof(extra), "\"writers\":%d,\"lines\":%ld", writers, lines);
	s = bench_stats(cpu, runs);
	bench_result("maps_reader_cpu", writers ? "cpu per read, busy writers" :
			     "cpu per read, quiet", "maps", extra, "us", &s);
	s = bench_stats(wall, runs);
	bench_result("maps_reader_cpu", writers ? "wall per read, busy writers" :
			     "wall per read, quiet", "maps", extra, "us", &s);
	ret = 0;
out:
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	close(pipefd[0]);
	free(cpu);
	free(wall);
	return ret;
}

int main(int argc, char **argv)
{
	static const struct option extra[] = {
		{ "vmas", required_argument, NULL, 256 },
		{ "writers", required_argument, NULL, 257 },
		{ NULL, 0, NULL, 0 },
	};
	int runs = 30;

	bench_init_opts(argc, argv, "maps_reader_cpu", usage, &runs, extra, opt);
	if (measure(0, runs) || measure(nwriters, runs))
		return 1;
	return 0;
}
