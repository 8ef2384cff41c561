// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/* Small helpers used across the library. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
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
 * The process number and the lock words live in a page the kernel empties in every
 * child, whatever made it (fork(), _Fork(), clone() without CLONE_VM): a zero number
 * means "take a new one", and a child finds every lock free, however its pid compares
 * with its ancestors' (reused, or 1 in a new pid namespace). A vfork() or
 * posix_spawn() child and a CLONE_VM clone share the page, like threads: such a child
 * shares the locks (private futexes are keyed by the memory) and counts as its parent
 * for handles.
 *
 * The page is one of the library's own bss, not a mapping of its own: dlclose() unmaps
 * it with the library, and no destructor is needed (one at exit() could pull the page
 * from under a call in progress in another thread). Picked from an area big enough to
 * hold an aligned page of up to 64 KiB; bss pages are anonymous, as madvise() needs.
 * Set up when the library loads, while the process is young (one thread, few
 * mappings: madvise() splits the bss mapping and can fail at vm.max_map_count), or at
 * the first call if a program's own constructors call it earlier (static linking,
 * .preinit_array). NULL where it cannot be had (before Linux 4.14): the pid stands in
 * for the process number, and locks are tagged with the holder's.
 */
#define WIPE_MAX_PAGE	65536
static char wipe_area[2 * WIPE_MAX_PAGE - 4096] __attribute__((aligned(4096)));

#define LOCK_SLOTS	8	/* more than the library's locks */

struct wipe_page {
	unsigned long gen;	/* see mmext__process_gen() */
	int lock[LOCK_SLOTS];	/* futex words, see mmext__lock() */
};
static struct wipe_page *wipe;
static pthread_once_t wipe_once = PTHREAD_ONCE_INIT;

static void wipe_init(void)
{
	size_t psz = mmext__page_size();
	uintptr_t p = ((uintptr_t)wipe_area + psz - 1) & ~(psz - 1);

	if (p + psz > (uintptr_t)wipe_area + sizeof(wipe_area) ||
	    madvise((void *)p, psz, MADV_WIPEONFORK))
		return;
	wipe = (struct wipe_page *)p;
}

static struct wipe_page *wipe_page(void)
{
	pthread_once(&wipe_once, wipe_init);
	return wipe;
}

__attribute__((constructor)) static void wipe_at_load(void)
{
	wipe_page();
}

/*
 * Outside the wipe page, so a child starts from what its parent handed out: each
 * descendant's number is above any of its ancestors'.
 */
static unsigned long gen_last;

unsigned long mmext__process_gen(void)
{
	struct wipe_page *w = wipe_page();
	unsigned long gen, fresh;

	if (!w)
		return (unsigned long)getpid();
	gen = __atomic_load_n(&w->gen, __ATOMIC_ACQUIRE);
	if (gen)
		return gen;
	/* Threads racing here all take the winner's number; the losers' go unused. */
	fresh = __atomic_add_fetch(&gen_last, 1, __ATOMIC_RELAXED);
	if (__atomic_compare_exchange_n(&w->gen, &gen, fresh, false, __ATOMIC_ACQ_REL,
					__ATOMIC_ACQUIRE))
		return fresh;
	return gen;
}

static void futex(int *word, int op, int val)
{
	syscall(SYS_futex, word, op, val, NULL, NULL, 0);
}

/*
 * A lock's futex word is a slot of the wipe page, given out at first use; the caller's
 * own word says whether a thread of this process or of an ancestor holds the lock. Not
 * emptied at fork: a holder clears it before letting go, so finding it set on taking the
 * lock means the holder was a thread that did not come along into this process. Without
 * the wipe page the futex word is a static one tagged with the holder's pid, and a word
 * left tagged with another pid is an ancestor's.
 */
static int *slot_owner[LOCK_SLOTS];
static int pid_lock[LOCK_SLOTS];
static int slot_cancel[LOCK_SLOTS];	/* the holder's, from mmext__cancel_off() */

