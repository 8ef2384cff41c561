// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers for cli.sh that must work in the guest, where only busybox and bash exist:
 *
 *   cli_helper json [-n KEY]... [-l KEY] < FILE
 *       Check that stdin is one JSON value with no duplicate keys in any object.
 *       -n KEY: every value of a member KEY is a number, and there is at least one.
 *       -l KEY: print the element count of the first array-valued member KEY.
 *       Exit 0 when all holds, else 1 with the reason on stderr.
 *   cli_helper asuser UID CMD [ARGS...]
 *       Drop to UID (and gid UID, no groups) and exec CMD; exit 77 when not possible.
 *   cli_helper midexit NVMAS CMD [ARGS...]
 *       Start a target with NVMAS more VMAs, run CMD with each argument "PID" replaced
 *       by the target's pid and stdout a one-page pipe; once the pipe is full (CMD
 *       blocked in the middle of its output), kill the target, leaving it a zombie
 *       until CMD is done, and pass CMD's output on. Exits as CMD did (128 + N for
 *       signal N).
 *   cli_helper zombie
 *       Print the pid of a child that has exited and is never reaped, then wait to be
 *       killed.
 *   cli_helper hold FILE...
 *       Map the first page of each FILE, print the address of each (hex, one per line)
 *       and then wait to be killed.
 *   cli_helper dirty NPAGES
 *       Map NPAGES anonymous pages, print their address (hex), then write every one
 *       of them every 10 ms until killed.
 *   cli_helper closedpipe CMD [ARGS...]
 *       Run CMD with stdout a pipe whose reader has gone and SIGPIPE at its default, as
 *       a shell does; exits as CMD did (128 + N for signal N).
 *   cli_helper cowpte
 *       Print "on N shared S": N is what prctl(PR_COW_PTE_GET) says ("-" without the
 *       feature), S is 1 when a child of the helper shares the page tables of 16 MiB
 *       it filled (its VmPTE is below the helper's by the tables' 32 KiB), else 0.
 *   cli_helper reuse FILE FIRST SECOND CMD [ARGS...]
 *       In a new PID and mount namespace with its own /proc, start a target that holds
 *       FIRST (as hold does) with pid 300 and run CMD traced, each argument "PID"
 *       replaced by 300. When CMD opens the target's FILE (/proc/300/FILE, or FILE
 *       relative to a descriptor of /proc/300), kill and reap the target and start one
 *       holding SECOND with pid 300 before the open goes on. Exits as CMD did; 3 when
 *       CMD never opened FILE, 77 without namespaces, clone3()'s set_tid or ptrace.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../markers.h"

#define MAX_KEYS 16
#define MAX_DEPTH 64
#define MAX_MEMBERS 256	/* keys remembered per object for the duplicate check */

static const char *p, *err;
static const char *num_keys[MAX_KEYS];
static int n_num_keys, num_seen[MAX_KEYS];
static const char *len_key;
static long len_result = -1;

static int fail(const char *why)
{
	if (!err)
		err = why;
	return -1;
}

static void ws(void)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
}

/* A string; *s and *n receive the raw bytes between the quotes. */
static int string(const char **s, size_t *n)
{
	if (*p != '"')
		return fail("string expected");
	*s = ++p;
	while (*p != '"') {
		if ((unsigned char)*p < 0x20)
			return fail("raw control byte in a string");
		if (*p == '\\') {
			p++;
			if (*p == 'u') {
				for (int i = 1; i <= 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						return fail("bad \\u escape");
				p += 4;
			} else if (!strchr("\"\\/bfnrt", *p)) {
				return fail("bad escape");
			}
		}
		p++;
	}
	*n = p - *s;
	p++;
	return 0;
}

static int number(void)
{
	const char *s = p;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return fail("bad number");
	if (*p == '0' && isdigit((unsigned char)p[1]))
		return fail("leading zero");
	while (isdigit((unsigned char)*p))
		p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return fail("bad fraction");
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return fail("bad exponent");
		while (isdigit((unsigned char)*p))
			p++;
	}
	return p > s ? 0 : fail("bad number");
}

