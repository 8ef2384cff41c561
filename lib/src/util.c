// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Small helpers used across the library. */
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <mmext/uapi.h>
#include "internal.h"

#define STR_(x) #x
#define STR(x) STR_(x)

MMEXT_API const char *mmext_version(void)
{
	return STR(MMEXT_VERSION_MAJOR) "." STR(MMEXT_VERSION_MINOR);
}

int mmext__opts_check(const void *opts, size_t known)
{
	const unsigned char *p = opts;
	size_t sz, i;

	if (!opts)
		return 0;
	memcpy(&sz, opts, sizeof(sz));
	if (sz < sizeof(size_t))
		return -EINVAL;
	if (sz > MMEXT_OPTS_MAX)
		return -E2BIG;
	/* A caller built against a newer header may pass fields we do not know. */
	for (i = known; i < sz; i++)
		if (p[i])
			return -E2BIG;
	return 0;
}

size_t mmext__page_size(void)
{
	static size_t psz;

	/* A benign race: every thread computes the same value. */
	if (!__atomic_load_n(&psz, __ATOMIC_RELAXED))
		__atomic_store_n(&psz, (size_t)sysconf(_SC_PAGESIZE), __ATOMIC_RELAXED);
	return __atomic_load_n(&psz, __ATOMIC_RELAXED);
}

/*
 * The pid lives in a page the kernel empties in every child, whatever made it (fork(),
 * _Fork(), clone() without CLONE_VM), so a zero there means "look it up again". Mapped
 * when the library loads, not at first use, so that it never lands in a hole a caller
 * has just made. NULL where it cannot be had (before Linux 4.14): getpid() every time.
 */
static pid_t *pid_page;

__attribute__((constructor)) static void pid_page_init(void)
{
	size_t psz = mmext__page_size();
	pid_t *p = mmap(NULL, psz, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		return;
	if (madvise(p, psz, MADV_WIPEONFORK)) {
		munmap(p, psz);
		return;
	}
	*p = getpid();
	pid_page = p;
}

pid_t mmext__getpid(void)
{
	pid_t pid;

	if (!pid_page)
		return getpid();
	/* Every thread of a process stores the same value. */
	pid = __atomic_load_n(pid_page, __ATOMIC_RELAXED);
	if (!pid) {
		pid = getpid();
		__atomic_store_n(pid_page, pid, __ATOMIC_RELAXED);
	}
	return pid;
}

static void futex(int *word, int op, int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

bool mmext__lock(int *lock)
{
	int me = (int)mmext__getpid() << 1, want = me, cur = 0;

	for (;;) {
		if (__atomic_compare_exchange_n(lock, &cur, want, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return cur != 0;
		if ((cur & ~1) != me)
			continue;	/* free again, or an ancestor's: cur is what to replace */
		if (!(cur & 1) && !__atomic_compare_exchange_n(lock, &cur, cur | 1, false,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		futex(lock, FUTEX_WAIT_PRIVATE, me | 1);
		/* Others may still wait: whoever gets it now wakes the next one. */
		want = me | 1;
		cur = 0;
	}
}

void mmext__unlock(int *lock)
{
	if (__atomic_exchange_n(lock, 0, __ATOMIC_RELEASE) & 1)
		futex(lock, FUTEX_WAKE_PRIVATE, 1);
}

int mmext__range(const void *addr, size_t len, uintptr_t *endp)
{
	size_t psz = mmext__page_size();
	uintptr_t start = (uintptr_t)addr, end;

	if (start & (psz - 1) || !len)
		return -EINVAL;
	if (len > UINTPTR_MAX - (psz - 1))
		return -EINVAL;
	len = (len + psz - 1) & ~(psz - 1);
	if (__builtin_add_overflow(start, len, &end))
		return -EINVAL;
	if (endp)
		*endp = end;
	return 0;
}

ssize_t mmext__read_file(const char *path, char *buf, size_t size)
{
	ssize_t n, total = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)total + 1 < size) {
		n = read(fd, buf + total, size - 1 - total);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			close(fd);
			return n;
		}
		if (!n)
			break;
		total += n;
	}
	buf[total] = '\0';
	close(fd);
	return total;
}

int mmext__read_marker(const char *path, long *val)
{
	char buf[32], *end;
	ssize_t n = mmext__read_file(path, buf, sizeof(buf));
	long v;

	if (n < 0)
		return n;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || errno || (*end && *end != '\n') || v < 0)
		return -EINVAL;
	*val = v;
	return 0;
}

int mmext__open_proc(pid_t pid, const char *name, int flags)
{
	char path[64];
	int fd;

	if (pid < 0)
		return -EINVAL;
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	else
		snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	return fd;
}

static int uffd_api(int fd, uint64_t features)
{
	struct uffdio_api api = { .api = UFFD_API, .features = features };

	if (ioctl(fd, UFFDIO_API, &api))
		return -errno;
	if ((api.features & features) != features)
		return -EINVAL;
	return 0;
}

int mmext__uffd_open(uint64_t features)
{
	int fd, dev, ret;

#ifdef __NR_userfaultfd
	fd = syscall(__NR_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);
	if (fd < 0)
		ret = -errno;
#else
	fd = -1;
	ret = -ENOSYS;
#endif
	if (fd < 0) {
		/* Without UFFD_USER_MODE_ONLY support (< 5.11) or under a seccomp filter. */
		dev = open("/dev/userfaultfd", O_RDWR | O_CLOEXEC);
		if (dev < 0)
			return ret;	/* the first error says more than the fallback's */
		fd = ioctl(dev, USERFAULTFD_IOC_NEW, O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			ret = -errno;
		close(dev);
		if (fd < 0)
			return ret;
	}
	ret = uffd_api(fd, features);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

int mmext__range_mapped(uintptr_t addr, uintptr_t end, unsigned int *prot_and,
			unsigned int *prot_or)
{
	struct mmext_maps *m;
	struct mmext_vma v;
	unsigned int pand = ~0u, por = 0;
	uintptr_t cur = addr;
	int ret;

	ret = mmext_maps_open(0, NULL, &m);
	if (ret)
		return ret;
	while (cur < end) {
		ret = mmext_maps_find(m, cur, 0, &v);
		if (ret == -ENOENT)
			ret = -ENOMEM;
		if (ret)
			break;
		pand &= v.prot;
		por |= v.prot;
		cur = v.end;
	}
	mmext_maps_close(m);
	if (prot_and)
		*prot_and = pand;
	if (prot_or)
		*prot_or = por;
	return ret;
}
