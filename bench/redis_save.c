// SPDX-License-Identifier: GPL-2.0
/*
 * Redis BGSAVE under load, plain fork against COW page tables: two redis-server
 * processes, one started plainly and one under bench/cowrun, each given the same
 * dataset (DEBUG POPULATE). Rounds alternate between them (ABBA): a client writes
 * without pause while BGSAVE forks and the child saves, and this program records
 *   - the fork's time (INFO latest_fork_usec) and the save's duration,
 *   - every write's latency, summarised over the save (p50, p99, p99.9, worst),
 *   - the memory: server and child VmRSS, the child's VmPTE (when first seen, just
 *     after the fork, and at its peak), and the system's used
 *     memory (anonymous and kernel: MemTotal less free, buffers, page cache and
 *     reclaimable slab), at their peak during the save and one second after it,
 *   - a checksum of the saved RDB file.
 * The writes store the value a key already has (DEBUG POPULATE's value for it), so each
 * write replaces the value's memory and dirties the pages a real update does, but the
 * dataset never changes: every save, plain or COW, must write the same records. The
 * checksum is over the records and independent of their order (each server hashes its
 * keys with its own random seed) and of the RDB's header (creation time, memory used).
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "bench.h"

static const char usage[] =
	"Usage: redis_save --plain SOCKET [--cow SOCKET] [--keys N] [--size BYTES] [--runs N]\n"
	"                  [--json FILE]\n"
	"       redis_save --rdb-sum FILE\n"
	"Populates the servers with N keys of BYTES (DEBUG POPULATE N key BYTES), then runs\n"
	"--runs pairs of BGSAVE rounds (ABBA) with a writing client, or --runs rounds of the\n"
	"plain server alone without --cow (a kernel without COW page tables); --rdb-sum\n"
	"prints a saved file's record checksum.\n";

static const char *sock_path[2];	/* 0 plain, 1 COW */
static const char *backend[2] = { "plain", "cow_pte" };
static long nkeys = 1000000, vsize = 1024;

/* ---- a minimal RESP client, enough for the replies these commands give ---- */

struct conn {
	int fd;
	char buf[65536];
	size_t off, len;
};

static void die(const char *what)
{
	fprintf(stderr, "redis_save: %s%s%s\n", what, errno ? ": " : "", errno ? strerror(errno) : "");
	exit(1);
}

static void conn_open(struct conn *c, const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	c->off = c->len = 0;
	if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)))
		die(path);
}

static int conn_byte(struct conn *c)
{
	if (c->off == c->len) {
		ssize_t n = read(c->fd, c->buf, sizeof(c->buf));

		if (n <= 0) {
			errno = n ? errno : 0;
			die("server closed the connection");
		}
		c->off = 0;
		c->len = n;
	}
	return (unsigned char)c->buf[c->off++];
}

static void conn_line(struct conn *c, char *line, size_t size)
{
	size_t n = 0;
	int ch;

	while ((ch = conn_byte(c)) != '\n')
		if (ch != '\r' && n + 1 < size)
			line[n++] = ch;
	line[n] = '\0';
}

/*
 * One reply into out (bulk strings' bodies, simple strings, integers; an array's
 * elements joined by newlines); an error reply ends the program.
 */
static size_t conn_reply(struct conn *c, char *out, size_t size)
{
	char line[256];
	size_t got = 0;
	long n, i;

	conn_line(c, line, sizeof(line));
	switch (line[0]) {
	case '-':
		errno = 0;
		fprintf(stderr, "redis_save: server error: %s\n", line + 1);
		exit(1);
	case '+':
	case ':':
		got = snprintf(out, size, "%s", line + 1);
		return got < size ? got : size - 1;
	case '$':
		n = atol(line + 1);
		for (i = 0; i < n; i++) {
			int ch = conn_byte(c);

			if (got + 1 < size)
				out[got++] = ch;
		}
		if (n >= 0) {
			conn_byte(c);
			conn_byte(c);
		}
		out[got] = '\0';
		return got;
	case '*':
		n = atol(line + 1);
		for (i = 0; i < n; i++) {
			got += conn_reply(c, out + got, size - got);
			if (got + 1 < size)
				out[got++] = '\n';
			out[got] = '\0';
		}
		return got;
	}
	errno = 0;
	die("unexpected reply");
	return 0;
}

