// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Feature probe: one small experiment per feature, cached. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <mmext/uapi.h>
#include "internal.h"

static int probe_lock;
static struct mmext_feature_status cache[MMEXT_FEAT_COUNT];
static bool cached[MMEXT_FEAT_COUNT];

/* The cache under the lock; a lock taken over from a fork's parent may guard a torn entry. */
static void probe_lock_take(void)
{
	if (mmext__lock(&probe_lock))
		memset(cached, 0, sizeof(cached));
}

static const char *const feature_names[MMEXT_FEAT_COUNT] = {
	[MMEXT_FEAT_ANON_NAME] = "anon_name",
	[MMEXT_FEAT_REFPAGE] = "refpage",
	[MMEXT_FEAT_MAPS_LOCKLESS] = "maps_lockless",
	[MMEXT_FEAT_COW_PTE] = "cow_pte",
	[MMEXT_FEAT_WRITEWATCH] = "writewatch",
	[MMEXT_FEAT_PROCMAP_QUERY] = "procmap_query",
	[MMEXT_FEAT_SOFT_DIRTY] = "soft_dirty",
	[MMEXT_FEAT_ANON_SHMEM_NAME] = "anon_shmem_name",
};

static void set(struct mmext_feature_status *st, int reason, const char *detail)
{
	st->available = !reason;
	st->reason = reason;
	st->detail = detail;
}

static void probe_anon_name(struct mmext_feature_status *st, bool shared)
{
	size_t psz = mmext__page_size();
	void *p = mmap(NULL, psz, PROT_NONE, (shared ? MAP_SHARED : MAP_PRIVATE) | MAP_ANONYMOUS,
		       -1, 0);
	int err = 0;

	if (p == MAP_FAILED) {
		set(st, errno, "could not map a page to probe with");
		return;
	}
	if (prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, psz,
		  (unsigned long)"mmext-probe"))
		err = errno;
	munmap(p, psz);
	switch (err) {
	case 0:
		set(st, 0, shared ? "shared anonymous memory can be named"
				  : "anonymous memory can be named");
		break;
	case EINVAL:
		set(st, EINVAL, "PR_SET_VMA_ANON_NAME rejected: kernel built without "
				"CONFIG_ANON_VMA_NAME, or older than 5.17");
		break;
	case EBADF:
		set(st, EBADF, "shared anonymous memory can be named only from Linux 6.2");
		break;
	case EPERM:
	case EACCES:
		set(st, err, "prctl(PR_SET_VMA) not permitted (seccomp or LSM)");
		break;
	default:
		set(st, err, "prctl(PR_SET_VMA) failed unexpectedly");
	}
}

/* A feature only an mmext patch provides, with a switch for a marker: available at 1. */
static void probe_marker(struct mmext_feature_status *st, const char *path,
			 const char *what)
{
	long v;
	int ret = mmext__read_marker(path, &v);

	if (ret == -ENOENT || ret == -ENOTDIR)
		set(st, ENOENT, what);
	else if (ret == -EINVAL)
		set(st, EINVAL, "the mmext marker file has an unexpected format");
	else if (ret)
		set(st, -ret, "the mmext marker file cannot be read");
	else if (v != 1)
		set(st, EOPNOTSUPP, "present in the kernel but disabled");
	else
		set(st, 0, "provided by the mmext kernel patch");
}

/* A decimal number at *s, with no sign or space before it; *s moves past it. */
static bool release_number(const char **s, unsigned long *v)
{
	char *end;

	if (**s < '0' || **s > '9')
		return false;
	errno = 0;
	*v = strtoul(*s, &end, 10);
	*s = end;
	return !errno;
}

bool mmext__release_at_least(const char *release, unsigned int major, unsigned int minor)
{
	unsigned long ma, mi;

	if (!release_number(&release, &ma) || *release++ != '.' ||
	    !release_number(&release, &mi))
		return false;
	return ma > major || (ma == major && mi >= minor);
}

/* uname -m of the architectures whose every 6.18 kernel may have per-VMA locks. */
static const char *const per_vma_lock_machines[] = {
	"x86_64", "aarch64", "s390x", "riscv64", "loongarch64", "ppc64le", "ppc64",
};

