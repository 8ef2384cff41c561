// SPDX-License-Identifier: GPL-2.0
/*
 * mmext watch: write watch end to end. The library's watches cover the calling
 * process, so by default this maps a buffer, lets a writer thread write its pages,
 * and every interval asks the watch which pages were written (get + reset). At the
 * end it compares the union of the reports with the pages the writer says it wrote.
 * With --pid it tracks another process as CRIU does: soft-dirty bits, cleared
 * through /proc/PID/clear_refs and read from /proc/PID/pagemap.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: mmext watch [OPTIONS]\n"
	"       mmext watch --pid PID [-i MS] [-c N] [-j]\n"
	"Map PAGES pages in this process, watch them, and run a writer thread that\n"
	"writes RATE pages per second in PATTERN order. Every INTERVAL ms, print the pages\n"
	"the watch reports written since the previous report (get and reset in one step),\n"
	"then a summary: pages written, reported, missed and extra (reported but not\n"
	"written: soft-dirty may do that after VMA changes). A miss is a bug, except with\n"
	"soft_dirty, whose reset may lose a write made meanwhile (see mmext_ww(3)).\n"
	"With --pid, watch the writable memory of process PID instead, through the\n"
	"kernel's soft-dirty bits as CRIU does (Linux with CONFIG_MEM_SOFT_DIRTY; refused\n"
	"elsewhere): every INTERVAL ms print the page ranges written since the previous\n"
	"report. Clearing the bits resets them for the whole process (another soft-dirty\n"
	"user of PID loses its state), and a write between a read and the next clear can\n"
	"be missed. userfaultfd cannot watch another process.\n"
	"  -t, --pid PID      watch process PID (soft-dirty; no writer thread)\n"
	"  -b, --backend B    auto (default), pagemap_scan or soft_dirty\n"
	"  -p, --pages N      pages to watch (default 256)\n"
	"  -i, --interval MS  milliseconds between reports (default 100)\n"
	"  -c, --count N      number of reports (default 10)\n"
	"  -r, --rate N       page writes per second, 0 for as fast as possible (default 1000)\n"
	"  -P, --pattern P    seq (default: pages in order, wrapping) or random\n"
	"  -s, --seed N       seed for --pattern random (default 1)\n"
	"  -j, --json         one JSON object instead of the table\n"
	"  -h, --help         this text\n"
	"Exit status: 0 every written page was reported (or soft_dirty missed some), 1 a\n"
	"backend is unavailable, a write was missed or PID cannot be watched, 2 usage.\n";

struct writer {
	char *base;
	size_t npages, psz;
	unsigned long rate;
	int random;
	uint64_t seed;
	unsigned long *written;		/* bitmap of pages written, set after the store */
	unsigned long writes;
	int stop;
};

#define LBITS (8 * sizeof(unsigned long))

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_until(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1e3),
			       .tv_nsec = (long)((ms - (time_t)(ms / 1e3) * 1e3) * 1e6) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	uint64_t x = w->seed ? w->seed : 1;
	double start = now_ms();
	size_t idx = 0;
	unsigned long k;

	for (k = 0; !__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE); k++) {
		if (w->random) {
			/* xorshift64: reproducible with --seed, no libc state shared. */
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			idx = x % w->npages;
		} else {
			idx = k % w->npages;
		}
		/* Vary the offset so every page sees a real store, not one cache line. */
		((volatile char *)w->base)[idx * w->psz + (k * 64) % w->psz] = (char)k;
		__atomic_fetch_or(&w->written[idx / LBITS], 1UL << (idx % LBITS), __ATOMIC_RELEASE);
		__atomic_store_n(&w->writes, k + 1, __ATOMIC_RELAXED);
		if (w->rate)
			sleep_until(start + (k + 1) * 1e3 / w->rate);
	}
	return NULL;
}

/* "0-36,40,42-45", stopping near max characters. */
static void put_page_list(FILE *f, void **pages, size_t n, const char *base, size_t psz,
			  int json)
{
	size_t i, j, width = 0;

	if (json) {
		for (i = 0; i < n; i++)
			fprintf(f, "%s%zu", i ? "," : "", (size_t)((char *)pages[i] - base) / psz);
		return;
	}
	for (i = 0; i < n; i = j) {
		size_t first = ((char *)pages[i] - base) / psz;

		for (j = i + 1; j < n && ((char *)pages[j] - base) / psz == first + (j - i); j++)
			;
		if (width > 60) {
			printf(",... (%zu more)", n - i);
			return;
		}
		if (j - i > 1)
			width += printf("%s%zu-%zu", i ? "," : "", first, first + (j - i) - 1);
		else
			width += printf("%s%zu", i ? "," : "", first);
	}
}

