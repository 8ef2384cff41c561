/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by the libmmext tests in tests/lib/. */
#ifndef MMEXT_TEST_HELPERS_H
#define MMEXT_TEST_HELPERS_H

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <mmext.h>

/* SKIP the current test with the probe's reason unless feature f is available. */
#define REQUIRE_FEATURE(f)							\
	do {									\
		struct mmext_feature_status __st;				\
		ASSERT_EQ(0, mmext_probe((f), &__st));				\
		if (!__st.available)						\
			SKIP(return, "%s unavailable: %s", mmext_feature_name(f),\
			     __st.detail);					\
	} while (0)

/* SKIP the current test when feature f is available (tests of the fallback path). */
#define REQUIRE_NO_FEATURE(f)							\
	do {									\
		struct mmext_feature_status __st;				\
		ASSERT_EQ(0, mmext_probe((f), &__st));				\
		if (__st.available)						\
			SKIP(return, "this kernel has %s", mmext_feature_name(f));\
	} while (0)

static inline size_t t_psz(void)
{
	return (size_t)sysconf(_SC_PAGESIZE);
}

/* A mapping the test owns; MAP_FAILED is turned into NULL. */
static inline char *t_map(size_t len, int prot, int flags)
{
	void *p = mmap(NULL, len, prot, flags, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* An address with nothing mapped: map and unmap len bytes. */
static inline char *t_hole(size_t len)
{
	char *p = t_map(len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS);

	if (p)
		munmap(p, len);
	return p;
}

/* Run fn in a child: its wait status, or -1 if it could not be forked or reaped. */
static inline int t_child_status(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(fn(arg));
	return waitpid(pid, &status, 0) == pid ? status : -1;
}

/* Run fn in a child; true when it exited with status 0. */
static inline int t_in_child(int (*fn)(void *), void *arg)
{
	int status = t_child_status(fn, arg);

	return status != -1 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/*
 * Fork while a thread runs loop(&stop), each child running child(): 100 forks, or
 * fewer within 15 s (the harness allows 30; KASAN guests are slow). Returns the forks
 * made, negated if a child failed (a lock inherited locked hangs it until its alarm),
 * or 0 if the thread could not start.
 */
static inline int t_fork_while(void *(*loop)(void *), int (*child)(void *))
{
	volatile int stop = 0;
	struct timespec t0, t;
	pthread_t th;
	int i, ok = 1;

	if (pthread_create(&th, NULL, loop, (void *)&stop))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0, t = t0; i < 100 && ok && t.tv_sec - t0.tv_sec < 15; i++) {
		ok = t_in_child(child, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t);
	}
	stop = 1;
	pthread_join(th, NULL);
	return ok ? i : -i;
}

/*
 * GCC 12's AddressSanitizer takes no allocator lock around fork(): a child can inherit
 * one the looping thread holds and hang in malloc(), which reads as a library deadlock.
 */
#ifdef __SANITIZE_ADDRESS__
#define T_FORK_WHILE_SKIP "AddressSanitizer's allocator is not fork-safe in a threaded process"
#else
#define T_FORK_WHILE_SKIP ((const char *)0)
#endif

/* In a TEST, t_fork_while()'s result: the thread started and every child passed. */
#define T_EXPECT_FORKS_OK(forks)						\
	do {									\
		if (T_FORK_WHILE_SKIP)						\
			SKIP(return, "%s", T_FORK_WHILE_SKIP);			\
		int __forks = (forks);						\
		ASSERT_NE(0, __forks);						\
		EXPECT_LT(0, __forks);						\
		TH_LOG("%d forks", __forks < 0 ? -__forks : __forks);		\
	} while (0)

/*
 * In a private mount namespace (a tmpfs over /sys/kernel/mm), make the marker file
 * at path a FIFO that is open for writing but never written: a library call that
 * reads the marker stays inside the library, holding whatever it holds there, until
 * the returned fd is closed. For a child process, before it starts threads; needs
 * root. The fd, or -1.
 */
static inline int t_blocking_marker(const char *path)
{
	char dir[256], *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash)
		return -1;
	*slash = '\0';
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("mmext-test", "/sys/kernel/mm", "tmpfs", 0, NULL) ||
	    (mkdir(dir, 0755) && errno != EEXIST) || mkfifo(path, 0600))
		return -1;
	return open(path, O_RDWR | O_CLOEXEC);
}

struct t_stuck {
	void (*call)(void);	/* a library call that reads the blocking marker */
	pid_t tid;
	pthread_t th;
};

static inline void *t_stuck_thread(void *arg)
{
	struct t_stuck *s = arg;

	__atomic_store_n(&s->tid, (pid_t)syscall(SYS_gettid), __ATOMIC_RELEASE);
	s->call();
	return NULL;
}

