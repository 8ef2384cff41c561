// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the subcommands. */
#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int cli_usage(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mmext%s%s: ", cmd ? " " : "", cmd ? cmd : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'mmext %s%s--help'.\n", cmd ? cmd : "", cmd ? " " : "");
	return EXIT_USAGE;
}

int cli_fail(const char *cmd, int err, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "mmext %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
	return EXIT_RUNTIME;
}

int cli_proc_open(pid_t pid)
{
	char path[32];
	int dir;

	if (pid)
		snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self");
	dir = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return dir;
}

/* Whether the process of the directory dir has been reaped. */
static int proc_gone(int dir)
{
	/* Lookups in a reaped process's directory fail, whoever has its pid now. */
	int fd = openat(dir, "stat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return errno == ENOENT || errno == ESRCH;
	close(fd);
	return 0;
}

const char *cli_proc_why(int dir, int err)
{
	switch (err) {
	case -ESRCH:
		/* The library says -ESRCH for both; the directory tells them apart. */
		return dir < 0 || proc_gone(dir) ? "no such process"
			: "no address space (a kernel thread, or a process that has exited)";
	case -EACCES:
	case -EPERM:
		return "permission denied (reading another user's maps needs ptrace access)";
	case -EOPNOTSUPP:
		return "the ioctl backend needs PROCMAP_QUERY (Linux 6.11+)";
	default:
		return strerror(-err);
	}
}

const char *cli_pid_why(pid_t pid, int err)
{
	int dir = err == -ESRCH ? cli_proc_open(pid) : -1;
	const char *why = cli_proc_why(dir, err);

	if (dir >= 0)
		close(dir);
	return why;
}

int cli_pid_fail_why(const char *cmd, pid_t pid, const char *why)
{
	if (pid)
		return cli_fail(cmd, 0, "%d: %s", (int)pid, why);
	return cli_fail(cmd, 0, "self: %s", why);
}

int cli_pid_fail(const char *cmd, pid_t pid, int err)
{
	return cli_pid_fail_why(cmd, pid, cli_pid_why(pid, err));
}

const char *cli_arg(const char *s)
{
	/* Two arguments can appear in one message. */
	static char bufs[2][4 * CLI_ARG_MAX + 8];
	static unsigned int next;
	char *b = bufs[next++ % 2], *p = b;
	size_t i;

	*p++ = '\'';
	for (i = 0; s[i] && i < CLI_ARG_MAX; i++) {
		unsigned char c = s[i];

		/* Terminal controls and bytes that may start one (C1, bad UTF-8) as \ooo. */
		if (c < 0x20 || c >= 0x7f || c == '\\')
			p += sprintf(p, "\\%03o", c);
		else
			*p++ = c;
	}
	*p++ = '\'';
	strcpy(p, s[i] ? "..." : "");
	return b;
}

int cli_parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *v)
{
	char *end;
	unsigned long n;

	/* strtoul accepts "-1" and leading blanks; a count never should. */
	if (!s || !isdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &end, 10);
	if (errno || *end || n < min || n > max)
		return -EINVAL;
	*v = n;
	return 0;
}

int cli_parse_pid(const char *s, pid_t *pid)
{
	unsigned long n;

	if (s && !strcmp(s, "self")) {
		*pid = 0;
		return 0;
	}
	if (cli_parse_num(s, 1, INT_MAX, &n))
		return -EINVAL;
	*pid = (pid_t)n;
	return 0;
}

int cli_parse_addr(const char *s, uint64_t *addr)
{
	unsigned long long a;
	char *end;

	if (!s)
		return -EINVAL;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		s += 2;
	if (!isxdigit((unsigned char)s[0]))
		return -EINVAL;
	errno = 0;
	a = strtoull(s, &end, 16);
	if (errno || *end)
		return -EINVAL;
	*addr = a;
	return 0;
}

int cli_parse_maps_backend(const char *s, uint32_t *backend)
{
	if (!strcmp(s, "auto"))
		*backend = MMEXT_MAPS_AUTO;
	else if (!strcmp(s, "text"))
		*backend = MMEXT_MAPS_TEXT;
	else if (!strcmp(s, "ioctl"))
		*backend = MMEXT_MAPS_IOCTL;
	else
		return -EINVAL;
	return 0;
}

void cli_perms(const struct mmext_vma *vma, char buf[5])
{
	/* Indexed by MMEXT_VMA_READ | WRITE | EXEC | SHARED: one copy per row of a listing. */
	static const char perms[16][5] = {
		"---p", "r--p", "-w-p", "rw-p", "--xp", "r-xp", "-wxp", "rwxp",
		"---s", "r--s", "-w-s", "rw-s", "--xs", "r-xs", "-wxs", "rwxs",
	};

	memcpy(buf, perms[vma->prot & 15], 5);
}

