/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the mmext subcommands: exit codes, argument parsing, output helpers. */
#ifndef MMEXT_CLI_H
#define MMEXT_CLI_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include <mmext.h>

#define EXIT_OK		0
#define EXIT_RUNTIME	1	/* the request was valid but failed: no such pid, permission */
#define EXIT_USAGE	2

struct cli_cmd {
	const char *name;
	int (*run)(int argc, char **argv);	/* argv[0] is the subcommand name */
	const char *summary;
};

int cmd_probe(int argc, char **argv);
int cmd_maps(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_watch(int argc, char **argv);
int cmd_run(int argc, char **argv);

/*
 * SIGPIPE's disposition when mmext started (SIG_DFL or SIG_IGN): mmext ignores it for
 * its own writes, and run gives COMMAND this one back.
 */
extern void (*cli_sigpipe)(int);

/*
 * Print "mmext CMD: MESSAGE" and the usage hint on stderr; returns EXIT_USAGE so
 * callers can write `return cli_usage(...)`.
 */
int cli_usage(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Usage error for getopt_long's return c ('?' or ':', optstring starting "+:"). */
int cli_bad_opt(const char *cmd, int c, char **argv);
/* "mmext CMD: MESSAGE: strerror(err)" on stderr; returns EXIT_RUNTIME. */
int cli_fail(const char *cmd, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * The failure of a library call on pid's maps (0: self), worded for users:
 * "mmext CMD: PID: MESSAGE" on stderr; returns EXIT_RUNTIME.
 */
int cli_pid_fail(const char *cmd, pid_t pid, int err);
/* The MESSAGE of cli_pid_fail(), for a JSON error object. */
const char *cli_pid_why(pid_t pid, int err);
/*
 * The /proc directory of pid (0: self), O_PATH: a descriptor, or -ESRCH when there is
 * no such process. Files opened relative to it belong to that process, or fail once
 * it has been reaped, even when its pid has been given to another.
 */
int cli_proc_open(pid_t pid);
/* cli_pid_why() for the process of dir (< 0: none could be opened). */
const char *cli_proc_why(int dir, int err);
/* cli_pid_fail() with its MESSAGE given. */
int cli_pid_fail_why(const char *cmd, pid_t pid, const char *why);

/* Longest part of an argument echoed in a message; longer ones end in "...". */
#define CLI_ARG_MAX	64
/*
 * s quoted for a message: control bytes, non-ASCII bytes and backslashes as \ooo,
 * cut after CLI_ARG_MAX bytes. Points to one of two static buffers.
 */
const char *cli_arg(const char *s);

/*
 * A JSON document reaches stdout only whole: cli_doc_open() gives the stream to
 * build it in (NULL when out of memory), cli_doc_close() writes it when ok and
 * frees it; EXIT_OK, or EXIT_RUNTIME when !ok or the document could not be built.
 */
FILE *cli_doc_open(void);
int cli_doc_close(FILE *doc, int ok);

/* Decimal pid > 0, or "self" (0: the library's calling process). 0 or -EINVAL. */
int cli_parse_pid(const char *s, pid_t *pid);
/* Hexadecimal address, with or without 0x. 0 or -EINVAL. */
int cli_parse_addr(const char *s, uint64_t *addr);
/* Decimal number in [min, max]. 0 or -EINVAL. */
int cli_parse_num(const char *s, unsigned long min, unsigned long max, unsigned long *v);
/* "auto", "text" or "ioctl" into enum mmext_maps_backend. 0 or -EINVAL. */
int cli_parse_maps_backend(const char *s, uint32_t *backend);

/* "rw-p" style permissions of vma into buf[5]. */
void cli_perms(const struct mmext_vma *vma, char buf[5]);
/* "anon", "file", "anon_named", ... for JSON. */
const char *cli_kind_name(uint32_t kind);
/* Write name with control bytes and backslashes as \ooo, so it stays one line. */
void cli_put_name(FILE *f, const char *name, size_t len);
/* Write a VMA's name as /proc/PID/maps (and pmap) do: a newline as \012, nothing else. */
void cli_put_vma_name(FILE *f, const char *name, size_t len);
/* Write a JSON string literal (quotes included); bytes that are not UTF-8 as U+FFFD. */
void cli_put_json_str(FILE *f, const char *s, size_t len);
/* "key":"s", and when s is not UTF-8 also "key_hex":"its bytes in hex". */
void cli_put_json_name(FILE *f, const char *key, const char *s, size_t len);
/* The common JSON members of one VMA, without braces: "start":..,"end":..,... */
void cli_put_json_vma(FILE *f, const struct mmext_vma *vma);
/* The text columns "START-END" as /proc/PID/maps prints them, padded to width. */
void cli_put_range(FILE *f, const struct mmext_vma *vma, int width);

#endif /* MMEXT_CLI_H */