static void conn_send(struct conn *c, int argc, const char **argv, const size_t *lens)
{
	/* Per thread: the writing client and the control connection send at once. */
	static __thread char *msg;
	static __thread size_t cap;
	size_t need = 32, off, len;
	int i;

	for (i = 0; i < argc; i++)
		need += (lens ? lens[i] : strlen(argv[i])) + 32;
	if (need > cap) {
		cap = need * 2;
		msg = realloc(msg, cap);
		if (!msg)
			die("out of memory");
	}
	off = sprintf(msg, "*%d\r\n", argc);
	for (i = 0; i < argc; i++) {
		len = lens ? lens[i] : strlen(argv[i]);
		off += sprintf(msg + off, "$%zu\r\n", len);
		memcpy(msg + off, argv[i], len);
		off += len;
		msg[off++] = '\r';
		msg[off++] = '\n';
	}
	for (i = 0; (size_t)i < off;) {
		ssize_t n = write(c->fd, msg + i, off - i);

		if (n <= 0)
			die("write to the server");
		i += n;
	}
}

/* A command of space-separated words; its reply in out. */
static void conn_cmd(struct conn *c, char *out, size_t size, const char *words)
{
	char copy[256], *argv[16], *save;
	int argc = 0;

	snprintf(copy, sizeof(copy), "%s", words);
	for (char *w = strtok_r(copy, " ", &save); w && argc < 16; w = strtok_r(NULL, " ", &save))
		argv[argc++] = w;
	conn_send(c, argc, (const char **)argv, NULL);
	conn_reply(c, out, size);
}

/* A field of an INFO reply, as a number; -1 when absent. */
static double info_num(const char *info, const char *field)
{
	size_t n = strlen(field);

	for (const char *p = info; (p = strstr(p, field)); p += n)
		if ((p == info || p[-1] == '\n') && p[n] == ':')
			return atof(p + n + 1);
	return -1;
}

static void info_str(const char *info, const char *field, char *out, size_t size)
{
	size_t n = strlen(field);

	snprintf(out, size, "?");
	for (const char *p = info; (p = strstr(p, field)); p += n)
		if ((p == info || p[-1] == '\n') && p[n] == ':') {
			snprintf(out, size, "%.*s", (int)strcspn(p + n + 1, "\r\n"), p + n + 1);
			return;
		}
}

/* ---- the saved file: a checksum of its records, whatever their order ---- */

struct rdb {
	FILE *f;
	uint64_t h;	/* FNV-1a of the current record's bytes */
};

static int rdb_byte(struct rdb *r)
{
	int ch = getc(r->f);

	if (ch == EOF) {
		errno = 0;
		die("RDB file ends early");
	}
	r->h = (r->h ^ (unsigned)ch) * 0x100000001b3ULL;
	return ch;
}

static void rdb_skip(struct rdb *r, uint64_t n)
{
	while (n--)
		rdb_byte(r);
}

/* A length; *special is set (and the encoding returned) for an encoded string. */
static uint64_t rdb_len(struct rdb *r, int *special)
{
	int ch = rdb_byte(r);
	uint64_t v = 0;

	*special = 0;
	switch (ch >> 6) {
	case 0:
		return ch & 0x3f;
	case 1:
		return (uint64_t)(ch & 0x3f) << 8 | rdb_byte(r);
	case 2:
		for (int i = 0; i < (ch == 0x80 ? 4 : 8); i++)
			v = v << 8 | rdb_byte(r);
		return v;
	}
	*special = 1;
	return ch & 0x3f;
}