/* Start a thread making s->call and wait until it sleeps in read(): 0, or -1. */
static inline int t_stuck_start(struct t_stuck *s)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	char path[64];
	long nr = -1;
	int i;

	s->tid = 0;
	if (pthread_create(&s->th, NULL, t_stuck_thread, s))
		return -1;
	for (i = 0; i < 500; i++, nanosleep(&pause, NULL)) {
		pid_t tid = __atomic_load_n(&s->tid, __ATOMIC_ACQUIRE);
		FILE *f;

		if (!tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
		f = fopen(path, "r");
		if (!f)
			return -1;
		if (fscanf(f, "%ld", &nr) != 1)
			nr = -1;
		fclose(f);
		if (nr == SYS_read)
			return 0;
	}
	return -1;
}

/* Exit statuses of t_while_stuck()'s process besides 0 (passed) and 1 (failed). */
#define T_NO_STANDIN	90	/* no private mount namespace or tmpfs: SKIP */
#define T_NOT_STUCK	91

/*
 * In a TEST, the wait status of a child that runs it (t_child_status()): -1 fails
 * the test, an exit with T_NO_STANDIN skips it with the reason given, any other
 * status than exit 0 fails it.
 */
#define T_EXPECT_CHILD_OK(status, ...)						\
	do {									\
		int __status = (status);					\
		ASSERT_NE(-1, __status);					\
		if (WIFEXITED(__status) && WEXITSTATUS(__status) == T_NO_STANDIN) \
			SKIP(return, __VA_ARGS__);				\
		EXPECT_TRUE(WIFEXITED(__status) && WEXITSTATUS(__status) == 0)	\
			TH_LOG("status %#x", __status);				\
	} while (0)

/* Exit status of t_as_pid1()'s child when it is not pid 1 after all. */
#define T_NOT_PID1	92

struct t_pid1 {
	int (*fn)(void *);
	void *arg;
};

static inline int t_pid1_main(void *arg)
{
	const struct t_pid1 *p = arg;

	alarm(10);
	return getpid() == 1 ? p->fn(p->arg) : T_NOT_PID1;
}

/*
 * Run fn(arg) in a child that is pid 1 of a new pid namespace: the child's wait
 * status (fn's value is its exit status), -1, or an exit with T_NO_STANDIN when this
 * process may not make one (it needs CAP_SYS_ADMIN). Once per process: its later
 * children are of that namespace, and none can be made once the first has exited. fn
 * calling it in turn makes a child with its parent's pid, 1.
 */
static inline int t_as_pid1(int (*fn)(void *), void *arg)
{
	struct t_pid1 p = { fn, arg };

	if (unshare(CLONE_NEWPID))
		return errno == EPERM ? W_EXITCODE(T_NO_STANDIN, 0) : -1;
	return t_child_status(t_pid1_main, &p);
}

