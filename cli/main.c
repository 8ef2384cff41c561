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
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "Usage: mmext [--help | --version] COMMAND [ARGS]\n\nCommands:\n");
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-6s %s\n", cmds[i].name, cmds[i].summary);
	fprintf(f, "\n'mmext COMMAND --help' describes a command. Exit status: 0 success,\n"
		   "1 runtime error (no such process, permission denied, ...), 2 usage error.\n");
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

static int run(int argc, char **argv)
{
	size_t i;

	if (argc < 2)
		return usage(stderr), EXIT_USAGE;
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return usage(stdout), EXIT_OK;
	if (!strcmp(argv[1], "--version")) {
		printf("mmext %d.%d (libmmext %s)\n", MMEXT_VERSION_MAJOR, MMEXT_VERSION_MINOR,
		       mmext_version());
		return EXIT_OK;
	}
	for (i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].run(argc - 1, argv + 1);
	if (argv[1][0] == '-')
		return cli_usage(NULL, "unknown option %s", cli_arg(argv[1]));
	return cli_usage(NULL, "unknown command %s", cli_arg(argv[1]));
}

int main(int argc, char **argv)
{
	/* EPIPE, then exit 1 like any other write error, rather than death by signal. */
	signal(SIGPIPE, SIG_IGN);
	return close_stdout(run(argc, argv));
}
