// SPDX-License-Identifier: GPL-2.0
/* Helpers shared by the subcommands. */
#include <ctype.h>
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

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

const char *cli_pid_error(int err)
{
	switch (err) {
	case -ESRCH:
		return "no such process";
	case -EACCES:
	case -EPERM:
		return "permission denied (reading another user's maps needs ptrace access)";
	default:
		return strerror(-err);
	}
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
	buf[0] = vma->prot & MMEXT_VMA_READ ? 'r' : '-';
	buf[1] = vma->prot & MMEXT_VMA_WRITE ? 'w' : '-';
	buf[2] = vma->prot & MMEXT_VMA_EXEC ? 'x' : '-';
	buf[3] = vma->prot & MMEXT_VMA_SHARED ? 's' : 'p';
	buf[4] = '\0';
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

void cli_put_json_str(FILE *f, const char *s, size_t len)
{
	size_t i;

	fputc('"', f);
	for (i = 0; i < len; i++) {
		unsigned char c = s[i];

		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(f, "\\u%04x", c);
		else if (c >= 0x80)
			/* Paths are bytes, not UTF-8: escape so the output stays valid JSON. */
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

void cli_put_json_vma(FILE *f, const struct mmext_vma *v)
{
	char perms[5];
	unsigned i;

	cli_perms(v, perms);
	fprintf(f, "\"start\":%" PRIu64 ",\"end\":%" PRIu64 ",\"size\":%" PRIu64
		",\"perms\":\"%s\",\"offset\":%" PRIu64 ",\"dev_major\":%u,\"dev_minor\":%u"
		",\"inode\":%" PRIu64 ",\"kind\":\"%s\",\"name\":",
		v->start, v->end, v->end - v->start, perms, v->offset, v->dev_major,
		v->dev_minor, v->inode, cli_kind_name(v->kind));
	cli_put_json_str(f, v->name, v->name_len);
	fprintf(f, ",\"deleted\":%s", v->flags & MMEXT_VMA_DELETED ? "true" : "false");
	if (v->anon_name) {
		fputs(",\"anon_name\":", f);
		cli_put_json_str(f, v->anon_name, v->anon_name_len);
	}
	if (v->build_id_len) {
		fputs(",\"build_id\":\"", f);
		for (i = 0; i < v->build_id_len; i++)
			fprintf(f, "%02x", v->build_id[i]);
		fputc('"', f);
	}
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
		return cli_usage(cmd, "option '%s' needs an argument", name);
	return cli_usage(cmd, "unknown option '%s'", name);
}