int mmext__maps_lockless_rule(const char *release, const char *machine, int config,
			      long kernel_max, const char **detail)
{
	unsigned int i;

	if (!mmext__release_at_least(release, 6, 18)) {
		*detail = "maps read under mmap_lock: a kernel before 6.18 without the mmext "
			  "lockless-maps patch (marker " MMEXT_MAPS_LOCKLESS_SYSFS ")";
		return ENOENT;
	}
	if (config == 1) {
		*detail = "mainline 6.18 or later with CONFIG_PER_VMA_LOCK: maps and "
			  "PROCMAP_QUERY under per-VMA locks (its version and config say so)";
		return 0;
	}
	if (config == 0) {
		*detail = "maps read under mmap_lock: built without CONFIG_PER_VMA_LOCK";
		return ENOENT;
	}
	for (i = 0; i < sizeof(per_vma_lock_machines) / sizeof(*per_vma_lock_machines); i++) {
		if (!strcmp(machine, per_vma_lock_machines[i]) && kernel_max > 0) {
			*detail = "mainline 6.18 or later, SMP, an architecture with per-VMA "
				  "locks: maps and PROCMAP_QUERY under them (told by the version; "
				  "no config to read)";
			return 0;
		}
	}
	*detail = "mainline 6.18 or later, but no config to read and an architecture or "
		  "uniprocessor build that may lack per-VMA locks: cannot tell";
	return ENODATA;
}

/* 1 if the config file has CONFIG_PER_VMA_LOCK=y, 0 if not, -1 without one to read. */
static int config_per_vma_lock(const char *release)
{
	char path[128 + sizeof(((struct utsname *)0)->release)], line[256];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/boot/config-%s", release);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (!found && fgets(line, sizeof(line), f))
		found = !strcmp(line, "CONFIG_PER_VMA_LOCK=y\n");
	fclose(f);
	return found;
}

/*
 * The 6.12 backport's marker is a switch. Mainline reads /proc/PID/maps under per-VMA
 * locks since 6.17 and answers PROCMAP_QUERY so since 6.18, where the kernel has them,
 * and publishes no marker: the version, the config in /boot and the architecture tell.
 */
static void probe_maps_lockless(struct mmext_feature_status *st)
{
	const char *detail;
	struct utsname u;
	long kernel_max;
	int reason;

	probe_marker(st, MMEXT_MAPS_LOCKLESS_SYSFS, "");
	if (st->reason != ENOENT)
		return;
	if (uname(&u)) {
		set(st, errno, "uname() failed");
		return;
	}
	if (mmext__read_marker("/sys/devices/system/cpu/kernel_max", &kernel_max))
		kernel_max = -1;
	reason = mmext__maps_lockless_rule(u.release, u.machine, config_per_vma_lock(u.release),
					   kernel_max, &detail);
	set(st, reason, detail);
}

#define REFPAGE_ABSENT "no reference pages: not in any released kernel; needs the mmext " \
	"refpage patch (markers " MMEXT_REFPAGE_SYSFS " or " MMEXT_REFPAGE_PAGES_SYSFS ")"

/*
 * Reference pages come in two forms, told apart by their markers. The 6.12 backport
 * publishes its x86-64 number in MMEXT_REFPAGE_SYSFS; the mainline series has a number
 * of the generic system call table and publishes no number, only the page count
 * MMEXT_REFPAGE_PAGES_SYSFS (which the backport has too). A backport marker that
 * cannot be read or parsed stops here: its kernel's number is unknown, and the
 * mainline number may be another call there.
 */
