// SPDX-License-Identifier: GPL-2.0
/*
 * A reader of /proc/PID/maps or PROCMAP_QUERY must not keep a file alive after
 * the process unmapped it: once munmap() and close() return, the file is
 * released, so its flock() is gone. Checked while other threads read the maps
 * without pause, on a plain file, on overlayfs and on FUSE passthrough (whose
 * mapped files are backing files, freed without an RCU delay).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/fs.h>
#include <linux/fuse.h>

#include "harness.h"

/* FUSE passthrough came in 6.9: its ABI, for older <linux/fuse.h>. */
#ifndef FUSE_PASSTHROUGH
#define FUSE_PASSTHROUGH	(1ULL << 37)
#define FOPEN_PASSTHROUGH	(1 << 7)
struct fuse_backing_map {
	int32_t fd;
	uint32_t flags;
	uint64_t padding;
};
#define FUSE_DEV_IOC_BACKING_OPEN _IOW(FUSE_DEV_IOC_MAGIC, 1, struct fuse_backing_map)
#define FUSE_DEV_IOC_BACKING_CLOSE _IOW(FUSE_DEV_IOC_MAGIC, 2, uint32_t)
/* The fields 6.9 carved out of the reserved words. */
#define max_stack_depth		unused[0]
#define backing_id		padding
#endif

#define MAPPINGS	32	/* per round: file lines for the readers to cross */
#define ROUNDS		3000
#define ROUND_SECONDS	10	/* at most, under the harness's 30 s: emulated guests are slow */
#define READERS		2

static atomic_bool stop_readers;

/* Reads the whole maps file again and again, or (odd @arg) queries every file vma. */
static void *reader(void *arg)
{
	bool query = (uintptr_t)arg & 1;
	char buf[4096], name[256];
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	while (!atomic_load(&stop_readers)) {
		if (!query) {
			if (lseek(fd, 0, SEEK_SET) < 0)
				break;
			while (read(fd, buf, sizeof(buf)) > 0)
				;
			continue;
		}
		for (unsigned long addr = 0;;) {
			struct procmap_query q = {
				.size = sizeof(q),
				.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA |
					       PROCMAP_QUERY_FILE_BACKED_VMA,
				.query_addr = addr,
				.vma_name_addr = (unsigned long)name,
				.vma_name_size = sizeof(name),
			};

			if (ioctl(fd, PROCMAP_QUERY, &q))
				break;
			addr = q.vma_end;
		}
	}
	close(fd);
	return NULL;
}

/*
 * Whether a file is open for writing on @path's inode: a read lease is refused
 * then. This sees the backing file that overlayfs or FUSE passthrough opens on
 * that inode under a file opened read-write, which is what their mappings hold:
 * flock() on the file the process opened cannot tell whether it is gone.
 */
static int open_for_write(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fcntl(fd, F_SETLEASE, F_RDLCK))
		ret = errno == EAGAIN ? 1 : -errno;
	close(fd);	/* and the lease with it */
	return ret;
}

/*
 * Rounds of: open @path, flock it, map it MAPPINGS times, close, unmap all,
 * then try the lock from a new open file and, given the @backing file that the
 * mappings map, check that nothing has it open for writing any more. Returns
 * the rounds in which the file was still in use, or -errno.
 */
static int rounds_done;

