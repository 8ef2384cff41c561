// SPDX-License-Identifier: GPL-2.0
/*
 * A fuzz target with a large, populated address space, as a real target has after
 * loading its world: it maps and writes AFL_TARGET_MB MiB (default 1024) of private
 * anonymous memory in 4 KiB pages, then starts AFL++'s deferred fork server
 * (__AFL_INIT), so every execution is a fork of that process. Each input is a small
 * command language whose commands read and write pages of the memory; its branches
 * give the fuzzer paths to find. Built with afl-cc (bench/Makefile); without it, it
 * runs one input from stdin.
 *
 * MMEXT_TARGET_STATE=FILE: the fork server writes "cow_pte N" there (N: the process's
 * PR_COW_PTE state, -1 without the feature), so the benchmark can check the opt-in.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#define PAGE 4096UL

static unsigned char *mem;
static unsigned long pages;

static void report_state(void)
{
	const char *path = getenv("MMEXT_TARGET_STATE");
	char buf[32] = "";
	long opt, st = -1;
	FILE *f;
	int fd;

	if (!path)
		return;
	fd = open("/sys/kernel/mm/cow_pte/prctl_option", O_RDONLY);
	if (fd >= 0) {
		if (read(fd, buf, sizeof(buf) - 1) > 0 && (opt = strtol(buf, NULL, 10)) > 0)
			st = prctl(opt, 2, 0, 0, 0);	/* PR_COW_PTE_GET */
		close(fd);
	}
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "cow_pte %ld\n", st);
		fclose(f);
	}
}

static unsigned long page_of(const unsigned char *p)
{
	return ((unsigned long)p[0] << 16 | p[1] << 8 | p[2]) % pages;
}

/*
 * "MMX" then commands: 'w' P writes page P (3 bytes), 'r' P reads it, 's' P N sums N
 * pages from P, 'c' P compares a page with the input; deeper branches need the
 * values read back to match.
 */
static int run(const unsigned char *in, size_t len)
{
	unsigned long sum = 0;
	size_t i;

	if (len < 4 || in[0] != 'M' || in[1] != 'M' || in[2] != 'X')
		return 0;
	for (i = 3; i + 4 <= len; i += 4) {
		const unsigned char *arg = in + i + 1;
		unsigned char *pg = mem + page_of(arg) * PAGE;
		unsigned long n;

		switch (in[i]) {
		case 'w':
			memset(pg, arg[2], 64);
			break;
		case 'r':
			sum += pg[arg[2] % 64];
			if (pg[0] == arg[1])
				sum += 7;
			break;
		case 's':
			for (n = 0; n < (arg[2] & 15); n++)
				sum += mem[((page_of(arg) + n) % pages) * PAGE];
			if (sum == 0x42)
				return 1;
			break;
		case 'c':
			if (pg[0] == 'F' && pg[1] == 'U')
				if (pg[2] == 'Z')
					return 2;
			pg[0] = arg[0];
			break;
		default:
			return 3;
		}
	}
	return sum & 1;
}

int main(void)
{
	unsigned long mb = getenv("AFL_TARGET_MB") ? strtoul(getenv("AFL_TARGET_MB"), NULL, 0)
						     : 1024;
	unsigned char in[4096];
	ssize_t len;
	unsigned long i;

	pages = mb * 256 ? mb * 256 : 1;
	mem = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	if (mem == MAP_FAILED)
		return 99;
	/* 4 KiB pages, so the fork copies (or shares) page tables rather than PMDs. */
	madvise(mem, pages * PAGE, MADV_NOHUGEPAGE);
	for (i = 0; i < pages; i++)
		mem[i * PAGE] = (unsigned char)i;
	report_state();
#ifdef __AFL_HAVE_MANUAL_CONTROL
	__AFL_INIT();
#endif
	len = read(0, in, sizeof(in));
	return run(in, len > 0 ? len : 0);
}
