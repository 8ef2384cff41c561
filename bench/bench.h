/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the benchmarks: timing, statistics, the machine header and result lines.
 * Results go out twice: a table row for people and a "# bench {json}" line (also to
 * --json FILE) for a report generator. Benchmarks never fail on numbers.
 */
#ifndef MMEXT_BENCH_H
#define MMEXT_BENCH_H

#include <getopt.h>
#include <stdint.h>

struct bench_stats {
	double median, min, max, p10, p90;
	int runs;
};

/* Parses --runs N, --json FILE, --help; exits 2 on bad usage. */
void bench_init(int argc, char **argv, const char *name, const char *usage, int *runs);
/*
 * The same, with a benchmark's own long options (no short forms, val >= 256): each one
 * met goes to opt(val, optarg), which returns 0, or -1 for bad usage (exit 2).
 */
void bench_init_opts(int argc, char **argv, const char *name, const char *usage, int *runs,
		     const struct option *extra, int (*opt)(int val, const char *arg));
/* The number at the start of a file (sysfs, procfs), or dflt with errno set. */
long bench_read_long(const char *path, long dflt);
/* The number of a "Field:  N kB" line (/proc/PID/status, /proc/meminfo), or -1. */
long bench_proc_kb(const char *path, const char *field);
/* Whether prog is an executable in $PATH. */
int bench_in_path(const char *prog);
/* A reference page filled with @fill, from the raw system call: its fd, or -errno. */
int bench_refpage_fd(unsigned char fill);
/* Monotonic nanoseconds. */
double bench_ns(void);
/* Sort v[0..n) and summarise it. */
struct bench_stats bench_stats(double *v, int n);
/*
 * Print a table row and a JSON line. extra is a JSON fragment of further members
 * ("\"pages\":8192") or NULL; unit names what the numbers are ("us", "ns_per_page").
 */
void bench_result(const char *group, const char *what, const char *backend,
		  const char *extra, const char *unit, const struct bench_stats *s);
/* A free-form JSON line ("# bench {...}"); json is the object's members. */
void bench_json(const char *json);
/*
 * A JSON line of n pairs for bench/pairstats.py: head's members, then "a" and "b", the
 * two sides' times; pair i is a[i] and b[i], measured a moment apart.
 */
void bench_pairs(const char *head, const double *a, const double *b, int n);

#endif /* MMEXT_BENCH_H */