static int unmap_rounds(const char *path, const char *backing, int rounds)
{
	time_t end = time(NULL) + ROUND_SECONDS;
	pthread_t tid[READERS];
	long psz = sysconf(_SC_PAGESIZE);
	void *map[MAPPINGS];
	int held = 0, err = 0;

	atomic_store(&stop_readers, false);
	for (uintptr_t i = 0; i < READERS; i++)
		if (pthread_create(&tid[i], NULL, reader, (void *)i))
			return -EAGAIN;
	for (rounds_done = 0; rounds_done < rounds && !err && time(NULL) < end; rounds_done++) {
		int fd = open(path, O_RDWR | O_CLOEXEC), fd2, busy = 0;

		if (fd < 0) {
			err = -errno;
			break;
		}
		/* Blocking: after a round that found the lock held, wait for it. */
		if (flock(fd, LOCK_EX)) {
			err = -errno;
			close(fd);
			break;
		}
		for (int i = 0; i < MAPPINGS; i++) {
			/* PROT_READ vs PROT_WRITE alternate: no two merge */
			map[i] = mmap(NULL, psz, i & 1 ? PROT_READ : PROT_READ | PROT_WRITE,
				      MAP_SHARED, fd, 0);
			if (map[i] == MAP_FAILED)
				err = -errno;
		}
		close(fd);
		for (int i = 0; i < MAPPINGS; i++)
			if (map[i] != MAP_FAILED)
				munmap(map[i], psz);
		if (err)
			break;
		fd2 = open(path, O_RDWR | O_CLOEXEC);
		if (fd2 < 0) {
			err = -errno;
			break;
		}
		if (flock(fd2, LOCK_EX | LOCK_NB)) {
			if (errno != EWOULDBLOCK)
				err = -errno;
			busy = 1;
		}
		close(fd2);
		if (backing && !busy && !err) {
			busy = open_for_write(backing);
			if (busy < 0)
				err = busy;
		}
		held += busy > 0;
	}
	atomic_store(&stop_readers, true);
	for (int i = 0; i < READERS; i++)
		pthread_join(tid[i], NULL);
	printf("# %s: %d rounds, file still in use after %d\n", path, rounds_done, held);
	return err ? err : held;
}

static int make_file(const char *path)
{
	long psz = sysconf(_SC_PAGESIZE);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, psz)) {
		close(fd);
		return -errno;
	}
	close(fd);
	return 0;
}

TEST(munmap_releases_file)
{
	char dir[] = "/tmp/maps_release.XXXXXX", path[64];
	int held;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/f", dir);
	ASSERT_EQ(0, make_file(path));
	held = unmap_rounds(path, NULL, ROUNDS);
	unlink(path);
	rmdir(dir);
	ASSERT_LE(0, held) TH_LOG("round failed: %s", strerror(-held));
	EXPECT_EQ(0, held)
		TH_LOG("flock still held after munmap()+close() in %d of %d rounds",
		       held, rounds_done);
}

/*
 * The same on overlayfs, in a child with a mount namespace of its own
 * (a user namespace too when not privileged). Exit status: 0 pass, 1 lock held,
 * 2 setup failed (errno in the message), 4 overlayfs unavailable.
 */
static int overlay_child(const char *dir)
{
	char opts[1024], path[600], upper[600], sub[4][300];
	const char *names[] = { "lower", "upper", "work", "merged" };
	int held;

	if (unshare(CLONE_NEWNS) && (errno != EPERM ||
				     unshare(CLONE_NEWUSER | CLONE_NEWNS)))
		return 4;
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, NULL))
		return 4;
	for (int i = 0; i < 4; i++) {
		snprintf(sub[i], sizeof(sub[i]), "%s/%s", dir, names[i]);
		if (mkdir(sub[i], 0700))
			return 2;
	}
	snprintf(path, sizeof(path), "%s/f", sub[0]);
	if (make_file(path))
		return 2;
	snprintf(opts, sizeof(opts), "lowerdir=%s,upperdir=%s,workdir=%s",
		 sub[0], sub[1], sub[2]);
	if (mount("overlay", sub[3], "overlay", 0, opts)) {
		fprintf(stderr, "# mount overlay: %s\n", strerror(errno));
		return 4;
	}
	/* opened read-write: copied up, mapped through the overlay's backing file */
	snprintf(path, sizeof(path), "%s/f", sub[3]);
	snprintf(upper, sizeof(upper), "%s/f", sub[1]);
	held = unmap_rounds(path, upper, ROUNDS);
	if (held < 0) {
		fprintf(stderr, "# round failed: %s\n", strerror(-held));
		return 2;
	}
	if (held)
		fprintf(stderr, "# flock still held after munmap()+close() in %d of %d rounds\n",
			held, rounds_done);
	return held ? 1 : 0;
}