int mmext__refpage_nr(long *nr, const char **detail)
{
	long v;
	int ret = mmext__read_marker(MMEXT_REFPAGE_SYSFS, &v);

	if (!ret) {
		if (!MMEXT__REFPAGE_ABI) {
			*detail = "the 6.12 backport's refpage_create() number is for x86-64 "
				  "callers; this libmmext is an ia32, x32 or non-x86 build";
			return -ENOSYS;
		}
		*detail = "refpage_create() of the mmext 6.12 backport (number from "
			  MMEXT_REFPAGE_SYSFS ")";
		*nr = v;
		return 0;
	}
	if (ret == -EINVAL) {
		*detail = "the mmext marker " MMEXT_REFPAGE_SYSFS " has an unexpected format";
		return ret;
	}
	if (ret != -ENOENT && ret != -ENOTDIR) {
		*detail = "the mmext marker " MMEXT_REFPAGE_SYSFS " cannot be read";
		return ret;
	}
	ret = mmext__read_marker(MMEXT_REFPAGE_PAGES_SYSFS, &v);
	if (ret == -ENOENT || ret == -ENOTDIR) {
		*detail = REFPAGE_ABSENT;
		return -ENOENT;
	}
	if (ret == -EINVAL) {
		*detail = "the mmext marker " MMEXT_REFPAGE_PAGES_SYSFS " has an unexpected format";
		return ret;
	}
	if (ret) {
		*detail = "the mmext marker " MMEXT_REFPAGE_PAGES_SYSFS " cannot be read";
		return ret;
	}
	if (MMEXT__NR_REFPAGE_MAINLINE < 0) {
		*detail = "the kernel has the mainline refpage_create(), but this libmmext does "
			  "not know its number on this architecture";
		return -ENOSYS;
	}
	*detail = "refpage_create() of the mainline series (its system call table number)";
	*nr = MMEXT__NR_REFPAGE_MAINLINE;
	return 0;
}

#define COW_PTE_ABSENT "no COW page tables: not in any released kernel; needs the mmext " \
	"cow_pte patch (markers " MMEXT_COW_PTE_SYSFS " or " MMEXT_COW_PTE_ENABLED_SYSFS ")"

/*
 * The backport publishes its option in MMEXT_COW_PTE_SYSFS; the mainline series has
 * PR_COW_PTE and only MMEXT_COW_PTE_ENABLED_SYSFS, which the backport has too. A
 * backport marker that cannot be read or parsed stops here: option 82 may be another
 * prctl on that kernel.
 */
int mmext__cow_pte_option(long *opt, const char **detail)
{
	long v;
	int ret = mmext__read_marker(MMEXT_COW_PTE_SYSFS, &v);

	if (!ret) {
		*detail = "COW page tables of the mmext 6.12 backport (prctl option from "
			  MMEXT_COW_PTE_SYSFS ")";
		*opt = v;
		return 0;
	}
	if (ret == -EINVAL) {
		*detail = "the mmext marker " MMEXT_COW_PTE_SYSFS " has an unexpected format";
		return ret;
	}
	if (ret != -ENOENT && ret != -ENOTDIR) {
		*detail = "the mmext marker " MMEXT_COW_PTE_SYSFS " cannot be read";
		return ret;
	}
	ret = mmext__read_marker(MMEXT_COW_PTE_ENABLED_SYSFS, &v);
	if (ret == -ENOENT || ret == -ENOTDIR) {
		*detail = COW_PTE_ABSENT;
		return -ENOENT;
	}
	if (ret == -EINVAL || (!ret && v > 2)) {
		*detail = "the mmext marker " MMEXT_COW_PTE_ENABLED_SYSFS " has an unexpected format";
		return -EINVAL;
	}
	if (ret) {
		*detail = "the mmext marker " MMEXT_COW_PTE_ENABLED_SYSFS " cannot be read";
		return ret;
	}
	*detail = "PR_COW_PTE of the mainline series";
	*opt = MMEXT__PR_COW_PTE_MAINLINE;
	return 0;
}

static void probe_cow_pte(struct mmext_feature_status *st)
{
	const char *detail;
	long opt;
	int ret = mmext__cow_pte_option(&opt, &detail);

	set(st, -ret, detail);
}

static void probe_refpage(struct mmext_feature_status *st)
{
	const char *detail;
	long nr;
	int ret = mmext__refpage_nr(&nr, &detail);

	set(st, -ret, detail);
}