const char *cli_kind_name(uint32_t kind)
{
	static const char *const names[] = {
		[MMEXT_VMA_ANON] = "anon",
		[MMEXT_VMA_FILE] = "file",
		[MMEXT_VMA_ANON_NAMED] = "anon_named",
		[MMEXT_VMA_ANON_SHMEM_NAMED] = "anon_shmem_named",
		[MMEXT_VMA_HEAP] = "heap",
		[MMEXT_VMA_STACK] = "stack",
		[MMEXT_VMA_VDSO] = "vdso",
		[MMEXT_VMA_VVAR] = "vvar",
		[MMEXT_VMA_VSYSCALL] = "vsyscall",
		[MMEXT_VMA_SPECIAL] = "special",
	};

	return kind < sizeof(names) / sizeof(names[0]) && names[kind] ? names[kind] : "unknown";
}

void cli_put_name(FILE *f, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		unsigned char c = name[i];

		if (c < 0x20 || c == 0x7f || c == '\\')
			fprintf(f, "\\%03o", c);
		else
			fputc(c, f);
	}
}

void cli_put_vma_name(FILE *f, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++) {
		if (name[i] == '\n')
			fputs("\\012", f);
		else
			fputc(name[i], f);
	}
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if there is none. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	uint32_t cp;
	size_t len, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8. */
	if ((len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return len;
}

/* Whether s is valid UTF-8 as a whole. */
static int utf8_valid(const char *s, size_t len)
{
	size_t i, n;

	for (i = 0; i < len; i += n)
		if (!(n = utf8_len((const unsigned char *)s + i, len - i)))
			return 0;
	return 1;
}

void cli_put_json_str(FILE *f, const char *s, size_t len)
{
	size_t i, n;

	fputc('"', f);
	for (i = 0; i < len; i += n) {
		unsigned char c = s[i];

		n = utf8_len((const unsigned char *)s + i, len - i);
		if (!n) {
			/* Not UTF-8: U+FFFD here, the bytes in cli_put_json_name()'s _hex. */
			fputs("\\ufffd", f);
			n = 1;
		} else if (c == '"' || c == '\\') {
			fprintf(f, "\\%c", c);
		} else if (c < 0x20 || c == 0x7f) {
			fprintf(f, "\\u%04x", c);
		} else {
			fwrite(s + i, 1, n, f);
		}
	}
	fputc('"', f);
}

void cli_put_json_name(FILE *f, const char *key, const char *s, size_t len)
{
	size_t i;

	fprintf(f, "\"%s\":", key);
	cli_put_json_str(f, s, len);
	if (utf8_valid(s, len))
		return;
	fprintf(f, ",\"%s_hex\":\"", key);
	for (i = 0; i < len; i++)
		fprintf(f, "%02x", (unsigned char)s[i]);
	fputc('"', f);
}

void cli_put_json_vma(FILE *f, const struct mmext_vma *v)
{
	char perms[5];
	unsigned i;

	cli_perms(v, perms);
	/* JSON readers hold numbers as doubles: addresses also as exact hex strings. */
	fprintf(f, "\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"start_hex\":\"0x%" PRIx64
		"\",\"end_hex\":\"0x%" PRIx64 "\",\"size\":%" PRIu64
		",\"perms\":\"%s\",\"offset\":%" PRIu64 ",\"dev_major\":%u,\"dev_minor\":%u"
		",\"inode\":%" PRIu64 ",\"kind\":\"%s\",",
		v->start, v->end, v->start, v->end, v->end - v->start, perms, v->offset,
		v->dev_major, v->dev_minor, v->inode, cli_kind_name(v->kind));
	cli_put_json_name(f, "name", v->name, v->name_len);
	fprintf(f, ",\"deleted\":%s", v->flags & MMEXT_VMA_DELETED ? "true" : "false");
	if (v->anon_name) {
		fputc(',', f);
		cli_put_json_name(f, "anon_name", v->anon_name, v->anon_name_len);
	}
	if (v->build_id_len) {
		fputs(",\"build_id\":\"", f);
		for (i = 0; i < v->build_id_len; i++)
			fprintf(f, "%02x", v->build_id[i]);
		fputc('"', f);
	}
}

/* The document being built: one per run. */
static char *doc_buf;
static size_t doc_len;

FILE *cli_doc_open(void)
{
	return open_memstream(&doc_buf, &doc_len);
}

int cli_doc_close(FILE *doc, int ok)
{
	int err = fclose(doc) ? errno : 0;

	if (ok && !err)
		fwrite(doc_buf, 1, doc_len, stdout);
	free(doc_buf);
	doc_buf = NULL;
	if (ok && err)
		return cli_fail("json", err, "building the document");
	return ok ? EXIT_OK : EXIT_RUNTIME;
}

void cli_put_range(FILE *f, const struct mmext_vma *v, int width)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%08" PRIx64 "-%08" PRIx64, v->start, v->end);
	fprintf(f, "%-*s", width, buf);
}

int cli_bad_opt(const char *cmd, int c, char **argv)
{
	/* A long option is named by argv[optind - 1]; a short one by optopt. */
	const char *arg = argv[optind - 1];
	char shortopt[3] = { '-', (char)optopt, '\0' };
	const char *name = !strncmp(arg, "--", 2) || !optopt ? arg : shortopt;

	if (c == ':')
		return cli_usage(cmd, "option %s needs an argument", cli_arg(name));
	return cli_usage(cmd, "unknown option %s", cli_arg(name));
}
