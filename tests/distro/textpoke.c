// SPDX-License-Identifier: GPL-2.0
/*
 * A check of the emulator rather than of the kernel: flip a static key whose branch
 * sites sit in the scheduler while every CPU context-switches, so the kernel rewrites
 * text other CPUs are running. Each flip goes through the int3 dance of x86's text
 * patching; a CPU that runs a stale copy of the patched bytes traps on an int3 the
 * kernel no longer claims, and the guest dies with "Oops: int3". QEMU's
 * multi-threaded TCG (7.2 and 10.0) does that within seconds (scripts/lib.sh,
 * tcg_accel).
 *
 *   textpoke [-t SECONDS]    flip for SECONDS (20); exit 0 when the kernel survives,
 *                            4 (skip) without a key to flip, 1 on an error
 *
 * The key is schedstats' (sysctl kernel.sched_schedstats, flipped at once), else the
 * context-switch software event's (held while such a perf event exists). Without jump
 * labels a key is a plain load and nothing is patched: the check still passes.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define SCHEDSTATS "/proc/sys/kernel/sched_schedstats"

struct bouncer {
	int in, out, cpu, serve;
};

/* Two threads per CPU hand a byte back and forth: __schedule() runs all the time. */
static void *bounce(void *arg)
{
	struct bouncer *b = arg;
	cpu_set_t set;
	char c = 0;

	CPU_ZERO(&set);
	CPU_SET(b->cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
	if (b->serve && write(b->out, &c, 1) != 1)
		return NULL;
	while (read(b->in, &c, 1) == 1 && write(b->out, &c, 1) == 1)
		;
	return NULL;
}

static int start_bouncers(int cpus)
{
	for (int cpu = 0; cpu < cpus; cpu++) {
		struct bouncer *b = calloc(2, sizeof(*b));
		int ab[2], ba[2];
		pthread_t t;

		if (!b || pipe(ab) || pipe(ba))
			return -1;
		b[0] = (struct bouncer){ ba[0], ab[1], cpu, 1 };
		b[1] = (struct bouncer){ ab[0], ba[1], cpu, 0 };
		if (pthread_create(&t, NULL, bounce, &b[0]) ||
		    pthread_create(&t, NULL, bounce, &b[1]))
			return -1;
	}
	return 0;
}

static char schedstats_was = '0';

static int flip_schedstats(int on)
{
	int fd = open(SCHEDSTATS, O_WRONLY);
	int ok = fd >= 0 && write(fd, on ? "1" : "0", 1) == 1;

	if (fd >= 0)
		close(fd);
	return ok ? 0 : -1;
}

/* The software event's key is taken at perf_event_open() and dropped at close(). */
static int flip_perf(int on)
{
	static int fd = -1;
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CONTEXT_SWITCHES,
	};

	if (!on) {
		close(fd);
		fd = -1;
		return 0;
	}
	fd = syscall(SYS_perf_event_open, &attr, -1, 0, -1, 0);
	return fd < 0 ? -1 : 0;
}

int main(int argc, char **argv)
{
	int (*flip)(int on) = flip_schedstats;
	const char *key = "schedstats";
	long secs = 20, flips = 0;
	struct timespec now, end;
	int fd, o;

	while ((o = getopt(argc, argv, "t:")) != -1) {
		char *e;

		if (o != 't')
			goto usage;
		secs = strtol(optarg, &e, 10);
		if (*e || secs <= 0)
			goto usage;
	}
	if (optind != argc)
		goto usage;

	fd = open(SCHEDSTATS, O_RDWR);
	if (fd >= 0) {
		if (read(fd, &schedstats_was, 1) != 1)
			schedstats_was = '0';
		close(fd);
	} else {
		flip = flip_perf;
		key = "context-switch event";
		if (flip(1)) {
			printf("skip: no schedstats sysctl and no perf event (%s)\n",
			       strerror(errno));
			return 4;
		}
		flip(0);
	}
	if (start_bouncers(sysconf(_SC_NPROCESSORS_ONLN))) {
		perror("textpoke: threads");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += secs;
	do {
		if (flip(!(flips & 1))) {
			fprintf(stderr, "textpoke: flipping the %s key: %s\n", key,
				strerror(errno));
			return 1;
		}
		flips++;
		usleep(2000);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while (now.tv_sec < end.tv_sec ||
		 (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	if (flip == flip_schedstats)
		flip(schedstats_was == '1');
	else if (flips & 1)
		flip(0);
	printf("ok: %ld flips of the %s key in %ld s, the kernel runs on\n", flips, key,
	       secs);
	return 0;
usage:
	fprintf(stderr, "usage: textpoke [-t SECONDS]\n");
	return 1;
}