/* Get and reset the whole range; marks the pages in reported. Returns count or -errno. */
static long report(struct mmext_ww *ww, struct writer *w, void **pages, unsigned long *reported)
{
	size_t n = w->npages, i;
	int ret;

	ret = mmext_ww_get(ww, w->base, w->npages * w->psz, MMEXT_WW_RESET, pages, &n);
	if (ret < 0)
		return ret;
	/* pages[] holds every page, so the library can never have more to return. */
	for (i = 0; i < n; i++) {
		size_t idx = ((char *)pages[i] - w->base) / w->psz;

		reported[idx / LBITS] |= 1UL << (idx % LBITS);
	}
	return n;
}

/* The backends the library provides: MMEXT_WW_MPROTECT is a name it always refuses. */
static const uint32_t ww_backends[] = {
	MMEXT_WW_AUTO, MMEXT_WW_PAGEMAP_SCAN, MMEXT_WW_SOFT_DIRTY,
};

static int parse_ww_backend(const char *s, uint32_t *b)
{
	size_t i;

	for (i = 0; i < sizeof(ww_backends) / sizeof(ww_backends[0]); i++) {
		if (!strcmp(s, mmext_ww_backend_name(ww_backends[i]))) {
			*b = ww_backends[i];
			return 0;
		}
	}
	return -EINVAL;
}

static const enum mmext_feature ww_feature[] = {
	[MMEXT_WW_PAGEMAP_SCAN] = MMEXT_FEAT_WRITEWATCH,
	[MMEXT_WW_SOFT_DIRTY] = MMEXT_FEAT_SOFT_DIRTY,
};

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAPPED	(1ULL << 62)
#define PM_SOFT_DIRTY	(1ULL << 55)

struct pid_watch {
	pid_t pid;
	int pagemap, clear_refs;
	size_t psz;
	struct mmext_maps *maps;
	FILE *f;
	int json;
	uint64_t run_start, run_end;	/* the range of written pages being gathered */
	unsigned long pages, nranges;
};

/* Reset every soft-dirty bit of the process ("4": soft-dirty only). */
static int clear_soft_dirty(struct pid_watch *pw)
{
	return pwrite(pw->clear_refs, "4", 1, 0) == 1 ? 0 : -errno;
}

static void put_run(struct pid_watch *pw)
{
	if (pw->run_end == pw->run_start)
		return;
	if (pw->json)
		fprintf(pw->f, "%s{\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"start_hex\":\"0x%"
			PRIx64 "\",\"end_hex\":\"0x%" PRIx64 "\"}", pw->nranges ? "," : "",
			pw->run_start, pw->run_end, pw->run_start, pw->run_end);
	else
		fprintf(pw->f, "%s%" PRIx64 "-%" PRIx64, pw->nranges ? "," : "", pw->run_start,
			pw->run_end);
	pw->nranges++;
	pw->run_start = pw->run_end;
}

/* Print the written page ranges of every writable VMA, then clear. 0 or -errno. */
static int pid_report(struct pid_watch *pw)
{
	uint64_t ent[4096], a, i;
	struct mmext_vma v;
	ssize_t got;
	int ret;

	pw->pages = pw->nranges = 0;
	pw->run_start = pw->run_end = 0;
	mmext_maps_rewind(pw->maps);
	while ((ret = mmext_maps_next(pw->maps, &v)) > 0) {
		if (!(v.prot & MMEXT_VMA_WRITE))
			continue;
		for (a = v.start; a < v.end; a += got / 8 * pw->psz) {
			size_t n = (v.end - a) / pw->psz;

			if (n > sizeof(ent) / 8)
				n = sizeof(ent) / 8;
			got = pread(pw->pagemap, ent, n * 8, a / pw->psz * 8);
			if (got < 8)
				return got < 0 ? -errno : -ESRCH;
			for (i = 0; i < (uint64_t)got / 8; i++) {
				uint64_t page = a + i * pw->psz;

				if (!(ent[i] & PM_SOFT_DIRTY) || !(ent[i] & (PM_PRESENT | PM_SWAPPED)))
					continue;
				if (page != pw->run_end)
					put_run(pw);
				if (pw->run_end == pw->run_start)
					pw->run_start = page;
				pw->run_end = page + pw->psz;
				pw->pages++;
			}
		}
	}
	put_run(pw);
	return ret ? ret : clear_soft_dirty(pw);
}

