// SPDX-License-Identifier: GPL-2.0
/*
 * mmext-tour: say which of the five mmext features the running kernel has, and show each
 * one that is there doing its job, through libmmext. Exits 0 unless a present feature
 * misbehaves.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <mmext.h>

static long psz;
static int broken;

/* "present" or "absent (why)"; returns availability. */
static int status(enum mmext_feature f)
{
	struct mmext_feature_status st;

	if (mmext_probe(f, &st)) {
		printf("absent (probe failed)\n");
		return 0;
	}
	if (st.available)
		printf("present\n");
	else
		printf("absent (%s)\n", st.detail);
	return st.available;
}

static void wrong(int present, const char *what)
{
	printf("      WRONG: %s\n", what);
	if (present)
		broken = 1;
}

static void show_vma(const void *addr)
{
	struct mmext_maps *m;
	struct mmext_vma v;

	if (mmext_maps_open(0, NULL, &m))
		return;
	if (!mmext_maps_find(m, (uintptr_t)addr, 0, &v))
		printf("      %llx-%llx %.*s\n", (unsigned long long)v.start,
		       (unsigned long long)v.end, (int)v.name_len, v.name);
	mmext_maps_close(m);
}

static void tour_names(void)
{
	char *p = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char name[MMEXT_NAME_MAX + 1];
	int present;

	printf("anonymous VMA names (PR_SET_VMA_ANON_NAME): ");
	present = status(MMEXT_FEAT_ANON_NAME);
	if (present) {
		if (mmext_name_set(p, 4 * psz, "mmext tour heap") ||
		    mmext_name_get(0, p, name, sizeof(name)) < 0 || strcmp(name, "mmext tour heap"))
			wrong(1, "the name did not stick");
		printf("      named 4 pages \"mmext tour heap\"; the VMA now reads:\n");
		show_vma(p);
	}
	munmap(p, 4 * psz);
}

/* Pattern memory on reference pages when the kernel has them, else emulated. */
static void tour_refpage(void)
{
	MMEXT_OPTS(mmext_pattern_opts, o, .tile_pages = 4);
	struct mmext_pattern *pat;
	const char pattern[8] = "mmext!!";
	int present;
	char *p;

	printf("reference pages (refpage_create): ");
	present = status(MMEXT_FEAT_REFPAGE);
	if (mmext_pattern_map(pattern, sizeof(pattern), 16 * psz, &o, &pat)) {
		wrong(present, "mmext_pattern_map failed");
		return;
	}
	p = mmext_pattern_addr(pat);
	p[psz] = 'X';
	printf("      pattern memory (%s backend): page 0 reads \"%.7s\", written page 1 \"%c%.6s\"\n",
	       mmext_pattern_backend(pat) == MMEXT_PATTERN_KERNEL ? "kernel" : "emulated", p,
	       p[psz], p + psz + 1);
	if (memcmp(p, pattern, 8) || p[psz] != 'X' || memcmp(p + psz + 8, pattern, 8))
		wrong(present, "pattern memory reads wrong");
	mmext_pattern_unmap(pat);
}

static void tour_maps(void)
{
	MMEXT_OPTS(mmext_maps_opts, o, .backend = MMEXT_MAPS_IOCTL);
	struct mmext_maps *m;
	struct mmext_vma v;
	int present, local = 0;

	printf("lockless maps (/proc/pid/maps and PROCMAP_QUERY without mmap_lock): ");
	status(MMEXT_FEAT_MAPS_LOCKLESS);
	printf("      PROCMAP_QUERY itself: ");
	present = status(MMEXT_FEAT_PROCMAP_QUERY);
	if (!present)
		return;
	if (mmext_maps_open(0, &o, &m) || mmext_maps_find(m, (uintptr_t)&local, 0, &v)) {
		wrong(1, "PROCMAP_QUERY found no VMA for a stack variable");
		return;
	}
	printf("      this stack variable lies in %llx-%llx %.*s\n", (unsigned long long)v.start,
	       (unsigned long long)v.end, (int)v.name_len, v.name);
	if (v.kind != MMEXT_VMA_STACK)
		wrong(1, "that VMA is not [stack]");
	mmext_maps_close(m);
}

static void tour_cow_pte(void)
{
	int present, method = 0, st;
	pid_t pid;

	printf("COW page tables (copy-on-write page tables at fork, prctl PR_COW_PTE): ");
	present = status(MMEXT_FEAT_COW_PTE);
	pid = mmext_fork(NULL, &method);
	if (pid == 0)
		_exit(0);
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		wrong(1, "mmext_fork failed");
		return;
	}
	printf("      mmext_fork used %s\n", method == MMEXT_FORK_COW_PTE ? "COW page tables"
									  : "a plain fork");
	if (present && method != MMEXT_FORK_COW_PTE)
		wrong(1, "the kernel has COW page tables but fork did not use them");
}

/* Arm write watch on 16 pages, write three of them, and ask which. */
static void tour_write_watch(void)
{
	MMEXT_OPTS(mmext_ww_opts, o, .backend = MMEXT_WW_PAGEMAP_SCAN);
	char *p = mmap(NULL, 16 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int want[] = { 1, 7, 12 }, i, ok;
	void *pages[16];
	size_t n = 16;
	struct mmext_ww *w;

	printf("write tracking (PAGEMAP_SCAN with userfaultfd WP_ASYNC): ");
	if (!status(MMEXT_FEAT_WRITEWATCH))
		goto out;
	if (mmext_ww_open(p, 16 * psz, &o, &w)) {
		wrong(1, "mmext_ww_open failed");
		goto out;
	}
	for (i = 0; i < 3; i++)
		p[want[i] * psz] = 1;
	ok = !mmext_ww_get(w, p, 16 * psz, MMEXT_WW_RESET, pages, &n) && n == 3;
	printf("      wrote pages 1, 7, 12 of 16; the kernel reports written:");
	for (i = 0; i < (int)n; i++) {
		printf(" %ld", (long)(((char *)pages[i] - p) / psz));
		ok = ok && (char *)pages[i] == p + want[i] * psz;
	}
	printf("\n");
	if (!ok)
		wrong(1, "expected exactly pages 1, 7, 12");
	mmext_ww_close(w);
out:
	munmap(p, 16 * psz);
}

int main(void)
{
	struct utsname u;

	psz = sysconf(_SC_PAGESIZE);
	uname(&u);
	printf("mmext tour on Linux %s (libmmext %s)\n", u.release, mmext_version());
	tour_names();
	tour_refpage();
	tour_maps();
	tour_cow_pte();
	tour_write_watch();
	return broken;
}
