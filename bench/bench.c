// SPDX-License-Identifier: GPL-2.0
/* Timing, statistics and output shared by the benchmarks. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <mmext/probe.h>
#include <mmext/uapi.h>

#include "bench.h"

static const char *bench_name;
static FILE *json_file;
static char kernel[128], cpu[128];

double bench_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bench_stats bench_stats(double *v, int n)
{
	struct bench_stats s = { .runs = n };

	if (n <= 0)
		return s;
	qsort(v, n, sizeof(*v), cmp_double);
	s.min = v[0];
	s.max = v[n - 1];
	s.median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	s.p10 = v[n / 10];
	s.p90 = v[n - 1 - n / 10];
	return s;
}

long bench_read_long(const char *path, long dflt)
{
	FILE *f = fopen(path, "r");
	long v = dflt;

	if (!f)
		return dflt;
	if (fscanf(f, "%ld", &v) != 1) {
		v = dflt;
		errno = EINVAL;
	}
	fclose(f);
	return v;
}

long bench_proc_kb(const char *path, const char *field)
{
	char line[256];
	size_t n = strlen(field);
	long v = -1;
	FILE *f = fopen(path, "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, field, n) && line[n] == ':') {
			v = strtol(line + n + 1, NULL, 10);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

int bench_in_path(const char *prog)
{
	char *path = getenv("PATH"), *dup, *dir, *save, buf[PATH_MAX];
	int found = 0;

	if (!path)
		return 0;
	dup = strdup(path);
	for (dir = strtok_r(dup, ":", &save); dir && !found; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, prog);
		found = !access(buf, X_OK);
	}
	free(dup);
	return found;
}

void bench_json(const char *json)
{
	printf("# bench {\"bench\":\"%s\",\"kernel\":\"%s\",%s}\n", bench_name, kernel, json);
	if (json_file)
		fprintf(json_file, "{\"bench\":\"%s\",\"kernel\":\"%s\",%s}\n", bench_name,
			kernel, json);
}

void bench_pairs(const char *head, const double *a, const double *b, int n)
{
	size_t len = strlen(head) + 32 + 2 * (size_t)n * 16;
	char *json = malloc(len);
	int side, i, off;

	if (!json)
		return;
	off = snprintf(json, len, "%s,\"a\":[", head);
	for (side = 0; side < 2; side++) {
		for (i = 0; i < n; i++)
			off += snprintf(json + off, len - off, "%s%.6g", i ? "," : "",
					(side ? b : a)[i]);
		off += snprintf(json + off, len - off, side ? "]" : "],\"b\":[");
	}
	bench_json(json);
	free(json);
}

void bench_result(const char *group, const char *what, const char *backend,
		  const char *extra, const char *unit, const struct bench_stats *s)
{
	char json[1024];

	printf("%-14s %-26s %-13s %12.3f %12.3f %12.3f %-12s %d\n", group, what, backend,
	       s->median, s->min, s->max, unit, s->runs);
	snprintf(json, sizeof(json),
		 "\"group\":\"%s\",\"case\":\"%s\",\"backend\":\"%s\",%s%s\"unit\":\"%s\","
		 "\"median\":%.6g,\"min\":%.6g,\"max\":%.6g,\"p10\":%.6g,\"p90\":%.6g,\"runs\":%d",
		 group, what, backend, extra ? extra : "", extra ? "," : "", unit, s->median,
		 s->min, s->max, s->p10, s->p90, s->runs);
	bench_json(json);
}

static void read_cpu(void)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	strcpy(cpu, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(cpu, sizeof(cpu), "%s", c + 2);
			cpu[strcspn(cpu, "\n\"\\")] = '\0';
			break;
		}
	}
	if (f)
		fclose(f);
}

void bench_init(int argc, char **argv, const char *name, const char *usage, int *runs)
{
	bench_init_opts(argc, argv, name, usage, runs, NULL, NULL);
}

void bench_init_opts(int argc, char **argv, const char *name, const char *usage, int *runs,
		     const struct option *extra, int (*opt)(int val, const char *arg))
{
	static const struct option common[] = {
		{ "runs", required_argument, NULL, 'r' },
		{ "json", required_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
	};
	struct option opts[32] = { 0 };
	struct utsname u;
	char json[512];
	int c, n = 0;

	bench_name = name;
	memcpy(opts, common, sizeof(common));
	n = sizeof(common) / sizeof(common[0]);
	/* The last entry stays zero: the terminator. */
	while (extra && extra[n - 3].name && n < 31) {
		opts[n] = extra[n - 3];
		n++;
	}
	while ((c = getopt_long(argc, argv, "r:j:h", opts, NULL)) != -1) {
		if (c >= 256 && opt) {
			if (opt(c, optarg)) {
				fprintf(stderr, "%s", usage);
				exit(2);
			}
			continue;
		}
		switch (c) {
		case 'r':
			*runs = atoi(optarg);
			if (*runs < 1 || *runs > 100000) {
				fprintf(stderr, "%s: --runs wants 1..100000\n", name);
				exit(2);
			}
			break;
		case 'j':
			json_file = fopen(optarg, "w");
			if (!json_file) {
				perror(optarg);
				exit(2);
			}
			break;
		case 'h':
			printf("%s", usage);
			exit(0);
		default:
			fprintf(stderr, "%s", usage);
			exit(2);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "%s", usage);
		exit(2);
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	uname(&u);
	snprintf(kernel, sizeof(kernel), "%s", u.release);
	read_cpu();
	printf("# %s: Linux %s %s, CPU %s, %ld CPUs online, %d runs per case\n", name,
	       u.release, u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN), *runs);
	snprintf(json, sizeof(json), "\"case\":\"machine\",\"machine\":\"%s\",\"cpu\":\"%s\","
		 "\"cpus\":%ld,\"runs\":%d", u.machine, cpu, sysconf(_SC_NPROCESSORS_ONLN), *runs);
	bench_json(json);
	printf("%-14s %-26s %-13s %12s %12s %12s %-12s %s\n", "GROUP", "CASE", "BACKEND",
	       "MEDIAN", "MIN", "MAX", "UNIT", "RUNS");
}

/* libmmext's reading of the refpage markers (lib/src/probe.c; linked statically). */
int mmext__refpage_nr(long *nr, const char **detail);

int bench_refpage_fd(unsigned char fill)
{
	long nr, psz = sysconf(_SC_PAGESIZE);
	const char *detail;
	char *page;
	int fd, ret;

	/* The 6.12 backport's published number, or the mainline series' one. */
	ret = mmext__refpage_nr(&nr, &detail);
	if (ret)
		return ret;
	page = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		return -errno;
	memset(page, fill, psz);
	fd = syscall(nr, page, REFPAGE_CLOEXEC);
	ret = fd < 0 ? -errno : fd;
	munmap(page, psz);
	return ret;
}
