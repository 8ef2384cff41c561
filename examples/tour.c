// SPDX-License-Identifier: GPL-2.0
/*
 * mmext-tour: say which of the five mmext features the running kernel has, and show each
 * one that is there doing its job. Exits 0 unless a present feature misbehaves.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/prctl.h>
#include <linux/userfaultfd.h>

static long psz;
static int broken;

static void show_maps_line(const void *addr)
{
	unsigned long a = (unsigned long)addr, s, e;
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &s, &e) == 2 && a >= s && a < e)
			printf("      %s", line);
	if (f)
		fclose(f);
}

static void tour_names(void)
{
	char *p = mmap(NULL, 4 * psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	printf("[000] naming anonymous memory (PR_SET_VMA_ANON_NAME): ");
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, 4 * psz,
		  (unsigned long)"mmext tour heap")) {
		printf("absent (%s%s)\n", strerror(errno),
		       errno == EINVAL ? ": kernel built without CONFIG_ANON_VMA_NAME" : "");
	} else {
		printf("present\n      named 4 pages \"mmext tour heap\"; /proc/self/maps shows:\n");
		show_maps_line(p);
	}
	munmap(p, 4 * psz);
}

static void tour_refpage(void)
{
	printf("[001] reference pages (refpage_create): absent (not in the mmext queue yet)\n");
}

static void tour_maps(void)
{
	struct procmap_query q = { .size = sizeof(q), .query_addr = (unsigned long)&q };
	char name[64] = "";
	int fd = open("/proc/self/maps", O_RDONLY);

	q.vma_name_addr = (unsigned long)name;
	q.vma_name_size = sizeof(name);
	printf("[002] /proc/pid/maps and PROCMAP_QUERY without mmap_lock: absent (not in the mmext queue yet)\n");
	printf("      PROCMAP_QUERY itself: ");
	if (fd < 0 || ioctl(fd, PROCMAP_QUERY, &q)) {
		printf("absent (%s)\n", strerror(errno));
	} else {
		printf("present; this stack variable lies in %llx-%llx %s\n",
		       (unsigned long long)q.vma_start, (unsigned long long)q.vma_end, name);
	}
	if (fd >= 0)
		close(fd);
}

static void tour_cow_pte(void)
{
	printf("[003] copy-on-write page tables at fork (PR_SET_COW_PTE): absent (not in the mmext queue yet)\n");
}

/* Arm write tracking on 16 pages, write three of them, and ask the kernel which. */
static void tour_write_watch(void)
{
	struct uffdio_api api = { .api = UFFD_API,
				  .features = UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED };
	struct page_region regions[16];
	struct pm_scan_arg arg = { .size = sizeof(arg) };
	int uffd, pm, n, i, want[] = { 1, 7, 12 };
	char *p = mmap(NULL, 16 * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	printf("[004] PAGEMAP_SCAN with userfaultfd WP_ASYNC: ");
	uffd = syscall(__NR_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY);
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api)) {
		printf("absent (userfaultfd WP_ASYNC: %s)\n", strerror(errno));
		goto out;
	}
	struct uffdio_register reg = { .range = { (unsigned long)p, 16 * psz },
				       .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .range = reg.range, .mode = UFFDIO_WRITEPROTECT_MODE_WP };

	madvise(p, 16 * psz, MADV_NOHUGEPAGE);
	if (ioctl(uffd, UFFDIO_REGISTER, &reg) || ioctl(uffd, UFFDIO_WRITEPROTECT, &wp)) {
		printf("absent (uffd write-protect: %s)\n", strerror(errno));
		goto out_uffd;
	}
	for (i = 0; i < 3; i++)
		p[want[i] * psz] = 1;
	pm = open("/proc/self/pagemap", O_RDONLY);
	arg.start = (unsigned long)p;
	arg.end = (unsigned long)p + 16 * psz;
	arg.vec = (unsigned long)regions;
	arg.vec_len = 16;
	arg.category_mask = arg.return_mask = PAGE_IS_WRITTEN;
	n = pm < 0 ? -1 : ioctl(pm, PAGEMAP_SCAN, &arg);
	if (n < 0) {
		printf("absent (PAGEMAP_SCAN: %s)\n", strerror(errno));
	} else {
		int seen = 0;

		printf("present\n      wrote pages 1, 7, 12 of 16; the kernel reports written:");
		for (i = 0; i < n; i++) {
			unsigned long a;

			for (a = regions[i].start; a < regions[i].end; a += psz, seen++)
				printf(" %lu", (a - (unsigned long)p) / psz);
		}
		printf("\n");
		if (seen != 3 || n != 3) {
			printf("      WRONG: expected exactly pages 1, 7, 12\n");
			broken = 1;
		}
	}
	if (pm >= 0)
		close(pm);
out_uffd:
	close(uffd);
out:
	munmap(p, 16 * psz);
}

int main(void)
{
	struct utsname u;

	psz = sysconf(_SC_PAGESIZE);
	uname(&u);
	printf("mmext tour on Linux %s\n", u.release);
	tour_names();
	tour_refpage();
	tour_maps();
	tour_cow_pte();
	tour_write_watch();
	return broken;
}