static void rdb_string(struct rdb *r)
{
	int special;
	uint64_t n = rdb_len(r, &special), clen;

	if (!special) {
		rdb_skip(r, n);
		return;
	}
	switch (n) {
	case 0: rdb_skip(r, 1); return;		/* 8, 16 and 32 bit integers */
	case 1: rdb_skip(r, 2); return;
	case 2: rdb_skip(r, 4); return;
	case 3:					/* LZF: compressed and plain lengths */
		clen = rdb_len(r, &special);
		rdb_len(r, &special);
		rdb_skip(r, clen);
		return;
	}
	errno = 0;
	die("unknown RDB string encoding");
}

/*
 * "RECORDS-SUM-XOR" of the key-value records (string values only: what DEBUG POPULATE
 * makes); the header's auxiliary fields, database sizes and the trailing CRC are left
 * out. 0 when the file cannot be read.
 */
static int rdb_sum(const char *path, char *out, size_t size)
{
	struct rdb r = { .f = fopen(path, "rb") };
	uint64_t sum = 0, xor = 0, n = 0;
	char magic[9];
	int special, op;

	if (!r.f || fread(magic, 1, 9, r.f) != 9 || memcmp(magic, "REDIS", 5)) {
		snprintf(out, size, "unreadable");
		if (r.f)
			fclose(r.f);
		return 0;
	}
	for (;;) {
		r.h = 0xcbf29ce484222325ULL;
		op = rdb_byte(&r);
		if (op == 0xff)				/* EOF; a CRC follows */
			break;
		switch (op) {
		case 0xfa:				/* AUX field: name, value */
			rdb_string(&r);
			rdb_string(&r);
			continue;
		case 0xfe:				/* SELECTDB */
			rdb_len(&r, &special);
			continue;
		case 0xfb:				/* RESIZEDB */
			rdb_len(&r, &special);
			rdb_len(&r, &special);
			continue;
		case 0xfc:				/* expiry in ms, then the record */
			rdb_skip(&r, 8);
			op = rdb_byte(&r);
			break;
		case 0xfd:
			rdb_skip(&r, 4);
			op = rdb_byte(&r);
			break;
		}
		if (op != 0) {				/* only RDB_TYPE_STRING */
			errno = 0;
			fprintf(stderr, "redis_save: RDB record type %d: only strings are read\n",
				op);
			fclose(r.f);
			snprintf(out, size, "unsupported");
			return 0;
		}
		rdb_string(&r);
		rdb_string(&r);
		sum += r.h;
		xor ^= r.h;
		n++;
	}
	fclose(r.f);
	snprintf(out, size, "%lu-%016lx-%016lx", (unsigned long)n, (unsigned long)sum,
		 (unsigned long)xor);
	return 1;
}

/* ---- memory ---- */

/* A "Field:   N kB" line of /proc/PID/status, in kB; -1 when absent. */
static long status_kb(int pid, const char *field)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	return bench_proc_kb(path, field);
}

/* MemTotal - MemFree - Buffers - Cached - SReclaimable, in kB. */
static long used_kb(void)
{
	long total = 0, other = 0, v;
	char line[256], name[64];
	FILE *f = fopen("/proc/meminfo", "r");

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%63[^:]: %ld", name, &v) != 2)
			continue;
		if (!strcmp(name, "MemTotal"))
			total = v;
		else if (!strcmp(name, "MemFree") || !strcmp(name, "Buffers") ||
			 !strcmp(name, "Cached") || !strcmp(name, "SReclaimable"))
			other += v;
	}
	if (f)
		fclose(f);
	return total - other;
}

/* The first child of pid (the saving child), or 0. */
static int child_of(int pid)
{
	char path[300], line[512];
	struct dirent *d;
	DIR *dir = opendir("/proc");
	int found = 0;

	while (dir && !found && (d = readdir(dir))) {
		FILE *f;
		char *p;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", d->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		/* pid (comm) state ppid: comm may hold spaces, so read after the last ')'. */
		if (fgets(line, sizeof(line), f) && (p = strrchr(line, ')')) &&
		    atoi(p + 4) == pid)
			found = atoi(d->d_name);
		fclose(f);
	}
	if (dir)
		closedir(dir);
	return found;
}