static int watch_pid(pid_t pid, unsigned long interval, unsigned long count, int json)
{
	struct mmext_feature_status st = { .detail = "" };
	struct pid_watch pw = { .pid = pid, .pagemap = -1, .clear_refs = -1, .json = json };
	char path[64];
	double t0, t;
	unsigned long i;
	int ret, rc = EXIT_RUNTIME;

	mmext_probe(MMEXT_FEAT_SOFT_DIRTY, &st);
	if (!st.available)
		return cli_fail("watch", 0, "cannot watch process %d: this kernel has no "
				"soft-dirty tracking (%s)", (int)pid, st.detail);
	ret = mmext_maps_open(pid, NULL, &pw.maps);
	if (ret)
		return cli_pid_fail("watch", pid, ret);
	pw.psz = sysconf(_SC_PAGESIZE);
	snprintf(path, sizeof(path), "/proc/%d/pagemap", (int)pid);
	pw.pagemap = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/clear_refs", (int)pid);
	pw.clear_refs = open(path, O_WRONLY | O_CLOEXEC);
	if (pw.pagemap < 0 || pw.clear_refs < 0) {
		ret = errno == ENOENT ? -ESRCH : -errno;
		cli_pid_fail("watch", pid, ret);
		goto out;
	}
	ret = clear_soft_dirty(&pw);
	if (ret) {
		cli_pid_fail("watch", pid, ret);
		goto out;
	}
	pw.f = json ? cli_doc_open() : stdout;
	if (!pw.f) {
		cli_fail("watch", -ENOMEM, "allocating");
		goto out;
	}
	if (json)
		fprintf(pw.f, "{\"pid\":%d,\"backend\":\"soft_dirty\",\"page_size\":%zu,"
			"\"interval_ms\":%lu,\"intervals\":[", (int)pid, pw.psz, interval);
	else
		printf("mmext watch: process %d, backend soft_dirty, %lu reports every %lu ms\n"
		       "%5s %9s %7s  %s\n", (int)pid, count, interval, "#", "ms", "written",
		       "ranges");
	fflush(stdout);
	t0 = now_ms();
	for (i = 0; i < count; i++) {
		sleep_until(t0 + (i + 1) * (double)interval);
		t = now_ms() - t0;
		if (json)
			fprintf(pw.f, "%s{\"index\":%lu,\"ms\":%.3f,\"ranges\":[", i ? "," : "",
				i + 1, t);
		else
			printf("%5lu %9.1f ", i + 1, t);
		/* The count is known after the ranges: text puts it first, so build aside. */
		if (!json) {
			char *line = NULL;
			size_t len = 0;

			pw.f = open_memstream(&line, &len);
			ret = pw.f ? pid_report(&pw) : -ENOMEM;
			if (pw.f)
				fclose(pw.f);
			if (!ret)
				printf("%7lu  %s\n", pw.pages, line);
			free(line);
			pw.f = stdout;
			fflush(stdout);
		} else {
			ret = pid_report(&pw);
			fprintf(pw.f, "],\"written\":%lu}", pw.pages);
		}
		if (ret) {
			if (json)
				cli_doc_close(pw.f, 0);
			cli_pid_fail("watch", pid, ret);
			goto out;
		}
	}
	if (json) {
		fputs("]}\n", pw.f);
		rc = cli_doc_close(pw.f, 1);
	} else {
		rc = EXIT_OK;
	}
out:
	if (pw.pagemap >= 0)
		close(pw.pagemap);
	if (pw.clear_refs >= 0)
		close(pw.clear_refs);
	mmext_maps_close(pw.maps);
	return rc;
}

/* What the options ask for. */
struct watch_args {
	pid_t pid;		/* -1: watch this process's own buffer */
	unsigned long npages, interval, count, rate, seed;
	int random, json;
};

/*
 * Parse the options into a and wo. Returns -1 when there is something to watch, else the
 * exit status: 0 after --help, 2 after a usage error (already reported).
 */