static size_t lock_slot(int *lock)
{
	int *cur;
	size_t i;

	for (i = 0; i < LOCK_SLOTS; i++) {
		cur = __atomic_load_n(&slot_owner[i], __ATOMIC_ACQUIRE);
		if (!cur && __atomic_compare_exchange_n(&slot_owner[i], &cur, lock, false,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
			cur = lock;
		if (cur == lock)
			return i;
	}
	abort();	/* LOCK_SLOTS is too small for the library's locks */
}

static int *futex_word(size_t slot)
{
	struct wipe_page *w = wipe_page();

	return w ? &w->lock[slot] : &pid_lock[slot];
}

int mmext__cancel_off(void)
{
	int old = PTHREAD_CANCEL_ENABLE;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
	return old;
}

void mmext__cancel_restore(int old)
{
	int ignored;

	pthread_setcancelstate(old, &ignored);
}

bool mmext__lock(int *lock)
{
	size_t slot = lock_slot(lock);
	int cancel = mmext__cancel_off(), *word = futex_word(slot);
	int me = wipe_page() ? 2 : (int)getpid() << 1, want = me, cur = 0;
	bool taken_over;

	for (;;) {
		if (__atomic_compare_exchange_n(word, &cur, want, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;
		if ((cur & ~1) != me)
			continue;	/* free again, or an ancestor's: cur is what to replace */
		if (!(cur & 1) && !__atomic_compare_exchange_n(word, &cur, cur | 1, false,
							       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		futex(word, FUTEX_WAIT_PRIVATE, me | 1);
		/* Others may still wait: whoever gets it now wakes the next one. */
		want = me | 1;
		cur = 0;
	}
	taken_over = *lock || (cur & ~1);
	*lock = 1;
	slot_cancel[slot] = cancel;
	return taken_over;
}

void mmext__unlock(int *lock)
{
	size_t slot = lock_slot(lock);
	int cancel = slot_cancel[slot], *word = futex_word(slot);

	*lock = 0;
	if (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) & 1)
		futex(word, FUTEX_WAKE_PRIVATE, 1);
	mmext__cancel_restore(cancel);
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
	/* A prctl option is an int: a larger number would be cut down to another one. */
	if (end == buf || errno || (*end && *end != '\n') || v < 0 || v > INT_MAX)
		return -EINVAL;
	*val = v;
	return 0;
}

/*
 * /proc/self, or /proc/thread-self once the main thread has exited (pthread_exit()):
 * then /proc/self's files show no memory or fail with ESRCH, and its exe link is gone.
 * The calling thread's directory shows the same memory, but only while that thread
 * lives; no directory of the process does better then.
 */
static const char *self_dir(void)
{
	char c;

	if (readlink("/proc/self/exe", &c, 1) < 0 && errno == ENOENT &&
	    readlink("/proc/thread-self/exe", &c, 1) > 0)
		return "/proc/thread-self";
	return "/proc/self";
}

/*
 * The number /proc shows for the process of pidfd: from the fd's fdinfo, read through
 * that /proc. 0 when it cannot show it, -1 once the process is reaped, -errno.
 */
static long proc_number(int pidfd)
{
	char path[64], buf[512], *p;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/fdinfo/%d", self_dir(), pidfd);
	n = mmext__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	p = strstr(buf, "\nPid:\t");
	return p ? strtol(p + 6, NULL, 10) : -ENOENT;
}

/*
 * /proc may be of another pid namespace than the caller's (unshare -pf without a
 * /proc of its own): there pid would be someone else. A pidfd names the caller's
 * process pid and says its number in that /proc, which stays its own until it is
 * reaped: checked once the file is open. Without pidfds (before 5.3, or a thread's
 * pid) the number is used as it is.
 */
static int open_pid(pid_t pid, const char *name, int flags)
{
	char path[64];
	long nr = pid;
	int pidfd, fd;

#ifdef SYS_pidfd_open
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 && errno == ESRCH)
		return -ESRCH;
#else
	pidfd = -1;
#endif
	if (pidfd >= 0) {
		nr = proc_number(pidfd);
		if (nr == -ENOENT) {
			/* A fdinfo without Pid: (no kernel we know): as without pidfds. */
			close(pidfd);
			pidfd = -1;
			nr = pid;
		} else if (nr <= 0) {
			close(pidfd);
			return nr < -1 ? (int)nr : -ESRCH;
		}
	}
	snprintf(path, sizeof(path), "/proc/%ld/%s", nr, name);
	fd = open(path, flags | O_CLOEXEC);
	if (fd < 0)
		fd = errno == ENOENT ? -ESRCH : -errno;
#ifdef SYS_pidfd_open
	/* Not reaped (signal 0 fails with ESRCH only then): nr was its all along. */
	if (pidfd >= 0) {
		if (fd >= 0 && syscall(SYS_pidfd_send_signal, pidfd, 0, NULL, 0) &&
		    errno == ESRCH) {
			close(fd);
			fd = -ESRCH;
		}
		close(pidfd);
	}
#endif
	return fd;
}

int mmext__open_proc(pid_t pid, const char *name, int flags)
{
	char path[64];
	int fd;

	if (pid < 0)
		return -EINVAL;
	if (pid)
		return open_pid(pid, name, flags);
	snprintf(path, sizeof(path), "%s/%s", self_dir(), name);
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
