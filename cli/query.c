// SPDX-License-Identifier: GPL-2.0
/* mmext query: the VMA at (or, with --next, after) each address of a process. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const char usage_text[] =
	"Usage: mmext query [OPTIONS] PID ADDR...\n"
	"For each hexadecimal ADDR (0x optional) show the VMA of process PID (a number, or\n"
	"'self') that contains it, one line per address: the address, 'in', 'next' or\n"
	"'none', then the VMA as /proc/PID/maps shows it. An address in no VMA is a\n"
	"result ('none'), not an error. Options may come before or after PID and ADDR;\n"
	"after '--' everything is PID and ADDR.\n"
	"  -n, --next       if no VMA contains ADDR, show the first one above it\n"
	"  -f, --file       consider file-backed VMAs only\n"
	"  -B, --build-id   add the GNU build ID of file-backed ELF VMAs (PROCMAP_QUERY)\n"
	"  -j, --json       one JSON object; addresses and sizes are numbers\n"
	"  -b, --backend B  auto (default: PROCMAP_QUERY when the kernel has it), text, ioctl\n"
	"  -h, --help       this text\n"
	"Exit status: 0 ok, 1 no such process / permission denied, 2 usage (bad address).\n";

static void put_vma_text(const struct mmext_vma *v)
{
	char perms[5];
	unsigned i;

	cli_put_range(stdout, v, 0);
	cli_perms(v, perms);
	printf(" %s %08" PRIx64 " %02x:%02x %" PRIu64 " ", perms, v->offset, v->dev_major,
	       v->dev_minor, v->inode);
	cli_put_vma_name(stdout, v->name, v->name_len);
	if (v->flags & MMEXT_VMA_DELETED)
		fputs(" (deleted)", stdout);
	if (v->build_id_len) {
		fputs(" build_id=", stdout);
		for (i = 0; i < v->build_id_len; i++)
			printf("%02x", v->build_id[i]);
	}
}

int cmd_query(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "next", no_argument, NULL, 'n' },
		{ "file", no_argument, NULL, 'f' },
		{ "build-id", no_argument, NULL, 'B' },
		{ "json", no_argument, NULL, 'j' },
		{ "backend", required_argument, NULL, 'b' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	MMEXT_OPTS(mmext_maps_opts, mo);
	unsigned int flags = 0;
	struct mmext_maps *m;
	uint64_t *addrs;
	int json = 0, c, i, n, ret = 0;
	FILE *f;
	pid_t pid;

	opterr = 0;
	while ((c = getopt_long(argc, argv, ":nfBjb:h", opts, NULL)) != -1) {
		switch (c) {
		case 'n': flags |= MMEXT_FIND_NEXT; break;
		case 'f': flags |= MMEXT_FIND_FILE; break;
		case 'B': mo.flags |= MMEXT_MAPS_BUILD_ID; break;
		case 'j': json = 1; break;
		case 'b':
			if (cli_parse_maps_backend(optarg, &mo.backend))
				return cli_usage("query", "bad backend %s (auto, text, ioctl)",
						 cli_arg(optarg));
			break;
		case 'h': fputs(usage_text, stdout); return EXIT_OK;
		default: return cli_bad_opt("query", c, argv);
		}
	}
	if (optind == argc)
		return cli_usage("query", "missing PID");
	if (cli_parse_pid(argv[optind], &pid))
		return cli_usage("query", "bad PID %s", cli_arg(argv[optind]));
	n = argc - optind - 1;
	if (n == 0)
		return cli_usage("query", "missing ADDR");
	addrs = calloc(n, sizeof(*addrs));
	if (!addrs)
		return cli_fail("query", -ENOMEM, "allocating");
	/* Every address is checked before any output, so a typo prints nothing. */
	for (i = 0; i < n; i++) {
		if (cli_parse_addr(argv[optind + 1 + i], &addrs[i])) {
			free(addrs);
			return cli_usage("query", "bad address %s (hexadecimal expected)",
					 cli_arg(argv[optind + 1 + i]));
		}
	}
	ret = mmext_maps_open(pid, &mo, &m);
	if (ret) {
		free(addrs);
		return cli_pid_fail("query", pid, ret);
	}
	f = json ? cli_doc_open() : stdout;
	if (!f) {
		mmext_maps_close(m);
		free(addrs);
		return cli_fail("query", -ENOMEM, "allocating");
	}
	if (json)
		fprintf(f, "{\"pid\":%d,\"results\":[", pid ? (int)pid : (int)getpid());
	for (i = 0; i < n; i++) {
		struct mmext_vma v;
		const char *match;

		ret = mmext_maps_find(m, addrs[i], flags, &v);
		if (ret && ret != -ENOENT)
			break;
		match = ret ? "none" : v.start <= addrs[i] && addrs[i] < v.end ? "in" : "next";
		if (json) {
			fprintf(f, "%s{\"addr\":%" PRIu64 ",\"addr_hex\":\"0x%" PRIx64 "\""
				",\"match\":\"%s\",\"vma\":", i ? "," : "", addrs[i], addrs[i],
				match);
			if (ret) {
				fputs("null", f);
			} else {
				fputc('{', f);
				cli_put_json_vma(f, &v);
				fputc('}', f);
			}
			fputc('}', f);
		} else {
			printf("0x%" PRIx64 " %s", addrs[i], match);
			if (!ret) {
				putchar(' ');
				put_vma_text(&v);
			}
			putchar('\n');
		}
		ret = 0;
	}
	mmext_maps_close(m);
	free(addrs);
	if (ret) {
		if (json)
			cli_doc_close(f, 0);
		return cli_pid_fail("query", pid, ret);
	}
	if (json) {
		fputs("]}\n", f);
		return cli_doc_close(f, 1);
	}
	return EXIT_OK;
}