static int parse_watch(int argc, char **argv, struct watch_args *a, struct mmext_ww_opts *wo)
{
	static const struct option opts[] = {
		{ "backend", required_argument, NULL, 'b' },
		{ "pages", required_argument, NULL, 'p' },
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ "rate", required_argument, NULL, 'r' },
		{ "pattern", required_argument, NULL, 'P' },
		{ "seed", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "pid", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int writer_opt = 0;	/* an option only the writer thread uses */
	unsigned long v;
	int c;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:b:p:i:c:r:P:s:jt:h", opts, NULL)) != -1) {
		unsigned long lo = 1, hi = 1UL << 20, *dst = NULL;

		if (strchr("bprPs", c))
			writer_opt = c;
		switch (c) {
		case 't':
			/* Its own memory is what the default mode watches. */
			if (cli_parse_pid(optarg, &a->pid) || !a->pid)
				return cli_usage("watch", "bad PID %s", cli_arg(optarg));
			break;
		case 'b':
			if (!strcmp(optarg, mmext_ww_backend_name(MMEXT_WW_MPROTECT)))
				return cli_usage("watch", "backend %s is not provided by libmmext, "
						 "which installs no signal handler (auto, "
						 "pagemap_scan, soft_dirty)", optarg);
			if (parse_ww_backend(optarg, &wo->backend))
				return cli_usage("watch", "bad backend %s (auto, pagemap_scan, "
						 "soft_dirty)", cli_arg(optarg));
			break;
		case 'p': dst = &a->npages; break;
		case 'i': dst = &a->interval; hi = 60000; break;
		case 'c': dst = &a->count; hi = 1000000; break;
		case 'r': dst = &a->rate; lo = 0; hi = 10000000; break;
		case 's': dst = &a->seed; lo = 0; hi = ~0UL; break;
		case 'P':
			if (strcmp(optarg, "seq") && strcmp(optarg, "random"))
				return cli_usage("watch", "bad pattern %s (seq, random)",
						 cli_arg(optarg));
			a->random = !strcmp(optarg, "random");
			break;
		case 'j': a->json = 1; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_opt("watch", c, argv);
		}
		if (dst) {
			const struct option *o = opts;

			while (o->val != c)
				o++;
			if (cli_parse_num(optarg, lo, hi, &v))
				return cli_usage("watch", "bad value %s for --%s (%lu..%lu)",
						 cli_arg(optarg), o->name, lo, hi);
			*dst = v;
		}
	}
	if (optind < argc)
		return cli_usage("watch", "unexpected argument %s (watch runs no command: "
				 "see --help)", cli_arg(argv[optind]));
	if (a->pid >= 0 && writer_opt) {
		const struct option *o = opts;

		while (o->val != writer_opt)
			o++;
		return cli_usage("watch", "--%s is for the writer thread, not --pid", o->name);
	}
	return -1;
}

/*
 * Start the writer, then every interval print the pages the watch reports, and once
 * more after the writer stopped, which catches its final writes. EXIT_OK, or the exit
 * status of a failure (reported).
 */
static int watch_reports(struct mmext_ww *ww, struct writer *w, const struct watch_args *a,
			 FILE *f, void **pages, unsigned long *reported)
{
	double t0, t;
	pthread_t th;
	size_t i;
	long n;
	int ret;

	t0 = now_ms();
	if ((ret = pthread_create(&th, NULL, writer_main, w)))
		return cli_fail("watch", ret, "starting the writer thread");
	for (i = 0; i <= a->count; i++) {
		if (i < a->count) {
			sleep_until(t0 + (i + 1) * (double)a->interval);
		} else {
			__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
			pthread_join(th, NULL);
		}
		n = report(ww, w, pages, reported);
		t = now_ms() - t0;
		if (n < 0) {
			if (i < a->count) {
				__atomic_store_n(&w->stop, 1, __ATOMIC_RELEASE);
				pthread_join(th, NULL);
			}
			if (a->json)
				cli_doc_close(f, 0);
			return cli_fail("watch", n, "mmext_ww_get");
		}
		if (a->json) {
			fprintf(f, "%s{\"index\":%zu,\"final\":%s,\"ms\":%.3f,\"written\":%ld,"
				"\"pages\":[", i ? "," : "", i + 1, i == a->count ? "true" : "false",
				t, n);
			put_page_list(f, pages, n, w->base, w->psz, 1);
			fputs("]}", f);
		} else {
			if (i < a->count)
				printf("%5zu %9.1f %7ld  ", i + 1, t, n);
			else
				printf("%5s %9.1f %7ld  ", "end", t, n);
			put_page_list(f, pages, n, w->base, w->psz, 0);
			putchar('\n');
		}
		fflush(stdout);
	}
	return EXIT_OK;
}

/*
 * Compare the pages the writer wrote with those the watch reported, print the summary
 * and end the JSON document. A missed page fails, except with soft-dirty, whose reset
 * may lose a write made meanwhile.
 */
