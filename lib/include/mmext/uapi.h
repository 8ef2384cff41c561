/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * The few kernel uapi definitions libmmext needs that older <linux/...> headers lack.
 *
 * Values are those of Linux 6.12 (include/uapi/linux/{fs,userfaultfd,prctl}.h,
 * checked against build/linux at v6.12.117). Each block is guarded by a macro the
 * kernel header defines at the same time, so this file adds nothing when the host's
 * headers are already new enough and never redefines a struct they declare.
 *
 * Beware of pre-merge copies of the PAGEMAP_SCAN uapi found around the web: in the
 * merged ABI PAGE_IS_WPALLOWED is bit 0 and PAGE_IS_WRITTEN bit 1.
 */
#ifndef MMEXT_UAPI_H
#define MMEXT_UAPI_H

#include <linux/types.h>
#include <linux/ioctl.h>
#include <linux/fs.h>
#include <linux/userfaultfd.h>
#include <linux/prctl.h>

#ifndef PROCFS_IOCTL_MAGIC
#define PROCFS_IOCTL_MAGIC 'f'
#endif

/* PAGEMAP_SCAN: Linux 6.7. */
#ifndef PAGEMAP_SCAN
#define PAGEMAP_SCAN	_IOWR(PROCFS_IOCTL_MAGIC, 16, struct pm_scan_arg)

#define PAGE_IS_WPALLOWED	(1 << 0)
#define PAGE_IS_WRITTEN		(1 << 1)
#define PAGE_IS_FILE		(1 << 2)
#define PAGE_IS_PRESENT		(1 << 3)
#define PAGE_IS_SWAPPED		(1 << 4)
#define PAGE_IS_PFNZERO		(1 << 5)
#define PAGE_IS_HUGE		(1 << 6)

struct page_region {
	__u64 start;
	__u64 end;
	__u64 categories;
};

#define PM_SCAN_WP_MATCHING	(1 << 0)
#define PM_SCAN_CHECK_WPASYNC	(1 << 1)

struct pm_scan_arg {
	__u64 size;
	__u64 flags;
	__u64 start;
	__u64 end;
	__u64 walk_end;
	__u64 vec;
	__u64 vec_len;
	__u64 max_pages;
	__u64 category_inverted;
	__u64 category_mask;
	__u64 category_anyof_mask;
	__u64 return_mask;
};
#endif /* PAGEMAP_SCAN */

/* PAGE_IS_SOFT_DIRTY came one release after PAGEMAP_SCAN (6.8). */
#ifndef PAGE_IS_SOFT_DIRTY
#define PAGE_IS_SOFT_DIRTY	(1 << 7)
#endif

/* PROCMAP_QUERY: Linux 6.11. The flags are an enum upstream, so guard on the ioctl. */
#ifndef PROCMAP_QUERY
#define PROCMAP_QUERY	_IOWR(PROCFS_IOCTL_MAGIC, 17, struct procmap_query)

enum procmap_query_flags {
	PROCMAP_QUERY_VMA_READABLE		= 0x01,
	PROCMAP_QUERY_VMA_WRITABLE		= 0x02,
	PROCMAP_QUERY_VMA_EXECUTABLE		= 0x04,
	PROCMAP_QUERY_VMA_SHARED		= 0x08,
	PROCMAP_QUERY_COVERING_OR_NEXT_VMA	= 0x10,
	PROCMAP_QUERY_FILE_BACKED_VMA		= 0x20,
};

struct procmap_query {
	__u64 size;
	__u64 query_flags;
	__u64 query_addr;
	__u64 vma_start;
	__u64 vma_end;
	__u64 vma_flags;
	__u64 vma_page_size;
	__u64 vma_offset;
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u32 vma_name_size;
	__u32 build_id_size;
	__u64 vma_name_addr;
	__u64 build_id_addr;
};
#endif /* PROCMAP_QUERY */

/* userfaultfd: WP_UNPOPULATED 6.5, WP_ASYNC 6.7, /dev/userfaultfd 6.1. */
#ifndef UFFD_FEATURE_WP_UNPOPULATED
#define UFFD_FEATURE_WP_UNPOPULATED	(1 << 13)
#endif
#ifndef UFFD_FEATURE_WP_ASYNC
#define UFFD_FEATURE_WP_ASYNC		(1 << 15)
#endif
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#ifndef USERFAULTFD_IOC
#define USERFAULTFD_IOC 0xAA
#endif
#ifndef USERFAULTFD_IOC_NEW
#define USERFAULTFD_IOC_NEW _IO(USERFAULTFD_IOC, 0x00)
#endif

/* Anonymous VMA names: Linux 5.17 (shared anonymous memory since 6.2). */
#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#endif
#ifndef PR_SET_VMA_ANON_NAME
#define PR_SET_VMA_ANON_NAME	0
#endif

/*
 * Reference pages (mmext kernel patch, include/uapi/linux/refpage.h; not upstream).
 * The system call has no number a program may assume: the library takes it from
 * the kernel's markers (mmext/probe.h).
 */
#ifndef REFPAGE_CLOEXEC
#define REFPAGE_CLOEXEC		0x0001U
#endif

#endif /* MMEXT_UAPI_H */
