// SPDX-License-Identifier: GPL-2.0
/* mmext: command-line front end of libmmext. Dispatches to one file per subcommand. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_cmd cmds[] = {
	{ "probe", cmd_probe, "which mmext features this kernel has, and why not" },
	{ "maps", cmd_maps, "list the VMAs of a process (pmap/showmap-like)" },
	{ "query", cmd_query, "show the VMA at each address of a process" },
	{ "watch", cmd_watch, "show write watch tracking a writer thread's pages" },
	{ "run", cmd_run, "execute a command with COW page tables, which it passes on" },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: mmext [-h | --help | -V | --version] COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-6s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "  %-6s %s\n", "help", "this text, or with COMMAND that command's");
	fprintf(f, "\n'mmext help COMMAND' describes a command. Exit status: 0 success,\n"
		   "1 runtime error (no such process, permission denied, ...), 2 usage error;\n"
		   "run exits with its command's status, or 125, 126, 127 as env(1) does.\n");
}

/* What went to stdout must have arrived: a full disk or a closed pipe is a failure. */
static int close_stdout(int rc)
{
	int err = fflush(stdout) ? errno : ferror(stdout) ? EIO : 0;

	if (!err && fclose(stdout))
		err = errno;
	if (!err || rc != EXIT_OK)
		return rc;
	fprintf(stderr, "mmext: writing output: %s\n", strerror(err));
	return EXIT_RUNTIME;
}

static const struct cli_cmd *find_cmd(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

/* mmext help [COMMAND]: the command's --help. */
static int help(int argc, char **argv)
{
	char opt[] = "--help", *args[] = { argv[1], opt, NULL };
	const struct cli_cmd *c;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout), EXIT_OK;
	if (argc > 2)
		return cli_usage("help", "unexpected argument %s", cli_arg(argv[2]));
	c = find_cmd(argv[1]);
	if (!c)
		return cli_usage("help", "unknown command %s", cli_arg(argv[1]));
	return c->run(2, args);
}

static int run(int argc, char **argv)
{
	const struct cli_cmd *c;

	if (argc < 2)
		return usage(stderr), EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout), EXIT_OK;
	if (!strcmp(argv[1], "help"))
		return help(argc - 1, argv + 1);
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("mmext %d.%d (libmmext %s)\n", MMEXT_VERSION_MAJOR, MMEXT_VERSION_MINOR,
		       mmext_version());
		return EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (c)
		return c->run(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cli_usage(NULL, "unknown option %s", cli_arg(argv[1]));
	return cli_usage(NULL, "unknown command %s", cli_arg(argv[1]));
}

void (*cli_sigpipe)(int) = SIG_DFL;

int main(int argc, char **argv)
{
	/* EPIPE, then exit 1 like any other write error, rather than death by signal. */
	cli_sigpipe = signal(SIGPIPE, SIG_IGN);
	if (cli_sigpipe == SIG_ERR)
		cli_sigpipe = SIG_DFL;
	return close_stdout(run(argc, argv));
}