TEST(overlayfs_munmap_releases_file)
{
	char dir[] = "/tmp/maps_release.XXXXXX";
	int status;
	pid_t pid;

	ASSERT_NE(NULL, mkdtemp(dir));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(overlay_child(dir));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	rmdir(dir);
	ASSERT_TRUE(WIFEXITED(status));
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "cannot mount overlayfs here");
	ASSERT_NE(2, WEXITSTATUS(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * FUSE passthrough: a server of our own, in a process of its own, serves one
 * regular file "f" whose opens pass through to a file on tmpfs, so mapping "f"
 * maps a backing file. Without FUSE_FLOCK_LOCKS, flock() stays in the kernel.
 * Not a thread of the test: a client killed while its request is with the
 * server waits for the answer, so the server must be able to die on its own.
 */
#define FUSE_FILE_ID	2
#define FUSE_TIMEOUT	25	/* s: under the harness's 30, so a stall shows as ours */

static const char fuse_data[] = "maps_release backing file\n";

static struct {
	int dev;		/* /dev/fuse */
	int backing;		/* the tmpfs file, read-only: not a writer itself */
	int notes;		/* pipe from the server to the test */
	bool passthrough;	/* granted at FUSE_INIT */
	int backing_id, opens;	/* registered while "f" has open files */
	int note;		/* 1: why[] says what failed, 2: why passthrough is refused */
	char why[200];
} fsrv;

/* Server side: the first note only, sent before the answer that fails. */
static void fuse_note(int kind, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (fsrv.note)
		return;
	fsrv.note = kind;
	n = snprintf(fsrv.why, sizeof(fsrv.why), "%d ", kind);
	va_start(ap, fmt);
	vsnprintf(fsrv.why + n, sizeof(fsrv.why) - n, fmt, ap);
	va_end(ap);
	if (write(fsrv.notes, fsrv.why, strlen(fsrv.why)) < 0)
		fprintf(stderr, "# FUSE server: %s\n", fsrv.why + 2);
}

/* Test side: the server's note, if it sent one; its kind, or 0. */
static int fuse_note_read(void)
{
	ssize_t n;

	if (fsrv.note)
		return fsrv.note;
	n = read(fsrv.notes, fsrv.why, sizeof(fsrv.why) - 1);
	if (n < 3)
		return 0;
	fsrv.why[n] = '\0';
	fsrv.note = fsrv.why[0] - '0';
	memmove(fsrv.why, fsrv.why + 2, n - 1);
	return fsrv.note;
}

static int fuse_reply(uint64_t unique, int error, const void *arg, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + len, .error = error, .unique = unique,
	};
	struct iovec iov[] = { { &out, sizeof(out) }, { (void *)arg, len } };

	/* ENOENT: the request was interrupted meanwhile */
	if (writev(fsrv.dev, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static void fuse_attr(uint64_t nodeid, struct fuse_attr *attr)
{
	bool root = nodeid == FUSE_ROOT_ID;

	*attr = (struct fuse_attr){
		.ino = nodeid,
		.size = root ? 0 : sysconf(_SC_PAGESIZE),
		.mode = root ? S_IFDIR | 0755 : S_IFREG | 0600,
		.nlink = root ? 2 : 1,
		.blksize = 4096,
	};
}

static int fuse_init(struct fuse_in_header *in, const struct fuse_init_in *arg)
{
	struct fuse_init_out out = {
		.major = FUSE_KERNEL_VERSION,
		.minor = FUSE_KERNEL_MINOR_VERSION,
		.max_readahead = arg->max_readahead,
		.max_background = 16,
		.congestion_threshold = 12,
		.max_write = 4096,
		.time_gran = 1,
	};
	uint64_t offered = arg->flags;

	if (arg->major != FUSE_KERNEL_VERSION) {
		fuse_note(1, "FUSE_INIT: protocol %u", arg->major);
		return fuse_reply(in->unique, -EPROTO, NULL, 0);
	}
	if (arg->flags & FUSE_INIT_EXT)
		offered |= (uint64_t)arg->flags2 << 32;
	if (offered & FUSE_PASSTHROUGH) {
		/* flags from bit 32 on go in flags2, which FUSE_INIT_EXT announces */
		out.flags = FUSE_INIT_EXT;
		out.flags2 = FUSE_PASSTHROUGH >> 32;
		out.max_stack_depth = 1;	/* backing files on tmpfs, not stacked */
		fsrv.passthrough = true;
	} else {
		fuse_note(2, "the kernel offers no FUSE_PASSTHROUGH (Linux 6.9+, %s)",
			  "CONFIG_FUSE_PASSTHROUGH");
	}
	return fuse_reply(in->unique, 0, &out, sizeof(out));
}

static int fuse_open(struct fuse_in_header *in)
{
	struct fuse_open_out out = { .open_flags = FOPEN_PASSTHROUGH };

	if (in->nodeid != FUSE_FILE_ID)
		return fuse_reply(in->unique, -ENOENT, NULL, 0);
	if (!fsrv.passthrough)
		return fuse_reply(in->unique, -EOPNOTSUPP, NULL, 0);
	/* One backing id for all open files: an inode passes through to one file. */
	if (!fsrv.opens) {
		struct fuse_backing_map map = { .fd = fsrv.backing };
		int id = ioctl(fsrv.dev, FUSE_DEV_IOC_BACKING_OPEN, &map), err = errno;
		bool perm = err == EPERM;

		if (id < 0) {
			fuse_note(perm || err == EOPNOTSUPP || err == ENOTTY ? 2 : 1,
				  "FUSE_DEV_IOC_BACKING_OPEN: %s%s", strerror(err),
				  perm ? " (needs CAP_SYS_ADMIN in the initial namespace)" : "");
			return fuse_reply(in->unique, -err, NULL, 0);
		}
		fsrv.backing_id = id;
	}
	fsrv.opens++;
	out.backing_id = fsrv.backing_id;
	return fuse_reply(in->unique, 0, &out, sizeof(out));
}

/* Answers one request: 0 to go on, 1 when done, or -errno. */
static int fuse_request(struct fuse_in_header *in, void *arg)
{
	switch (in->opcode) {
	case FUSE_INIT:
		return fuse_init(in, arg);
	case FUSE_LOOKUP: {
		struct fuse_entry_out out = {
			.nodeid = FUSE_FILE_ID, .generation = 1,
			.entry_valid = 3600, .attr_valid = 3600,
		};

		if (in->nodeid != FUSE_ROOT_ID || strcmp(arg, "f"))
			return fuse_reply(in->unique, -ENOENT, NULL, 0);
		fuse_attr(FUSE_FILE_ID, &out.attr);
		return fuse_reply(in->unique, 0, &out, sizeof(out));
	}
	case FUSE_GETATTR: {
		struct fuse_attr_out out = { .attr_valid = 3600 };

		if (in->nodeid != FUSE_ROOT_ID && in->nodeid != FUSE_FILE_ID)
			return fuse_reply(in->unique, -ENOENT, NULL, 0);
		fuse_attr(in->nodeid, &out.attr);
		return fuse_reply(in->unique, 0, &out, sizeof(out));
	}
	case FUSE_OPEN:
		return fuse_open(in);
	case FUSE_RELEASE:
		if (in->nodeid == FUSE_FILE_ID && fsrv.opens && !--fsrv.opens)
			ioctl(fsrv.dev, FUSE_DEV_IOC_BACKING_CLOSE, &fsrv.backing_id);
		return fuse_reply(in->unique, 0, NULL, 0);
	case FUSE_FLUSH:
		return fuse_reply(in->unique, 0, NULL, 0);
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		return 0;	/* no reply expected */
	case FUSE_DESTROY:
		fuse_reply(in->unique, 0, NULL, 0);
		return 1;
	default:
		return fuse_reply(in->unique, -ENOSYS, NULL, 0);
	}
}

/* The server process: serves until unmounted or killed. */
static int fuse_serve(void)
{
	uint64_t buf[FUSE_MIN_READ_BUFFER / sizeof(uint64_t)];
	struct fuse_in_header *in = (void *)buf;
	int ret = 0;

	while (!ret) {
		ssize_t n = read(fsrv.dev, buf, sizeof(buf));

		if (n < 0 && (errno == EINTR || errno == ENOENT))
			continue;
		if (n < 0) {
			if (errno == ENODEV)	/* unmounted */
				return 0;
			fuse_note(1, "read /dev/fuse: %s", strerror(errno));
			return 2;
		}
		if (n < sizeof(*in) || in->len != n) {
			fuse_note(1, "short FUSE request (%zd bytes)", n);
			return 2;
		}
		ret = fuse_request(in, in + 1);
		if (ret < 0)
			fuse_note(1, "reply to FUSE request %u: %s", in->opcode, strerror(-ret));
	}
	return ret < 0 ? 2 : 0;
}

/* Writes @fmt for the parent to report and returns @ret. */
static int tell(int msg, int ret, const char *fmt, ...)
{
	char buf[400];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (write(msg, buf, n < sizeof(buf) ? n : sizeof(buf) - 1) < 0)
		fprintf(stderr, "# %s\n", buf);
	return ret;
}

/* @what failed with errno: a setup failure, or a SKIP if passthrough was refused. */
static int fuse_failed(int msg, const char *what)
{
	int err = errno, note = fuse_note_read();

	if (note == 2)
		return tell(msg, 4, "%s", fsrv.why);
	return tell(msg, 2, "%s: %s%s%s", what, strerror(err),
		    note ? "; server: " : "", note ? fsrv.why : "");
}

/*
 * Whether opening "f" (@path) passes through to @real: the mapping shows the
 * FUSE path, holds a file open for writing on @real until munmap() and reads
 * @real's bytes (the server answers no READ).
 */
static int fuse_check(const char *path, const char *real, int msg)
{
	long psz = sysconf(_SC_PAGESIZE);
	char name[256] = "";
	struct procmap_query q = {
		.size = sizeof(q),
		.vma_name_addr = (unsigned long)name,
		.vma_name_size = sizeof(name),
	};
	int fd = open(path, O_RDWR | O_CLOEXEC), busy, gone, same = 0;
	void *map;

	if (fd < 0)
		return fuse_failed(msg, "open through FUSE");
	map = mmap(NULL, psz, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return fuse_failed(msg, "mmap through FUSE");
	q.query_addr = (unsigned long)map;
	fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0 || ioctl(fd, PROCMAP_QUERY, &q))
		name[0] = '\0';
	if (fd >= 0)
		close(fd);
	busy = open_for_write(real);
	/* Only a backing file can answer a fault: the server has no READ. */
	if (busy == 1)
		same = !memcmp(map, fuse_data, sizeof(fuse_data) - 1);
	munmap(map, psz);
	gone = open_for_write(real);
	if (busy < 0 || gone < 0)
		return tell(msg, 2, "lease on %s: %s", real, strerror(-(busy < 0 ? busy : gone)));
	if (strcmp(name, path))
		return tell(msg, 2, "the mapping shows as \"%s\", not %s", name, path);
	if (busy != 1 || gone)
		return tell(msg, 2, "%s open for writing while mapped: %s, after munmap(): %s",
			    real, busy ? "yes" : "no (no passthrough)", gone ? "yes" : "no");
	if (!same)
		return tell(msg, 2, "the mapping does not read %s's bytes", real);
	return 0;
}

/*
 * The same on FUSE passthrough, in a child with a mount namespace of its own.
 * Exit status: 0 pass, 1 file still in use, 2 setup failed, 4 no passthrough
 * here; why in @msg.
 */
static int fuse_child(const char *dir, int msg)
{
	char real[300], mnt[300], path[310], opts[128];
	int fd, notes[2], ret, held;
	pid_t self = getpid(), srv;

	alarm(FUSE_TIMEOUT);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (unshare(CLONE_NEWNS) || mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("tmpfs", dir, "tmpfs", 0, NULL))
		return tell(msg, 4, "mount namespace and tmpfs: %s", strerror(errno));
	snprintf(real, sizeof(real), "%s/real", dir);
	snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
	snprintf(path, sizeof(path), "%s/f", mnt);
	if (mkdir(mnt, 0700) || make_file(real))
		return tell(msg, 2, "setup in %s failed", dir);
	fd = open(real, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, fuse_data, sizeof(fuse_data) - 1, 0) != sizeof(fuse_data) - 1)
		return tell(msg, 2, "write %s: %s", real, strerror(errno));
	close(fd);
	fsrv.backing = open(real, O_RDONLY | O_CLOEXEC);
	if (fsrv.backing < 0)
		return tell(msg, 2, "open %s: %s", real, strerror(errno));
	if (pipe2(notes, O_CLOEXEC))
		return tell(msg, 2, "pipe: %s", strerror(errno));
	fsrv.dev = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fsrv.dev < 0)
		return tell(msg, 4, "/dev/fuse: %s", strerror(errno));
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0", fsrv.dev);
	if (mount("fuse", mnt, "fuse", MS_NOSUID | MS_NODEV, opts))
		return tell(msg, 4, "mount fuse: %s", strerror(errno));
	srv = fork();
	if (!srv) {
		/* Bounded on its own: its death aborts the connection, freeing the test. */
		alarm(FUSE_TIMEOUT);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != self)
			_exit(0);
		close(notes[0]);
		close(msg);
		fsrv.notes = notes[1];
		_exit(fuse_serve());
	}
	/* The server holds the only /dev/fuse: if it dies, requests fail, not hang. */
	close(fsrv.dev);
	close(fsrv.backing);
	close(notes[1]);
	fsrv.notes = notes[0];
	if (srv < 0) {
		umount2(mnt, MNT_DETACH);
		return tell(msg, 2, "fork: %s", strerror(errno));
	}
	fcntl(fsrv.notes, F_SETFL, O_NONBLOCK);
	ret = fuse_check(path, real, msg);
	if (!ret) {
		held = unmap_rounds(path, real, ROUNDS);
		if (held < 0)
			ret = tell(msg, 2, "round failed: %s%s%s", strerror(-held),
				   fuse_note_read() ? "; server: " : "",
				   fuse_note_read() ? fsrv.why : "");
		else if (held)
			ret = tell(msg, 1, "flock still held or backing file still open "
				   "after munmap()+close() in %d of %d rounds", held, rounds_done);
	}
	umount2(mnt, MNT_DETACH);
	kill(srv, SIGKILL);
	waitpid(srv, NULL, 0);
	return ret;
}

TEST(fuse_passthrough_munmap_releases_file)
{
	char dir[] = "/tmp/maps_release.XXXXXX", why[400] = "";
	int status, msg[2];
	ssize_t n;
	pid_t pid;

	/* FUSE_DEV_IOC_BACKING_OPEN wants CAP_SYS_ADMIN in the initial namespace. */
	if (geteuid())
		SKIP(return, "FUSE passthrough needs root");
	ASSERT_NE(NULL, mkdtemp(dir));
	ASSERT_EQ(0, pipe2(msg, O_CLOEXEC));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(msg[0]);
		_exit(fuse_child(dir, msg[1]));
	}
	close(msg[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	n = read(msg[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(msg[0]);
	rmdir(dir);
	ASSERT_TRUE(WIFEXITED(status))
		TH_LOG("test child killed by signal %d%s", WTERMSIG(status),
		       WTERMSIG(status) == SIGALRM ? " (timed out)" : "");
	if (WEXITSTATUS(status) == 4)
		SKIP(return, "%s", why);
	ASSERT_NE(2, WEXITSTATUS(status)) TH_LOG("%s", why);
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("%s", why);
}

TEST_HARNESS_MAIN