static int value(int depth, long *elems);

static int object(int depth)
{
	const char *keys[MAX_MEMBERS];
	size_t lens[MAX_MEMBERS];
	int n = 0;

	p++;
	ws();
	if (*p == '}')
		return p++, 0;
	for (;;) {
		const char *k;
		size_t kl;
		long elems = -1;
		int i;

		ws();
		if (string(&k, &kl))
			return -1;
		for (i = 0; i < n && i < MAX_MEMBERS; i++)
			if (lens[i] == kl && !memcmp(keys[i], k, kl))
				return fail("duplicate key in an object");
		if (n < MAX_MEMBERS) {
			keys[n] = k;
			lens[n] = kl;
		}
		n++;
		ws();
		if (*p++ != ':')
			return fail("':' expected");
		ws();
		for (i = 0; i < n_num_keys; i++) {
			if (strlen(num_keys[i]) == kl && !memcmp(num_keys[i], k, kl)) {
				if (*p != '-' && !isdigit((unsigned char)*p))
					return fail("a -n key has a value that is not a number");
				num_seen[i]++;
			}
		}
		if (value(depth + 1, &elems))
			return -1;
		if (len_key && len_result < 0 && elems >= 0 && strlen(len_key) == kl &&
		    !memcmp(len_key, k, kl))
			len_result = elems;
		ws();
		if (*p == '}')
			return p++, 0;
		if (*p++ != ',')
			return fail("',' or '}' expected");
	}
}

static int array(int depth, long *elems)
{
	long n = 0;

	p++;
	ws();
	if (*p == ']') {
		p++;
		*elems = 0;
		return 0;
	}
	for (;;) {
		ws();
		if (value(depth + 1, NULL))
			return -1;
		n++;
		ws();
		if (*p == ']') {
			p++;
			*elems = n;
			return 0;
		}
		if (*p++ != ',')
			return fail("',' or ']' expected");
	}
}

static int value(int depth, long *elems)
{
	const char *s;
	size_t n;
	long dummy;

	if (depth > MAX_DEPTH)
		return fail("nested too deeply");
	ws();
	switch (*p) {
	case '{': return object(depth);
	case '[': return array(depth, elems ? elems : &dummy);
	case '"': return string(&s, &n);
	case 't': return strncmp(p, "true", 4) ? fail("bad literal") : (p += 4, 0);
	case 'f': return strncmp(p, "false", 5) ? fail("bad literal") : (p += 5, 0);
	case 'n': return strncmp(p, "null", 4) ? fail("bad literal") : (p += 4, 0);
	default: return number();
	}
}