/* ---- the writing client ---- */

#define MAX_OPS (4 << 20)

struct load {
	const char *path;
	atomic_int stop;
	float *t, *lat;		/* start (s after t0) and latency (us) of each write */
	long n;
	double t0;
};

static void value_of(long key, char *val)
{
	/* DEBUG POPULATE's value: "value:N", then zeros up to the size. */
	char head[32];
	int n = snprintf(head, sizeof(head), "value:%ld", key);

	memset(val, 0, vsize);
	memcpy(val, head, n < vsize ? n : vsize);
}

static void *load_run(void *arg)
{
	struct load *l = arg;
	char *val = malloc(vsize + 32), key[32], reply[64];
	const char *argv[3] = { "SET", key, val };
	size_t lens[3] = { 3, 0, vsize };
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	struct conn c;

	if (!val)
		die("out of memory");
	conn_open(&c, l->path);
	while (!atomic_load(&l->stop)) {
		double s, e;
		long k;

		/* The same key sequence in every round (xorshift64). */
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		k = x % nkeys;
		lens[1] = snprintf(key, sizeof(key), "key:%ld", k);
		value_of(k, val);
		s = bench_ns();
		conn_send(&c, 3, argv, lens);
		conn_reply(&c, reply, sizeof(reply));
		e = bench_ns();
		if (l->n < MAX_OPS) {
			l->t[l->n] = (s - l->t0) / 1e9;
			l->lat[l->n] = (e - s) / 1e3;
			l->n++;
		}
	}
	close(c.fd);
	free(val);
	return NULL;
}

/* ---- one round ---- */

struct round {
	double fork_us, save_s, bgsave_rtt_us, cow_mb;
	double p50, p99, p999, worst, base_p99;	/* write latency, us */
	long writes;
	long rss_peak, child_rss_peak, rss_sum_peak, child_pte, child_pte_first;
	long used_peak, used_before;
	long rss_after, used_after;
	char sum[64];
	int ok;
};

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;

	return x < y ? -1 : x > y;
}

static double pct(float *v, long n, double p)
{
	long i = (long)(p * (n - 1) + 0.5);

	return n ? v[i < n ? i : n - 1] : 0;
}

static int server_pid(int b)
{
	struct conn c;
	char info[8192];

	conn_open(&c, sock_path[b]);
	conn_cmd(&c, info, sizeof(info), "INFO server");
	close(c.fd);
	return (int)info_num(info, "process_id");
}

/* The second line of a "name\nvalue\n" reply (CONFIG GET). */
static const char *second(char *reply)
{
	char *v = strchr(reply, '\n');

	v = v ? v + 1 : reply;
	v[strcspn(v, "\n")] = '\0';
	return v;
}

static void rdb_path(int b, char *out, size_t size)
{
	struct conn c;
	char dir[512], file[512];

	conn_open(&c, sock_path[b]);
	conn_cmd(&c, dir, sizeof(dir), "CONFIG GET dir");
	conn_cmd(&c, file, sizeof(file), "CONFIG GET dbfilename");
	close(c.fd);
	snprintf(out, size, "%s/%s", second(dir), second(file));
}

