// SPDX-License-Identifier: GPL-2.0
/* mmext probe: one line per feature the library knows, with the reason when absent. */
#include <errno.h>
#include <getopt.h>
#include <string.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: mmext probe [--json]\n"
	"Print one line per feature: its name, present or absent, and why.\n"
	"The first five are the mmext features (anonymous VMA names, reference pages,\n"
	"lockless maps, COW page tables, write tracking); the rest are kernel mechanisms\n"
	"libmmext's backends use.\n"
	"  --json   one JSON object: {\"kernel_features\": [{\"feature\":..., \"available\":\n"
	"           true|false, \"errno\": N, \"detail\": ...}, ...]}\n"
	"  --help   this text\n";

static const char *errno_name(int e)
{
	switch (e) {
	case 0: return "-";
	case ENOENT: return "ENOENT";
	case ENOSYS: return "ENOSYS";
	case ENOTTY: return "ENOTTY";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case EBADF: return "EBADF";
	case ENOMEM: return "ENOMEM";
	default: return "E?";
	}
}

int cmd_probe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	int json = 0, c, i;
	FILE *f;

	opterr = 0;
	while ((c = getopt_long(argc, argv, "+:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j': json = 1; break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_opt("probe", c, argv);
		}
	}
	if (optind < argc)
		return cli_usage("probe", "unexpected argument %s", cli_arg(argv[optind]));

	f = json ? cli_doc_open() : stdout;
	if (!f)
		return cli_fail("probe", -ENOMEM, "allocating");
	if (json)
		fputs("{\"kernel_features\":[", f);
	for (i = 0; i < MMEXT_FEAT__COUNT; i++) {
		struct mmext_feature_status st;
		int ret = mmext_probe(i, &st);

		if (ret) {
			if (json)
				cli_doc_close(f, 0);
			return cli_fail("probe", ret, "probing %s", mmext_feature_name(i));
		}
		if (json) {
			fprintf(f, "%s{\"feature\":\"%s\",\"id\":%d,\"available\":%s,\"errno\":%d,"
				"\"detail\":", i ? "," : "", mmext_feature_name(i), i,
				st.available ? "true" : "false", st.reason);
			cli_put_json_str(f, st.detail, strlen(st.detail));
			fputc('}', f);
		} else {
			printf("%-16s %-7s %-10s %s\n", mmext_feature_name(i),
			       st.available ? "present" : "absent", errno_name(st.reason),
			       st.detail);
		}
	}
	if (json) {
		fputs("]}\n", f);
		return cli_doc_close(f, 1);
	}
	return EXIT_OK;
}