/* The exit status for the wait status of a t_as_pid1() child, for its own parent. */
static inline int t_exit_of(int status)
{
	return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static int (*t_stuck_child)(void);

static inline int t_stuck_child_main(void *arg)
{
	(void)arg;
	alarm(5);	/* a lock inherited locked would hang it */
	return t_stuck_child();
}

struct t_while_stuck {
	const char *marker;	/* a path under /sys/kernel/mm */
	void (*call)(void);
	int (*child)(void);
};

/*
 * Within a 10 s alarm, with w->marker blocking, start s, a thread stuck in w->call()
 * inside the library: the marker's fd, whose closing lets the call go on, else
 * -T_NO_STANDIN or -T_NOT_STUCK.
 */
static inline int t_stuck_on_marker(const struct t_while_stuck *w, struct t_stuck *s)
{
	int fd;

	alarm(10);
	s->call = w->call;
	fd = t_blocking_marker(w->marker);
	if (fd < 0)
		return -T_NO_STANDIN;
	mmext_probe_reset();
	return t_stuck_start(s) ? -T_NOT_STUCK : fd;
}

/*
 * With w->marker blocking, one thread stuck in w->call() inside the library, then
 * in a forked child w->child(), which must return 0 within 5 s. For a process of its
 * own: t_child_status(t_while_stuck, &w). An atfork handler that waits for a lock
 * the stuck thread holds hangs fork() itself, and the alarm ends it.
 */
static inline int t_while_stuck(void *arg)
{
	const struct t_while_stuck *w = arg;
	struct t_stuck s;
	int fd, status;

	t_stuck_child = w->child;
	fd = t_stuck_on_marker(w, &s);
	if (fd < 0)
		return -fd;
	status = t_child_status(t_stuck_child_main, NULL);
	if (status)
		fprintf(stderr, "#      the child's wait status: %#x\n", status);
	/* The stuck call reads end-of-file and returns. */
	close(fd);
	pthread_join(s.th, NULL);
	return status != 0;
}

/*
 * With w->marker blocking, one thread stuck in w->call() inside the library is
 * cancelled there; once it has ended, w->child() runs in this process and must return
 * 0 within the alarm (a lock left held hangs it). For a process of its own:
 * t_child_status(t_cancel_while_stuck, &w).
 */
static inline int t_cancel_while_stuck(void *arg)
{
	const struct t_while_stuck *w = arg;
	struct t_stuck s;
	int fd = t_stuck_on_marker(w, &s);

	if (fd < 0)
		return -fd;
	if (pthread_cancel(s.th))
		return T_NOT_STUCK;
	/* A call that does not act on the request there reads end-of-file and returns. */
	close(fd);
	pthread_join(s.th, NULL);
	/* What it read there, if it went on, is no answer to keep. */
	mmext_probe_reset();
	return w->child();
}

static int (*t_leader_gone_fn)(void);

static inline void *t_leader_gone_thread(void *arg)
{
	char c;
	int i;

	(void)arg;
	/* /proc/self/exe goes with the main thread. */
	for (i = 0; i < 500 && readlink("/proc/self/exe", &c, 1) >= 0; i++)
		usleep(10000);
	syscall(SYS_exit_group, i == 500 ? T_NOT_STUCK : t_leader_gone_fn());
	return NULL;
}

static inline int t_leader_gone_main(void *arg)
{
	pthread_t th;

	(void)arg;
	alarm(10);
	if (pthread_create(&th, NULL, t_leader_gone_thread, NULL))
		return T_NOT_STUCK;
	pthread_exit(NULL);
}

/*
 * Run fn in a child process on a second thread once the main thread has called
 * pthread_exit(): the child's wait status (fn's value is its exit status), or -1.
 */
static inline int t_after_leader_exit(int (*fn)(void))
{
	t_leader_gone_fn = fn;
	return t_child_status(t_leader_gone_main, NULL);
}

/* A pid that is not running: a reaped child's. */
static inline pid_t t_dead_pid(void)
{
	pid_t pid = fork();

	if (!pid)
		_exit(0);
	waitpid(pid, NULL, 0);
	return pid;
}

/*
 * The VmFlags line of the VMA containing addr in /proc/self/smaps into buf; 0, or -1
 * when there is none.
 */
static inline int t_vmflags(const void *addr, char *buf, size_t size)
{
	unsigned long a = (unsigned long)addr, start, end;
	FILE *f = fopen("/proc/self/smaps", "r");
	int in = 0, ret = -1;

	if (!f)
		return -1;
	while (ret && fgets(buf, size, f)) {
		if (sscanf(buf, "%lx-%lx ", &start, &end) == 2 && strchr(buf, ' ') > strchr(buf, '-'))
			in = start <= a && a < end;
		else if (in && !strncmp(buf, "VmFlags:", 8))
			ret = 0;
	}
	fclose(f);
	return ret;
}

/*
 * Directories of 200 bytes under t_long_path_map()'s base: a path of over 10000, longer
 * than PATH_MAX and than the 8 KiB in which the library reads a line of /proc text.
 */
#define T_LONG_DEPTH	50
#define T_LONG_COMP	200

/*
 * Map len bytes of a new file, shared, whose path is longer than PATH_MAX (on tmpfs,
 * /dev/shm, where userfaultfd can write-protect it): the mapping or NULL; its path in
 * path (T_LONG_DEPTH * (T_LONG_COMP + 1) + 64 bytes at least) and the directory under
 * which it lies, for t_long_path_remove(), in base.
 */
static inline char *t_long_path_map(size_t len, char *path, char *base)
{
	char comp[T_LONG_COMP + 1];
	int i, dir, next, fd;
	void *p;

	strcpy(base, "/dev/shm/mmext-long-XXXXXX");
	if (!mkdtemp(base))
		return NULL;
	strcpy(path, base);
	memset(comp, 'd', T_LONG_COMP);
	comp[T_LONG_COMP] = '\0';
	dir = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (i = 0; dir >= 0 && i < T_LONG_DEPTH; i++) {
		next = mkdirat(dir, comp, 0700) ? -1 :
		       openat(dir, comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		close(dir);
		dir = next;
		strcat(strcat(path, "/"), comp);
	}
	if (dir < 0)
		return NULL;
	strcat(path, "/file");
	fd = openat(dir, "file", O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	close(dir);
	if (fd < 0)
		return NULL;
	p = ftruncate(fd, len) ? MAP_FAILED :
	    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}

/* Remove what t_long_path_map() made under base. */
static inline void t_long_path_remove(const char *base)
{
	char comp[T_LONG_COMP + 1];
	int dirs[T_LONG_DEPTH + 1], i, n;

	memset(comp, 'd', T_LONG_COMP);
	comp[T_LONG_COMP] = '\0';
	dirs[0] = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	for (n = 0; n < T_LONG_DEPTH && dirs[n] >= 0; n++)
		dirs[n + 1] = openat(dirs[n], comp, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dirs[n] >= 0)
		unlinkat(dirs[n], "file", 0);
	for (i = n; i >= 0; i--) {
		if (dirs[i] < 0)
			continue;
		if (i)
			unlinkat(dirs[i - 1], comp, AT_REMOVEDIR);
		close(dirs[i]);
	}
	rmdir(base);
}

/*
 * An options struct followed by one byte the library does not know, for the
 * "unknown nonzero tail" tests: declare T_OPTS_TAIL(type) var, then set var.tail.
 */
#define T_OPTS_TAIL(type) struct { struct type o; uint64_t tail; }

#endif /* MMEXT_TEST_HELPERS_H */