static int json_main(int argc, char **argv)
{
	size_t cap = 1 << 16, len = 0, r;
	char *buf = malloc(cap);
	int i, c;

	while ((c = getopt(argc, argv, "n:l:")) != -1) {
		if (c == 'n' && n_num_keys < MAX_KEYS)
			num_keys[n_num_keys++] = optarg;
		else if (c == 'l')
			len_key = optarg;
		else
			return 2;
	}
	while (buf && (r = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
		len += r;
		if (len + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	if (!buf)
		return 2;
	buf[len] = '\0';
	if (strlen(buf) != len) {
		fprintf(stderr, "json: NUL byte in input\n");
		return 1;
	}
	p = buf;
	if (!value(0, NULL)) {
		ws();
		if (*p)
			fail("trailing bytes after the value");
	}
	for (i = 0; !err && i < n_num_keys; i++)
		if (!num_seen[i])
			err = "a -n key never occurs";
	if (!err && len_key && len_result < 0)
		err = "the -l key is not an array member";
	if (err) {
		fprintf(stderr, "json: %s at byte %ld\n", err, (long)(p - buf));
		return 1;
	}
	if (len_key)
		printf("%ld\n", len_result);
	return 0;
}

static int asuser_main(int argc, char **argv)
{
	uid_t uid;

	if (argc < 3)
		return 2;
	uid = atoi(argv[1]);
	if (setgroups(0, NULL) || setgid(uid) || setuid(uid)) {
		perror("asuser: dropping privileges");
		return 77;
	}
	execv(argv[2], argv + 2);
	perror("asuser: exec");
	return 77;
}

static int exit_status(int status)
{
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int midexit_main(int argc, char **argv)
{
	long nvmas, psz = sysconf(_SC_PAGESIZE), i, full = 0;
	int ready[2], out[2], status;
	char pidbuf[16], c, buf[65536];
	pid_t target, cmd;
	siginfo_t info;
	ssize_t n;

	if (argc < 3 || pipe(ready) || pipe(out))
		return 2;
	nvmas = atol(argv[1]);
	target = fork();
	if (target == 0) {
		/* Every other page readable: no two neighbours merge into one VMA. */
		char *p = mmap(NULL, nvmas * psz, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		for (i = 0; p != MAP_FAILED && i < nvmas; i += 2)
			mprotect(p + i * psz, psz, PROT_READ);
		if (write(ready[1], "r", 1) != 1)
			_exit(1);
		for (;;)
			pause();
	}
	if (target < 0 || read(ready[0], &c, 1) != 1)
		return 2;
	snprintf(pidbuf, sizeof(pidbuf), "%d", (int)target);
	for (i = 3; i < argc; i++)
		if (!strcmp(argv[i], "PID"))
			argv[i] = pidbuf;
	fcntl(out[1], F_SETPIPE_SZ, 4096);
	cmd = fork();
	if (cmd == 0) {
		dup2(out[1], 1);
		execv(argv[2], argv + 2);
		_exit(127);
	}
	close(out[1]);
	/* Full pipe, then a moment for CMD to block writing more. */
	for (i = 0; i < 1000 && waitpid(cmd, &status, WNOHANG) == 0; i++) {
		int queued = 0;

		if (!ioctl(out[0], FIONREAD, &queued) && queued >= 4096 && ++full > 10)
			break;
		usleep(10000);
	}
	/* A zombie, not reaped: its maps then end early without an error. */
	kill(target, SIGKILL);
	waitid(P_PID, target, &info, WEXITED | WNOWAIT);
	while ((n = read(out[0], buf, sizeof(buf))) > 0)
		fwrite(buf, 1, n, stdout);
	fflush(stdout);
	waitpid(target, NULL, 0);
	if (waitpid(cmd, &status, 0) != cmd)
		return 2;
	return exit_status(status);
}

static int zombie_main(void)
{
	pid_t child = fork();

	if (child == 0)
		_exit(0);
	printf("%d\n", (int)child);
	fflush(stdout);
	for (;;)
		pause();
}

static int dirty_main(int argc, char **argv)
{
	long psz = sysconf(_SC_PAGESIZE), n = argc > 1 ? atol(argv[1]) : 0, i, k;
	char *p = n > 0 ? mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) : MAP_FAILED;

	if (p == MAP_FAILED) {
		fprintf(stderr, "dirty: cannot map %ld pages\n", n);
		return 1;
	}
	printf("%lx\n", (unsigned long)p);
	fflush(stdout);
	for (k = 0;; k++) {
		for (i = 0; i < n; i++)
			((volatile char *)p)[i * psz] = (char)k;
		usleep(10000);
	}
}

static int hold_main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY);
		void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 1, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p == MAP_FAILED) {
			perror(argv[i]);
			return 1;
		}
		close(fd);
		printf("%lx\n", (unsigned long)p);
	}
	fflush(stdout);
	for (;;)
		pause();
}

static int closedpipe_main(int argc, char **argv)
{
	int fds[2], status;
	pid_t cmd;

	if (argc < 2 || pipe(fds))
		return 2;
	close(fds[0]);
	cmd = fork();
	if (cmd == 0) {
		signal(SIGPIPE, SIG_DFL);
		dup2(fds[1], 1);
		execv(argv[1], argv + 1);
		_exit(127);
	}
	close(fds[1]);
	if (cmd < 0 || waitpid(cmd, &status, 0) != cmd)
		return 2;
	return exit_status(status);
}

