// SPDX-License-Identifier: GPL-2.0
/*
 * LD_PRELOAD shim: opt the program it is loaded into in to COW page tables before main(),
 * so that an unmodified program (redis-server, a fuzz target's fork server) forks with
 * shared page tables, on kernels whose execve() does not keep the setting. bench/cowrun
 * prefers `mmext run --cow-pte --`, which relies on execve() keeping it.
 *
 * MMEXT_COW_PTE_LOG=FILE appends "PID COMM on|error" per process, for the benchmark to
 * check that the opt-in took (a fuzz target's output is not seen).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

/* The option number only from the kernel's marker: a guess could mean something else. */
#define OPTION_FILE "/sys/kernel/mm/cow_pte/prctl_option"

static void note(const char *what)
{
	const char *path = getenv("MMEXT_COW_PTE_LOG");
	char comm[32] = "?", line[160];
	int fd, n;

	if (!path)
		return;
	fd = open("/proc/self/comm", O_RDONLY);
	if (fd >= 0) {
		n = read(fd, comm, sizeof(comm) - 1);
		comm[n > 0 ? n - 1 : 0] = '\0';
		close(fd);
	}
	n = snprintf(line, sizeof(line), "%d %s %s\n", (int)getpid(), comm, what);
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0) {
		if (write(fd, line, n) != n)
			n = 0;
		close(fd);
	}
}

__attribute__((constructor)) static void cow_pte_on(void)
{
	char buf[32] = "";
	long opt;
	int fd, n;

	fd = open(OPTION_FILE, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		note("error: no " OPTION_FILE);
		return;
	}
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	opt = strtol(buf, NULL, 10);
	/* arg2 1: PR_COW_PTE_ENABLE (include/uapi/linux/prctl.h of the patched kernel). */
	if (opt <= 0 || prctl(opt, 1, 0, 0, 0)) {
		snprintf(buf, sizeof(buf), "error: %s", opt <= 0 ? "bad option" : strerror(errno));
		note(buf);
		return;
	}
	note("on");
}