static int scan_one_page(int fd, void *p, size_t psz)
{
	struct page_region r;
	struct pm_scan_arg arg = {
		.size = sizeof(arg),
		.start = (uintptr_t)p,
		.end = (uintptr_t)p + psz,
		.vec = (uintptr_t)&r,
		.vec_len = 1,
		.return_mask = PAGE_IS_PRESENT,
	};

	return ioctl(fd, PAGEMAP_SCAN, &arg) < 0 ? -errno : 0;
}

static void probe_writewatch(struct mmext_feature_status *st)
{
	size_t psz = mmext__page_size();
	void *p = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	int fd, uffd, ret;

	if (p == MAP_FAILED) {
		set(st, errno, "could not map a page to probe with");
		return;
	}
	fd = mmext__open_proc(0, "pagemap", O_RDONLY);
	ret = fd < 0 ? fd : scan_one_page(fd, p, psz);
	if (fd >= 0)
		close(fd);
	if (ret == -ENOTTY || ret == -EINVAL) {
		set(st, -ret, "no PAGEMAP_SCAN ioctl (Linux older than 6.7)");
		goto out;
	} else if (ret) {
		set(st, -ret, "PAGEMAP_SCAN failed unexpectedly");
		goto out;
	}
	uffd = mmext__uffd_open(UFFD_FEATURE_WP_ASYNC | UFFD_FEATURE_WP_UNPOPULATED);
	if (uffd >= 0) {
		struct uffdio_register reg = {
			.range = { .start = (uintptr_t)p, .len = psz },
			.mode = UFFDIO_REGISTER_MODE_WP,
		};

		ret = ioctl(uffd, UFFDIO_REGISTER, &reg) ? -errno : 0;
		close(uffd);
	} else {
		ret = uffd;
	}
	switch (-ret) {
	case 0:
		set(st, 0, "PAGEMAP_SCAN with userfaultfd WP_ASYNC");
		break;
	case ENOSYS:
		set(st, ENOSYS, "no userfaultfd (kernel built without CONFIG_USERFAULTFD)");
		break;
	case EPERM:
	case EACCES:
		set(st, -ret, "userfaultfd not permitted: neither UFFD_USER_MODE_ONLY nor "
			      "/dev/userfaultfd is allowed to this process");
		break;
	case EINVAL:
		set(st, EINVAL, "userfaultfd lacks WP_ASYNC/WP_UNPOPULATED or write-protect "
				"registration (Linux older than 6.7, or no CONFIG_PTE_MARKER_UFFD_WP)");
		break;
	default:
		set(st, -ret, "userfaultfd setup failed unexpectedly");
	}
out:
	munmap(p, psz);
}

static void probe_procmap_query(struct mmext_feature_status *st)
{
	struct procmap_query q = { .size = sizeof(q) };
	int fd = mmext__open_proc(0, "maps", O_RDONLY), ret;

	if (fd < 0) {
		set(st, -fd, "cannot open /proc/self/maps");
		return;
	}
	q.query_addr = (uintptr_t)&q;
	ret = ioctl(fd, PROCMAP_QUERY, &q) ? errno : 0;
	close(fd);
	if (!ret)
		set(st, 0, "PROCMAP_QUERY ioctl on /proc/PID/maps");
	else if (ret == ENOTTY)
		set(st, ENOTTY, "no PROCMAP_QUERY ioctl (Linux older than 6.11)");
	else
		set(st, ret, "PROCMAP_QUERY failed unexpectedly");
}