/* "VmPTE:" of /proc/PID/status in kB, -1 if absent. */
static long vmpte_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmPTE:", 6))
			kb = atol(line + 6);
	fclose(f);
	return kb;
}

static int cowpte_main(void)
{
	const unsigned long pmd = 2UL << 20, len = 8 * pmd;
	long opt = t_cow_pte_opt(), on = -1;
	int status, shared;
	char *raw, *a;
	pid_t child;

	if (opt >= 0)
		on = prctl(opt, 2, 0, 0, 0);
	/* 8 whole PTE tables of 4 KiB pages. */
	raw = mmap(NULL, len + pmd, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (raw == MAP_FAILED)
		return 1;
	a = (char *)(((unsigned long)raw + pmd - 1) & ~(pmd - 1));
	madvise(a, len, MADV_NOHUGEPAGE);
	memset(a, 1, len);
	child = fork();
	if (child == 0) {
		long mine = vmpte_kb(getpid()), parent = vmpte_kb(getppid());

		_exit(mine >= 0 && parent >= 0 && mine <= parent - 32 ? 0 : 1);
	}
	if (child < 0 || waitpid(child, &status, 0) != child || !WIFEXITED(status))
		return 1;
	shared = WEXITSTATUS(status) == 0;
	if (on < 0)
		printf("on - shared %d\n", shared);
	else
		printf("on %ld shared %d\n", on, shared);
	return 0;
}

enum { REUSE_PID = 300 };

/* clone3()'s arguments up to set_tid (Linux 5.5), which older headers lack. */
struct clone3_args {
	uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
	uint64_t set_tid, set_tid_size;
};

/* "cli_helper hold FILE" as pid REUSE_PID; its pid once FILE is mapped, else -1. */
static pid_t reuse_target(const char *self, const char *file)
{
	pid_t want = REUSE_PID, pid;
	struct clone3_args a = { .exit_signal = SIGCHLD, .set_tid = (uintptr_t)&want,
				 .set_tid_size = 1 };
	int fds[2], ready = 0;
	char c;

	if (pipe(fds))
		return -1;
	pid = syscall(SYS_clone3, &a, sizeof(a));
	if (pid == 0) {
		char *args[] = { (char *)self, "hold", (char *)file, NULL };

		dup2(fds[1], 1);
		execv("/proc/self/exe", args);
		_exit(127);
	}
	close(fds[1]);
	/* hold prints the mapping's address once it has it. */
	while (pid > 0 && read(fds[0], &c, 1) == 1)
		if (c == '\n') {
			ready = 1;
			break;
		}
	close(fds[0]);
	if (pid > 0 && !ready) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Whether the openat() cmd is entering opens FILE of the target. */
static int opens_target_file(pid_t cmd, const struct __ptrace_syscall_info *si, const char *file)
{
	char path[256], want[64], fdlink[64], link[64];
	struct iovec local = { path, sizeof(path) - 1 };
	struct iovec remote = { (void *)(uintptr_t)si->entry.args[1], sizeof(path) - 1 };
	int dirfd = (int)si->entry.args[0];
	ssize_t n = process_vm_readv(cmd, &local, 1, &remote, 1, 0);

	if (n <= 0)
		return 0;
	path[n] = '\0';
	snprintf(want, sizeof(want), "/proc/%d/%s", REUSE_PID, file);
	if (!strcmp(path, want))
		return 1;
	if (dirfd == AT_FDCWD || strcmp(path, file))
		return 0;
	snprintf(fdlink, sizeof(fdlink), "/proc/%d/fd/%d", (int)cmd, dirfd);
	n = readlink(fdlink, link, sizeof(link) - 1);
	link[n > 0 ? n : 0] = '\0';
	snprintf(want, sizeof(want), "/proc/%d", REUSE_PID);
	return !strcmp(link, want);
}

/* The init of the namespace: the first target, then CMD under ptrace until the swap. */
static int reuse_init(char **argv)
{
	const char *file = argv[1];
	char pidbuf[16], self[4096];
	pid_t first, second = -1, cmd;
	int i, status, sig = 0;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n <= 0)
		return 2;
	self[n] = '\0';
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL))
		return 77;
	first = reuse_target(self, argv[2]);
	if (first != REUSE_PID)
		return first < 0 && (errno == EPERM || errno == ENOSYS) ? 77 : 2;
	snprintf(pidbuf, sizeof(pidbuf), "%d", REUSE_PID);
	for (i = 4; argv[i]; i++)
		if (!strcmp(argv[i], "PID"))
			argv[i] = pidbuf;
	cmd = fork();
	if (cmd == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
			_exit(77);
		execv(argv[4], argv + 4);
		_exit(127);
	}
	/* Stopped after its exec, or gone without one. */
	if (cmd < 0 || waitpid(cmd, &status, 0) != cmd)
		return 2;
	if (!WIFSTOPPED(status))
		return exit_status(status);
	ptrace(PTRACE_SETOPTIONS, cmd, NULL, PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL);
	for (;;) {
		struct __ptrace_syscall_info si;

		if (ptrace(PTRACE_SYSCALL, cmd, NULL, sig) || waitpid(cmd, &status, 0) != cmd)
			return 2;
		if (!WIFSTOPPED(status)) {
			fprintf(stderr, "reuse: %s never opened %s of pid %d\n", argv[4], file,
				REUSE_PID);
			return 3;
		}
		sig = WSTOPSIG(status) == (SIGTRAP | 0x80) ? 0 : WSTOPSIG(status);
		if (sig || ptrace(PTRACE_GET_SYSCALL_INFO, cmd, sizeof(si), &si) <= 0 ||
		    si.op != PTRACE_SYSCALL_INFO_ENTRY || si.entry.nr != SYS_openat ||
		    !opens_target_file(cmd, &si, file))
			continue;
		kill(first, SIGKILL);
		waitpid(first, NULL, 0);
		second = reuse_target(self, argv[3]);
		/* Untraced from here: sanitizers' leak checks refuse to run under ptrace. */
		ptrace(PTRACE_DETACH, cmd, NULL, 0);
		break;
	}
	if (waitpid(cmd, &status, 0) != cmd)
		return 2;
	if (second != REUSE_PID) {
		fprintf(stderr, "reuse: the second target got pid %d\n", (int)second);
		return 2;
	}
	kill(second, SIGKILL);
	waitpid(second, NULL, 0);
	return exit_status(status);
}

static int reuse_main(int argc, char **argv)
{
	int status;
	pid_t init;

	if (argc < 5)
		return 2;
	if (unshare(CLONE_NEWPID | CLONE_NEWNS))
		return 77;
	init = fork();
	if (init == 0)
		_exit(reuse_init(argv));
	if (init < 0 || waitpid(init, &status, 0) != init)
		return 2;
	return exit_status(status);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "json"))
		return json_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "asuser"))
		return asuser_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "midexit"))
		return midexit_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "zombie"))
		return zombie_main();
	if (argc > 1 && !strcmp(argv[1], "dirty"))
		return dirty_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "hold"))
		return hold_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "closedpipe"))
		return closedpipe_main(argc - 1, argv + 1);
	if (argc > 1 && !strcmp(argv[1], "cowpte"))
		return cowpte_main();
	if (argc > 1 && !strcmp(argv[1], "reuse"))
		return reuse_main(argc - 1, argv + 1);
	fprintf(stderr, "usage: cli_helper json [-n KEY]... [-l KEY] | asuser UID CMD... | "
		"midexit NVMAS CMD... | zombie | dirty NPAGES | hold FILE... | closedpipe CMD... | "
		"cowpte | reuse FILE FIRST SECOND CMD...\n");
	return 2;
}
