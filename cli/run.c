// SPDX-License-Identifier: GPL-2.0
/*
 * mmext run: set memory-management settings that survive execve(), then execute a
 * command, as env(1) does with the environment.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/*
 * As env(1), nice(1) and timeout(1): the command's own status is passed on, so
 * mmext's failures need statuses a command rarely uses.
 */
#define EXIT_RUN_FAILED		125	/* mmext run itself: bad usage, a refused setting */
#define EXIT_CANNOT_EXEC	126	/* COMMAND was found but could not be executed */
#define EXIT_NOT_FOUND		127	/* COMMAND was not found */

#define ENABLED_SYSFS "/sys/kernel/mm/cow_pte/enabled"

static const char usage_text[] =
	"Usage: mmext run [--cow-pte | --no-cow-pte] [--] COMMAND [ARG]...\n"
	"Execute COMMAND (searched in PATH) with the settings given, which the kernel\n"
	"keeps across fork() and execve(): COMMAND and every process it starts have them.\n"
	"  --cow-pte      COW page tables: forks share page tables until either side\n"
	"                 changes them (a database that snapshots by forking, a fuzzer's\n"
	"                 fork server). Needs the mmext cow_pte kernel patch, and\n"
	"                 " ENABLED_SYSFS " 2, or 1 and CAP_IPC_LOCK.\n"
	"                 A set-user-ID or set-group-ID COMMAND does not keep it.\n"
	"  --no-cow-pte   turn COW page tables off (they are inherited too)\n"
	"  --help         this text\n"
	"Exit status: COMMAND's; 125 if mmext run fails (bad usage, a setting the kernel\n"
	"lacks or refuses), 126 if COMMAND cannot be executed, 127 if it is not found.\n";

/* A usage error: cli_usage()'s message, run's status. */
#define RUN_USAGE(...) (cli_usage("run", __VA_ARGS__), EXIT_RUN_FAILED)

/* Why the kernel refused --cow-pte, from the administrator's switch. */
static const char *cow_pte_eperm_reason(void)
{
	char buf[16] = "";
	FILE *f = fopen(ENABLED_SYSFS, "r");

	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = 0;
		fclose(f);
	}
	switch (buf[0]) {
	case '0':
		return "COW page tables are turned off for everyone (" ENABLED_SYSFS " is 0)";
	case '1':
		return "only processes with CAP_IPC_LOCK may turn them on (" ENABLED_SYSFS " is 1)";
	default:
		return "the kernel does not let this process turn them on (see " ENABLED_SYSFS ")";
	}
}

static int set_cow_pte(int on)
{
	struct mmext_feature_status st;
	int ret = mmext_cow_pte_set(on);

	if (!ret)
		return 0;
	if (ret == -EOPNOTSUPP) {
		/* Off is what a kernel without the feature always does. */
		if (!on)
			return 0;
		if (!mmext_probe(MMEXT_FEAT_COW_PTE, &st) && !st.available)
			return cli_fail("run", 0, "--cow-pte: %s", st.detail), EXIT_RUN_FAILED;
	}
	if (ret == -EPERM)
		return cli_fail("run", 0, "--cow-pte: %s", cow_pte_eperm_reason()), EXIT_RUN_FAILED;
	return cli_fail("run", ret, "%s", on ? "--cow-pte" : "--no-cow-pte"), EXIT_RUN_FAILED;
}

int cmd_run(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "cow-pte", no_argument, NULL, 'c' },
		{ "no-cow-pte", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int cow = -1, c, ret;

	opterr = 0;
	/* "+": options end at COMMAND, whose own options are its business. */
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'c':
		case 'n':
			if (cow >= 0 && cow != (c == 'c'))
				return RUN_USAGE("--cow-pte and --no-cow-pte exclude each other");
			cow = c == 'c';
			break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_opt("run", c, argv), EXIT_RUN_FAILED;
		}
	}
	if (optind >= argc)
		return RUN_USAGE("no COMMAND given");
	if (cow >= 0) {
		ret = set_cow_pte(cow);
		if (ret)
			return ret;
	}
	/* Whatever stdio holds must not be lost, nor written twice. */
	fflush(stdout);
	/* An ignored signal stays ignored across execve(): COMMAND gets what mmext got. */
	signal(SIGPIPE, cli_sigpipe);
	execvp(argv[optind], argv + optind);
	ret = errno;
	signal(SIGPIPE, SIG_IGN);
	cli_fail("run", ret, "%s", cli_arg(argv[optind]));
	return ret == ENOENT ? EXIT_NOT_FOUND : EXIT_CANNOT_EXEC;
}
