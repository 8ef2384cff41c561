// SPDX-License-Identifier: GPL-2.0
/*
 * pattern_shim.so (tools/pattern_shim.c), the allocator the reference pages benchmark
 * preloads into pdftoppm, must not change what a program sees beyond the pattern: this
 * program re-runs itself under the shim with each method and checks malloc/calloc/
 * realloc/reallocarray/free/malloc_usable_size semantics, the pattern (none for anon,
 * zero for calloc), and many large blocks freed in random order. The refpage method needs
 * reference pages; the rest run anywhere. SKIPs without the shim beside this program,
 * and under ASan (whose allocator must come first).
 */
#include <errno.h>
#include <limits.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "markers.h"

#define FILL	0xa5
#define MIN	65536UL

static int fail(const char *what)
{
	fprintf(stderr, "alloc_shim: %s: %s\n", getenv("MMEXT_SHIM"), what);
	return 1;
}

static int child(void)
{
	unsigned char want = strcmp(getenv("MMEXT_SHIM"), "anon") ? FILL : 0;
	static unsigned char *blk[300];
	static size_t len[300];
	unsigned char *p, *q, *s;
	size_t i, j, n = 200000;
	volatile size_t half = SIZE_MAX / 2;	/* overflows on purpose, unseen by gcc */

	/* A large block: the pattern (or zero), its size known. */
	p = malloc(n);
	if (!p || p[0] != want || p[n / 2] != want || p[n - 1] != want)
		return fail("malloc: not the method's fill");
	if (malloc_usable_size(p) < n)
		return fail("malloc_usable_size");
	memset(p, 'x', n);
	/* Grown: contents kept, the new part filled. */
	q = realloc(p, 2 * n);
	if (!q || q[0] != 'x' || q[n - 1] != 'x' || q[n] != want || q[2 * n - 1] != want)
		return fail("realloc grow");
	/* Shrunk to a small block, which glibc serves. */
	q = realloc(q, 100);
	if (!q || q[0] != 'x' || q[99] != 'x')
		return fail("realloc shrink");
	free(q);
	/* calloc() is zero whatever the method. */
	p = calloc(1000, 300);
	for (i = 0; p && i < 300000; i++)
		if (p[i])
			break;
	if (!p || i != 300000)
		return fail("calloc not zero");
	free(p);
	/* A small glibc block grown into a large one. */
	s = malloc(100);
	memset(s, 's', 100);
	s = realloc(s, 3 * MIN);
	if (!s || s[0] != 's' || s[99] != 's' || s[3 * MIN - 1] != want)
		return fail("realloc small to large");
	free(s);
	errno = 0;
	if (reallocarray(NULL, half, 4) || errno != ENOMEM)
		return fail("reallocarray overflow");
	errno = 0;
	if (calloc(half, 4) || errno != ENOMEM)
		return fail("calloc overflow");
	free(NULL);
	/* Many blocks, large and small, freed in a scrambled order. */
	for (i = 0; i < 300; i++) {
		len[i] = i % 3 ? MIN + (i * 7919) % (2 * MIN) : 16 + i;
		blk[i] = malloc(len[i]);
		if (!blk[i])
			return fail("malloc in the loop");
		blk[i][0] = blk[i][len[i] - 1] = (unsigned char)i;
	}
	for (j = 0; j < 300; j++) {
		i = (j * 127) % 300;
		if (blk[i][0] != (unsigned char)i || blk[i][len[i] - 1] != (unsigned char)i)
			return fail("a block changed");
		free(blk[i]);
	}
	return 0;
}

/* Under the shim (the parent sets ALLOC_SHIM_CHILD): the checks, not the harness. */
__attribute__((constructor)) static void maybe_child(void)
{
	if (getenv("ALLOC_SHIM_CHILD"))
		_exit(child());
}

static int run(const char *shim, const char *method)
{
	int status;
	pid_t pid = fork();

	if (!pid) {
		struct rlimit no_core = { 0, 0 };

		setrlimit(RLIMIT_CORE, &no_core);	/* "bogus" aborts */
		setenv("LD_PRELOAD", shim, 1);
		setenv("MMEXT_SHIM", method, 1);
		setenv("MMEXT_SHIM_MIN", "65536", 1);
		setenv("ALLOC_SHIM_CHILD", "1", 1);
		execl("/proc/self/exe", "alloc_shim", NULL);
		_exit(126);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	return status;
}

FIXTURE(shim)
{
	int unused;
};

FIXTURE_SETUP(shim)
{
}

FIXTURE_TEARDOWN(shim)
{
}

/* Four programs under TCG, the emulation filling a memfd per block: not 30 s. */
TEST_F_TIMEOUT(shim, methods, 300)
{
	static const char *const methods[] = { "anon", "memset", "emulated", "refpage" };
	char shim[PATH_MAX];
	ssize_t n;
	int i, st;

#if defined(__SANITIZE_ADDRESS__)
	SKIP(return, "built with ASan, whose allocator cannot sit under a preloaded one");
#endif
	n = readlink("/proc/self/exe", shim, sizeof(shim) - 32);
	ASSERT_GT(n, 0);
	shim[n] = 0;
	strcpy(strrchr(shim, '/') + 1, "pattern_shim.so");
	if (access(shim, R_OK))
		SKIP(return, "no pattern_shim.so beside this program");
	for (i = 0; i < 4; i++) {
		if (!strcmp(methods[i], "refpage") && t_refpage_nr() < 0) {
			TH_LOG("refpage: no reference pages on this kernel, not run");
			continue;
		}
		st = run(shim, methods[i]);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
			TH_LOG("%s: status %#x", methods[i], st);
	}
	/* A method that does not exist stops the program rather than measure another. */
	st = run(shim, "bogus");
	EXPECT_TRUE(WIFSIGNALED(st) && WTERMSIG(st) == SIGABRT) TH_LOG("status %#x", st);
}

TEST_HARNESS_MAIN