static void probe_soft_dirty(struct mmext_feature_status *st)
{
	size_t psz = mmext__page_size();
	volatile char *p = mmap(NULL, psz, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t ent = 0;
	int fd, ret = 0;

	if (p == MAP_FAILED) {
		set(st, errno, "could not map a page to probe with");
		return;
	}
	/* A freshly written page is soft-dirty whenever the kernel tracks the bit. */
	*p = 1;
	fd = mmext__open_proc(0, "pagemap", O_RDONLY);
	if (fd < 0)
		ret = fd;
	else if (pread(fd, &ent, sizeof(ent), (uintptr_t)p / psz * sizeof(ent)) != sizeof(ent))
		ret = -EIO;
	if (fd >= 0)
		close(fd);
	munmap((void *)p, psz);
	if (!ret) {
		fd = mmext__open_proc(0, "clear_refs", O_WRONLY);
		if (fd < 0)
			ret = fd;
		else
			close(fd);
	}
	if (ret)
		set(st, -ret, "cannot open /proc/self/pagemap or clear_refs");
	else if (!(ent >> 55 & 1))
		set(st, EOPNOTSUPP, "soft-dirty bit never set: kernel built without "
				    "CONFIG_MEM_SOFT_DIRTY (or the architecture lacks it)");
	else
		set(st, 0, "soft-dirty bits in /proc/PID/pagemap");
}

static void probe_one(enum mmext_feature f, struct mmext_feature_status *st)
{
	switch (f) {
	case MMEXT_FEAT_ANON_NAME:
		probe_anon_name(st, false);
		break;
	case MMEXT_FEAT_ANON_SHMEM_NAME:
		probe_anon_name(st, true);
		break;
	case MMEXT_FEAT_REFPAGE:
		probe_refpage(st);
		break;
	case MMEXT_FEAT_MAPS_LOCKLESS:
		probe_maps_lockless(st);
		break;
	case MMEXT_FEAT_COW_PTE:
		probe_cow_pte(st);
		break;
	case MMEXT_FEAT_WRITEWATCH:
		probe_writewatch(st);
		break;
	case MMEXT_FEAT_PROCMAP_QUERY:
		probe_procmap_query(st);
		break;
	case MMEXT_FEAT_SOFT_DIRTY:
		probe_soft_dirty(st);
		break;
	default:
		break;
	}
}

/*
 * Out of fds or memory, interrupted, or a /proc file of the process unreadable for a
 * while (ESRCH): says nothing about the kernel.
 */
static bool transient(int reason)
{
	return reason == EMFILE || reason == ENFILE || reason == ENOMEM || reason == EAGAIN ||
	       reason == EINTR || reason == ESRCH;
}

/* The size of struct mmext_feature_status in libmmext 0.1. */
#define STATUS_V1_SIZE	MMEXT__OPTS_END(mmext_feature_status, detail)

MMEXT_API int mmext_probe_status(enum mmext_feature f, struct mmext_feature_status *st,
				 size_t size)
{
	struct mmext_feature_status now;
	int saved = errno;

	if ((unsigned int)f >= MMEXT_FEAT_COUNT || !st || size < STATUS_V1_SIZE ||
	    size > MMEXT_OPTS_MAX)
		return -EINVAL;
	probe_lock_take();
	if (cached[f]) {
		now = cache[f];
	} else {
		probe_one(f, &now);
		if (!transient(now.reason)) {
			cache[f] = now;
			cached[f] = true;
		}
	}
	mmext__unlock(&probe_lock);
	/* A caller built against a newer header gets zeros in what we do not know. */
	memcpy(st, &now, size < sizeof(now) ? size : sizeof(now));
	if (size > sizeof(now))
		memset((char *)st + sizeof(now), 0, size - sizeof(now));
	errno = saved;
	return 0;
}

MMEXT_API int mmext_probe(enum mmext_feature f, struct mmext_feature_status *st)
{
	return mmext_probe_status(f, st, STATUS_V1_SIZE);
}

MMEXT_API const char *mmext_feature_name(enum mmext_feature f)
{
	return (unsigned int)f < MMEXT_FEAT_COUNT ? feature_names[f] : NULL;
}

MMEXT_API void mmext_probe_reset(void)
{
	probe_lock_take();
	memset(cached, 0, sizeof(cached));
	mmext__unlock(&probe_lock);
}

/* Internal shortcut: 1 when available, 0 when not. */
bool mmext__have(enum mmext_feature f)
{
	return !mmext__need(f);
}

int mmext__need(enum mmext_feature f)
{
	struct mmext_feature_status st;

	if (mmext_probe(f, &st))
		return -EINVAL;
	if (st.available)
		return 0;
	/* Said of this process, not of the kernel: the caller must see it. */
	if (st.reason == EPERM || st.reason == EACCES || transient(st.reason))
		return -st.reason;
	return -EOPNOTSUPP;
}