static int watch_summary(struct mmext_ww *ww, const struct writer *w,
			 const unsigned long *reported, int json, FILE *f)
{
	unsigned long missed = 0, extra = 0, distinct = 0, nrep = 0;
	int rc = EXIT_OK;
	size_t i;

	for (i = 0; i < w->npages; i++) {
		int wr = !!(w->written[i / LBITS] & (1UL << (i % LBITS)));
		int rp = !!(reported[i / LBITS] & (1UL << (i % LBITS)));

		distinct += wr;
		nrep += rp;
		missed += wr && !rp;
		extra += rp && !wr;
	}
	if (json)
		fprintf(f, "],\"summary\":{\"writes\":%lu,\"written_pages\":%lu,\"reported_pages\":%lu,"
		       "\"missed\":%lu,\"extra\":%lu}}\n", w->writes, distinct, nrep, missed, extra);
	else
		printf("writer: %lu writes to %lu distinct pages; watch reported %lu pages; "
		       "missed %lu, extra %lu\n", w->writes, distinct, nrep, missed, extra);
	if (missed && mmext_ww_backend(ww) == MMEXT_WW_SOFT_DIRTY) {
		fprintf(stderr, "mmext watch: %lu written pages were not reported: soft-dirty "
			"loses a write made while it resets\n", missed);
	} else if (missed) {
		fprintf(stderr, "mmext watch: %lu written pages were never reported\n", missed);
		rc = EXIT_RUNTIME;
	}
	if (json && cli_doc_close(f, 1))
		rc = EXIT_RUNTIME;
	return rc;
}

/* The default mode: a buffer of this process, written by a thread, under a watch. */
static int watch_self(const struct watch_args *a, const struct mmext_ww_opts *wo)
{
	unsigned long npages = a->npages, *reported;
	struct writer w = { 0 };
	struct mmext_ww *ww;
	int ret, rc;
	size_t words;
	void **pages;
	FILE *f;

	w.psz = sysconf(_SC_PAGESIZE);
	w.npages = npages;
	w.rate = a->rate;
	w.seed = a->seed;
	w.random = a->random;
	words = (npages + LBITS - 1) / LBITS;
	w.base = mmap(NULL, npages * w.psz, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	w.written = calloc(words, sizeof(long));
	reported = calloc(words, sizeof(long));
	pages = calloc(npages, sizeof(*pages));
	if (w.base == MAP_FAILED || !w.written || !reported || !pages)
		return cli_fail("watch", -ENOMEM, "allocating %lu pages", npages);

	ret = mmext_ww_open(w.base, npages * w.psz, wo, &ww);
	if (ret) {
		struct mmext_feature_status st = { .detail = "" };

		if (ret == -EOPNOTSUPP && wo->backend != MMEXT_WW_AUTO)
			mmext_probe(ww_feature[wo->backend], &st);
		cli_fail("watch", ret, "cannot watch with backend %s",
			 mmext_ww_backend_name(wo->backend));
		if (*st.detail)
			fprintf(stderr, "mmext watch: %s: %s\n",
				mmext_feature_name(ww_feature[wo->backend]), st.detail);
		munmap(w.base, npages * w.psz);
		free(w.written);
		free(reported);
		free(pages);
		return EXIT_RUNTIME;
	}
	f = a->json ? cli_doc_open() : stdout;
	if (!f) {
		rc = cli_fail("watch", -ENOMEM, "allocating");
		goto out;
	}
	if (a->json)
		fprintf(f, "{\"backend\":\"%s\",\"pages\":%lu,\"page_size\":%zu,\"interval_ms\":%lu,"
		       "\"rate\":%lu,\"pattern\":\"%s\",\"intervals\":[",
		       mmext_ww_backend_name(mmext_ww_backend(ww)), npages, w.psz, a->interval,
		       a->rate, w.random ? "random" : "seq");
	else
		printf("mmext watch: %lu pages at %p, backend %s, writer %s at %lu pages/s%s,\n"
		       "%lu reports every %lu ms\n%5s %9s %7s  %s\n", npages, (void *)w.base,
		       mmext_ww_backend_name(mmext_ww_backend(ww)),
		       w.random ? "random" : "sequential", a->rate, a->rate ? "" : " (unthrottled)",
		       a->count, a->interval, "#", "ms", "written", "pages");
	fflush(stdout);

	rc = watch_reports(ww, &w, a, f, pages, reported);
	if (rc == EXIT_OK)
		rc = watch_summary(ww, &w, reported, a->json, f);
out:
	mmext_ww_close(ww);
	munmap(w.base, npages * w.psz);
	free(w.written);
	free(reported);
	free(pages);
	return rc;
}

int cmd_watch(int argc, char **argv)
{
	struct watch_args a = { .pid = -1, .npages = 256, .interval = 100, .count = 10,
				.rate = 1000, .seed = 1 };
	MMEXT_OPTS(mmext_ww_opts, wo);
	int rc;

	rc = parse_watch(argc, argv, &a, &wo);
	if (rc >= 0)
		return rc;
	if (a.pid >= 0)
		return watch_pid(a.pid, a.interval, a.count, a.json);
	return watch_self(&a, &wo);
}