static void run_round(int b, struct load *l, struct round *r)
{
	char info[16384], path[1100];
	long base_n = 0, m;
	struct conn c;
	pthread_t th;
	int pid = server_pid(b), child = 0;
	double t_save, t_done;
	float *v;

	memset(r, 0, sizeof(*r));
	conn_open(&c, sock_path[b]);
	l->path = sock_path[b];
	l->n = 0;
	atomic_store(&l->stop, 0);
	r->used_before = used_kb();
	l->t0 = bench_ns();
	if (pthread_create(&th, NULL, load_run, l))
		die("pthread_create");
	/* Half a second of writes before the save: the latency without it. */
	usleep(500000);
	t_save = (bench_ns() - l->t0) / 1e9;
	conn_cmd(&c, info, sizeof(info), "BGSAVE");
	r->bgsave_rtt_us = (bench_ns() - l->t0) / 1e3 - t_save * 1e6;
	for (;;) {
		long rss = status_kb(pid, "VmRSS"), crss = -1, used = used_kb();

		if (!child)
			child = child_of(pid);
		if (child) {
			long pte = status_kb(child, "VmPTE");

			crss = status_kb(child, "VmRSS");
			if (!r->child_pte_first && pte > 0)
				r->child_pte_first = pte;
			if (pte > r->child_pte)
				r->child_pte = pte;
		}
		if (rss > r->rss_peak)
			r->rss_peak = rss;
		if (crss > r->child_rss_peak)
			r->child_rss_peak = crss;
		if (rss + (crss > 0 ? crss : 0) > r->rss_sum_peak)
			r->rss_sum_peak = rss + (crss > 0 ? crss : 0);
		if (used > r->used_peak)
			r->used_peak = used;
		conn_cmd(&c, info, sizeof(info), "INFO persistence");
		if (info_num(info, "rdb_bgsave_in_progress") == 0)
			break;
		usleep(20000);
	}
	t_done = (bench_ns() - l->t0) / 1e9;
	atomic_store(&l->stop, 1);
	pthread_join(th, NULL);
	info_str(info, "rdb_last_bgsave_status", path, sizeof(path));
	r->ok = !strcmp(path, "ok");
	r->cow_mb = info_num(info, "rdb_last_cow_size") / (1 << 20);
	r->save_s = t_done - t_save;
	conn_cmd(&c, info, sizeof(info), "INFO stats");
	r->fork_us = info_num(info, "latest_fork_usec");
	sleep(1);
	r->rss_after = status_kb(pid, "VmRSS");
	r->used_after = used_kb();
	close(c.fd);

	/* Writes that started in the save's window; those before it are the baseline. */
	v = malloc(sizeof(*v) * (l->n + 1));
	if (!v)
		die("out of memory");
	for (long i = 0; i < l->n; i++)
		if (l->t[i] < t_save)
			v[base_n++] = l->lat[i];
	qsort(v, base_n, sizeof(*v), cmp_float);
	r->base_p99 = pct(v, base_n, 0.99);
	m = 0;
	for (long i = 0; i < l->n; i++)
		if (l->t[i] >= t_save && l->t[i] <= t_done)
			v[m++] = l->lat[i];
	qsort(v, m, sizeof(*v), cmp_float);
	r->writes = m;
	r->p50 = pct(v, m, 0.5);
	r->p99 = pct(v, m, 0.99);
	r->p999 = pct(v, m, 0.999);
	r->worst = m ? v[m - 1] : 0;
	free(v);
	rdb_path(b, path, sizeof(path));
	if (!rdb_sum(path, r->sum, sizeof(r->sum)))
		r->ok = 0;
	printf("redis_save: %-7s fork %8.0f us, save %6.1f s, %ld writes: p50 %.0f p99 %.0f "
	       "p99.9 %.0f worst %.0f us (before the save: p99 %.0f); RSS peak %ld + child %ld "
	       "kB, child VmPTE %ld kB first, %ld kB peak; used +%ld kB peak, %+ld kB after; "
	       "COW %.1f MiB; RDB %s%s\n", backend[b], r->fork_us, r->save_s, r->writes, r->p50,
	       r->p99, r->p999, r->worst, r->base_p99, r->rss_peak, r->child_rss_peak,
	       r->child_pte_first, r->child_pte, r->used_peak - r->used_before,
	       r->used_after - r->used_before, r->cow_mb, r->sum, r->ok ? "" : " (SAVE FAILED)");
}
static int parse_opt(int val, const char *arg)
{
	switch (val) {
	case 256: sock_path[0] = arg; return 0;
	case 257: sock_path[1] = arg; return 0;
	case 258: nkeys = atol(arg); return nkeys > 0 ? 0 : -1;
	case 259: vsize = atol(arg); return vsize >= 16 ? 0 : -1;
	}
	return -1;
}

