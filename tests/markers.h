/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The numbers of the features the kernel publishes only through markers, found as
 * libmmext finds them but written out again here, so that the tests check the kernel
 * and not the library's reading of it. refpage_create()'s system call number:
 * - the 6.12 backport publishes its x86-64 number in /sys/kernel/mm/refpage/syscall_nr;
 * - the mainline series publishes none: its number is the system call table's, and
 *   /sys/kernel/mm/refpage/pages (without syscall_nr) says the kernel has it.
 * A number no marker vouches for is never issued: on another kernel it may be another
 * call.
 */
#ifndef MMEXT_TEST_MARKERS_H
#define MMEXT_TEST_MARKERS_H

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#define T_REFPAGE_NR_FILE	"/sys/kernel/mm/refpage/syscall_nr"
#define T_REFPAGE_PAGES_FILE	"/sys/kernel/mm/refpage/pages"
/* The mainline series' number on x86-64 (scripts/syscall.tbl and syscall_64.tbl). */
#define T_REFPAGE_MAINLINE_NR	473

/* The number in a marker file: 0 to INT_MAX, or -1 (absent or malformed). */
static inline long t_marker(const char *path)
{
	char buf[32] = "", *end;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;
	long v;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	v = strtol(buf, &end, 10);
	return end == buf || (*end && *end != '\n') || v < 0 || v > 0x7fffffff ? -1 : v;
}

/* The number to issue on this kernel, or -1 when it has no reference pages for us. */
static inline long t_refpage_nr(void)
{
#if defined(__x86_64__) && !defined(__ILP32__)
	if (!access(T_REFPAGE_NR_FILE, F_OK))
		return t_marker(T_REFPAGE_NR_FILE);
	return t_marker(T_REFPAGE_PAGES_FILE) < 0 ? -1 : T_REFPAGE_MAINLINE_NR;
#else
	return -1;
#endif
}

/* Which form the kernel has, for messages. */
static inline const char *t_refpage_form(void)
{
	return access(T_REFPAGE_NR_FILE, F_OK) ? "mainline" : "6.12 backport";
}

/*
 * PR_COW_PTE's option: the 6.12 backport publishes it in T_COW_PTE_OPT_FILE; the
 * mainline series has T_COW_PTE_MAINLINE_OPT in <linux/prctl.h>, which its switch
 * T_COW_PTE_ENABLED_FILE (without the backport's file) vouches for.
 */
#define T_COW_PTE_OPT_FILE	"/sys/kernel/mm/cow_pte/prctl_option"
#define T_COW_PTE_ENABLED_FILE	"/sys/kernel/mm/cow_pte/enabled"
#define T_COW_PTE_MAINLINE_OPT	82

/* The option to issue on this kernel, or -1 when it has no COW page tables for us. */
static inline long t_cow_pte_opt(void)
{
	if (!access(T_COW_PTE_OPT_FILE, F_OK))
		return t_marker(T_COW_PTE_OPT_FILE);
	return t_marker(T_COW_PTE_ENABLED_FILE) < 0 ? -1 : T_COW_PTE_MAINLINE_OPT;
}

#endif /* MMEXT_TEST_MARKERS_H */