/* Per measure, per backend, the rounds' values. */
enum { M_FORK, M_SAVE, M_P50, M_P99, M_P999, M_WORST, M_RSS, M_RSS_SUM, M_USED, M_USED_AFTER,
       M_RSS_AFTER, M_PTE, M_PTE_FIRST, M_COW, M_RTT, M_N };
static const struct { const char *name, *unit; } measure[M_N] = {
	[M_FORK] = { "fork", "us" }, [M_SAVE] = { "save", "s" },
	[M_P50] = { "lat-p50", "us" }, [M_P99] = { "lat-p99", "us" },
	[M_P999] = { "lat-p999", "us" }, [M_WORST] = { "lat-worst", "us" },
	[M_RSS] = { "rss-peak", "kB" }, [M_RSS_SUM] = { "rss-sum-peak", "kB" },
	[M_USED] = { "used-peak", "kB" }, [M_USED_AFTER] = { "used-after", "kB" },
	[M_RSS_AFTER] = { "rss-after", "kB" }, [M_PTE] = { "child-vmpte", "kB" },
	[M_PTE_FIRST] = { "child-vmpte-first", "kB" },
	[M_COW] = { "cow-size", "MiB" }, [M_RTT] = { "bgsave-rtt", "us" },
};

static double value(const struct round *r, int m)
{
	switch (m) {
	case M_FORK: return r->fork_us;
	case M_SAVE: return r->save_s;
	case M_P50: return r->p50;
	case M_P99: return r->p99;
	case M_P999: return r->p999;
	case M_WORST: return r->worst;
	case M_RSS: return r->rss_peak;
	case M_RSS_SUM: return r->rss_sum_peak;
	case M_USED: return r->used_peak - r->used_before;
	case M_USED_AFTER: return r->used_after - r->used_before;
	case M_RSS_AFTER: return r->rss_after;
	case M_PTE: return r->child_pte;
	case M_PTE_FIRST: return r->child_pte_first;
	case M_COW: return r->cow_mb;
	case M_RTT: return r->bgsave_rtt_us;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "plain", required_argument, NULL, 256 },
		{ "cow", required_argument, NULL, 257 },
		{ "keys", required_argument, NULL, 258 },
		{ "size", required_argument, NULL, 259 },
		{ 0 },
	};
	char cmd[128], reply[256], digest[2][64] = { "", "" }, after[64], sum0[64] = "";
	char dcow[72];
	const char *dsame;
	struct round *rounds[2];
	struct load l = { 0 };
	int runs = 1, n[2] = { 0, 0 }, same = 1, ok = 1, nb;
	char json[1024];

	/* A checksum alone, without the benchmark's header. */
	if (argc == 3 && !strcmp(argv[1], "--rdb-sum")) {
		char s[64];
		int r = rdb_sum(argv[2], s, sizeof(s));

		printf("%s\n", s);
		return !r;
	}
	bench_init_opts(argc, argv, "redis_save", usage, &runs, opts, parse_opt);
	if (!sock_path[0]) {
		fprintf(stderr, "%s", usage);
		return 2;
	}
	nb = sock_path[1] ? 2 : 1;
	l.t = malloc(sizeof(float) * MAX_OPS);
	l.lat = malloc(sizeof(float) * MAX_OPS);
	rounds[0] = calloc(runs * 2, sizeof(struct round));
	rounds[1] = calloc(runs * 2, sizeof(struct round));
	if (!l.t || !l.lat || !rounds[0] || !rounds[1])
		die("out of memory");
	/* Touched now, so the client's own memory does not grow during a round. */
	memset(l.t, 0, sizeof(float) * MAX_OPS);
	memset(l.lat, 0, sizeof(float) * MAX_OPS);

	for (int b = 0; b < nb; b++) {
		struct conn c;
		double t = bench_ns();

		conn_open(&c, sock_path[b]);
		conn_cmd(&c, reply, sizeof(reply), "FLUSHALL");
		snprintf(cmd, sizeof(cmd), "DEBUG POPULATE %ld key %ld", nkeys, vsize);
		conn_cmd(&c, reply, sizeof(reply), cmd);
		conn_cmd(&c, digest[b], sizeof(digest[b]), "DEBUG DIGEST");
		close(c.fd);
		printf("redis_save: %s: %ld keys of %ld bytes in %.1f s, server %d, VmRSS %ld kB, "
		       "digest %s\n", backend[b], nkeys, vsize, (bench_ns() - t) / 1e9,
		       server_pid(b), status_kb(server_pid(b), "VmRSS"), digest[b]);
	}
	/* ABBA: pair i runs plain then COW when i is even, COW then plain when odd. */
	for (int i = 0; i < runs; i++)
		for (int j = 0; j < nb; j++) {
			int b = nb == 2 ? (i % 2) ^ j : 0;
			struct round *r = &rounds[b][n[b]++];

			run_round(b, &l, r);
			ok &= r->ok;
			if (!sum0[0])
				snprintf(sum0, sizeof(sum0), "%s", r->sum);
			same &= !strcmp(sum0, r->sum);
		}

	/* The writes stored what was there: the data must be as populated. */
	for (int b = 0; b < nb; b++) {
		struct conn c;

		conn_open(&c, sock_path[b]);
		conn_cmd(&c, after, sizeof(after), "DEBUG DIGEST");
		close(c.fd);
		if (strcmp(after, digest[b])) {
			printf("redis_save: %s: the dataset changed during the rounds (digest %s)\n",
			       backend[b], after);
			same = 0;
		}
	}
	for (int m = 0; m < M_N; m++)
		for (int b = 0; b < nb; b++) {
			double v[2 * runs];
			struct bench_stats s;

			for (int i = 0; i < n[b]; i++)
				v[i] = value(&rounds[b][i], m);
			s = bench_stats(v, n[b]);
			snprintf(json, sizeof(json), "\"keys\":%ld,\"size\":%ld,\"mb\":%ld", nkeys,
				 vsize, nkeys * vsize >> 20);
			bench_result(measure[m].name, "BGSAVE", backend[b], json, measure[m].unit, &s);
		}
	for (int m = 0; m < M_N && nb == 2; m++) {
		double a[runs], bb[runs];

		for (int i = 0; i < runs; i++) {
			a[i] = value(&rounds[0][i], m);
			bb[i] = value(&rounds[1][i], m);
		}
		snprintf(json, sizeof(json), "\"group\":\"pairs\",\"case\":\"regression\","
			 "\"measure\":\"%s\",\"unit\":\"%s\",\"mb\":%ld", measure[m].name,
			 measure[m].unit, nkeys * vsize >> 20);
		bench_pairs(json, a, bb, runs);
	}
	/* Alone, the plain server has no digest to compare with: null, not a match. */
	dsame = nb == 1 ? "null" : strcmp(digest[0], digest[1]) ? "false" : "true";
	snprintf(dcow, sizeof(dcow), nb == 2 ? "\"%s\"" : "null", digest[1]);
	snprintf(json, sizeof(json), "\"group\":\"rdb\",\"case\":\"checksum\",\"sum\":\"%s\","
		 "\"same\":%s,\"saves_ok\":%s,\"digest_plain\":\"%s\",\"digest_cow\":%s,"
		 "\"digests_same\":%s,\"runs\":%d", sum0, same ? "true" : "false",
		 ok ? "true" : "false", digest[0], dcow, dsame, nb * runs);
	bench_json(json);
	printf("redis_save: RDB record checksum %s in all %d saves: %s; dataset digests %s\n",
	       sum0, nb * runs, same ? "identical" : "DIFFERENT",
	       nb == 1 ? "(one server)" : strcmp(digest[0], digest[1]) ? "DIFFER" : "identical");
	return ok && same ? 0 : 1;
}
