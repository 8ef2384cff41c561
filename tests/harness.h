/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test harness of tests/features and tests/lib. It offers the interface of the
 * kernel selftests' harness that these tests use (TEST, TEST_F, TEST_F_TIMEOUT,
 * FIXTURE with SETUP, TEARDOWN and variants, ASSERT_*, EXPECT_*, SKIP, TH_LOG) and
 * prints the same TAP with a "# Totals:" line, so the tests build with no kernel
 * tree and tests/run-suite.sh reads them like the kernel's own selftests.
 *
 * Each test runs in a child process of its own (process group too) under a
 * timeout, 30 s unless TEST_F_TIMEOUT says otherwise. Its state is shared with
 * any process it forks: an EXPECT that fails there fails the test. A failed
 * ASSERT ends the test. The fixture's teardown runs once, and only if setup
 * neither failed nor skipped.
 * Exit status: 1 if a test failed, else 0 (also when every test skipped).
 *
 * Options pick tests as the kernel's harness does: -f FIXTURE, -v VARIANT, -t TEST,
 * -r FIXTURE.VARIANT.TEST (any of them, each repeatable: a test runs if it matches
 * one); -l lists the tests instead.
 */
#ifndef MMEXT_TESTS_HARNESS_H
#define MMEXT_TESTS_HARNESS_H

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define KSFT_PASS	0
#define KSFT_FAIL	1
#define KSFT_SKIP	4

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

#define HARNESS_TIMEOUT	30

/* One test's state, in memory shared with every process the test forks. */
struct __test_metadata {
	const char *name;
	int exit_code;
	bool setup_done;
	bool teardown_done;
	jmp_buf env;
	char reason[1024];
};

struct __harness_test {
	const char *name;
	void (*run)(struct __test_metadata *, const void *variant);
	int timeout;
	struct __harness_test *next;
};

struct __harness_variant {
	const char *name;
	const void *data;
	struct __harness_variant *next;
};

struct __harness_fixture {
	const char *name;
	struct __harness_test *tests, **tests_tail;
	struct __harness_variant *variants, **variants_tail;
	bool listed;
	struct __harness_fixture *next;
};

/* TEST()s belong to "global", which runs first. */
static struct __harness_fixture __harness_global = { .name = "global", .listed = true };
static struct __harness_fixture *__harness_fixtures = &__harness_global;
static struct __harness_fixture **__harness_fixtures_tail = &__harness_global.next;

/* Registration runs from constructors, in the order the file defines things. */
static inline void __harness_add_fixture(struct __harness_fixture *f)
{
	if (f->listed)
		return;
	f->listed = true;
	*__harness_fixtures_tail = f;
	__harness_fixtures_tail = &f->next;
}

static inline void __harness_add_test(struct __harness_fixture *f, struct __harness_test *t)
{
	__harness_add_fixture(f);
	if (!f->tests_tail)
		f->tests_tail = &f->tests;
	*f->tests_tail = t;
	f->tests_tail = &t->next;
}

static inline void __harness_add_variant(struct __harness_fixture *f, struct __harness_variant *v)
{
	__harness_add_fixture(f);
	if (!f->variants_tail)
		f->variants_tail = &f->variants;
	*f->variants_tail = v;
	f->variants_tail = &v->next;
}

/* Ends the for loop of an EXPECT's optional handler; an ASSERT also ends the test. */
static inline int __harness_bail(struct __test_metadata *m, bool assert)
{
	if (assert)
		longjmp(m->env, 1);
	return 0;
}

/* True the first time only, in whichever process asks. */
static inline bool __harness_teardown_once(struct __test_metadata *m)
{
	return m->setup_done && !__atomic_exchange_n(&m->teardown_done, true, __ATOMIC_SEQ_CST);
}

#define TH_LOG(fmt, ...) \
	fprintf(stderr, "# %s:%d:%s:" fmt "\n", __FILE__, __LINE__, _metadata->name, ##__VA_ARGS__)

/* A failed test stays failed: a later SKIP does not hide it. */
#define SKIP(statement, fmt, ...) do {							\
	snprintf(_metadata->reason, sizeof(_metadata->reason), fmt, ##__VA_ARGS__);	\
	fprintf(stderr, "#      SKIP      %s\n", _metadata->reason);			\
	if (_metadata->exit_code != KSFT_FAIL)						\
		_metadata->exit_code = KSFT_SKIP;					\
	statement;									\
} while (0)

#define TEST(_n) __HARNESS_TEST(_n, HARNESS_TIMEOUT)

#define __HARNESS_TEST(_n, tmo)							\
	static void _n(struct __test_metadata *_metadata);				\
	static void __run_##_n(struct __test_metadata *_metadata, const void *v)	\
	{										\
		(void)v;								\
		if (!setjmp(_metadata->env))						\
			_n(_metadata);						\
	}										\
	static struct __harness_test __test_##_n = {					\
		.name = #_n, .run = __run_##_n, .timeout = tmo,			\
	};										\
	static void __attribute__((constructor)) __register_##_n(void)		\
	{										\
		__harness_add_test(&__harness_global, &__test_##_n);			\
	}										\
	static void _n(struct __test_metadata __attribute__((unused)) *_metadata)

#define FIXTURE_DATA(f)		struct __fixture_data_##f
#define FIXTURE_VARIANT(f)	struct __fixture_variant_##f

#define FIXTURE(f)									\
	FIXTURE_VARIANT(f);								\
	static struct __harness_fixture __fixture_##f = { .name = #f };		\
	static void __attribute__((constructor)) __register_fixture_##f(void)		\
	{										\
		__harness_add_fixture(&__fixture_##f);					\
	}										\
	FIXTURE_DATA(f)

#define FIXTURE_SETUP(f)								\
	static void __setup_##f(struct __test_metadata __attribute__((unused)) *_metadata,	\
				FIXTURE_DATA(f) __attribute__((unused)) *self,		\
				const FIXTURE_VARIANT(f) __attribute__((unused)) *variant)

#define FIXTURE_TEARDOWN(f)								\
	static void __teardown_##f(struct __test_metadata __attribute__((unused)) *_metadata,	\
				   FIXTURE_DATA(f) __attribute__((unused)) *self,	\
				   const FIXTURE_VARIANT(f) __attribute__((unused)) *variant)

/* FIXTURE_VARIANT_ADD(f, v) { .field = value, }; */
#define FIXTURE_VARIANT_ADD(f, v)							\
	extern const FIXTURE_VARIANT(f) __variant_##f##_##v;				\
	static struct __harness_variant __variant_meta_##f##_##v = {			\
		.name = #v, .data = &__variant_##f##_##v,				\
	};										\
	static void __attribute__((constructor)) __register_variant_##f##_##v(void)	\
	{										\
		__harness_add_variant(&__fixture_##f, &__variant_meta_##f##_##v);	\
	}										\
	const FIXTURE_VARIANT(f) __variant_##f##_##v =

#define TEST_F(f, _n) TEST_F_TIMEOUT(f, _n, HARNESS_TIMEOUT)

#define TEST_F_TIMEOUT(f, _n, tmo)							\
	static void __body_##f##_##_n(struct __test_metadata *_metadata,		\
					FIXTURE_DATA(f) *self,				\
					const FIXTURE_VARIANT(f) *variant);		\
	static void __run_##f##_##_n(struct __test_metadata *_metadata, const void *v) \
	{										\
		FIXTURE_DATA(f) self;							\
										\
		memset(&self, 0, sizeof(self));						\
		if (!setjmp(_metadata->env)) {						\
			__setup_##f(_metadata, &self, v);				\
			_metadata->setup_done = _metadata->exit_code == KSFT_PASS;	\
			if (_metadata->setup_done)					\
				__body_##f##_##_n(_metadata, &self, v);		\
		}									\
		if (__harness_teardown_once(_metadata))					\
			__teardown_##f(_metadata, &self, v);				\
	}										\
	static struct __harness_test __test_##f##_##_n = {				\
		.name = #_n, .run = __run_##f##_##_n, .timeout = tmo,		\
	};										\
	static void __attribute__((constructor)) __register_##f##_##_n(void)	\
	{										\
		__harness_add_test(&__fixture_##f, &__test_##f##_##_n);		\
	}										\
	static void __body_##f##_##_n(						\
		struct __test_metadata __attribute__((unused)) *_metadata,		\
		FIXTURE_DATA(f) __attribute__((unused)) *self,				\
		const FIXTURE_VARIANT(f) __attribute__((unused)) *variant)

#define __harness_is_signed(x)	((__typeof__(x))-1 < (__typeof__(x))1)

static inline void __harness_cmp_failed(struct __test_metadata *m, const char *file, int line,
					const char *es, bool esigned, uintmax_t e, const char *op,
					const char *ss, bool ssigned, uintmax_t s)
{
	fprintf(stderr, "# %s:%d:%s:Expected %s (", file, line, m->name, es);
	fprintf(stderr, esigned ? "%jd" : "%ju", e);
	fprintf(stderr, ") %s %s (", op, ss);
	fprintf(stderr, ssigned ? "%jd" : "%ju", s);
	fprintf(stderr, ")\n");
	m->exit_code = KSFT_FAIL;
}

/*
 * A for loop, so that a statement or block after the macro runs only on failure
 * (ASSERT_EQ(a, b) TH_LOG("...");), before an ASSERT ends the test.
 */
#define __HARNESS_CMP(e, es, s, ss, op, assert)							\
	for (int __failed = ({								\
		__typeof__(e) __e = (e);						\
		__typeof__(s) __s = (s);						\
		bool __bad = !(__e op __s);						\
		if (__bad)								\
			__harness_cmp_failed(_metadata, __FILE__, __LINE__,		\
				es, __harness_is_signed(__e), (uintmax_t)__e, #op,	\
				ss, __harness_is_signed(__s), (uintmax_t)__s);		\
		__bad;									\
	     }); __failed; __failed = __harness_bail(_metadata, assert))

#define __HARNESS_STR(e, s, op, assert)							\
	for (int __failed = ({								\
		const char *__e = (e), *__s = (s);					\
		bool __bad = !(strcmp(__e, __s) op 0);					\
		if (__bad) {								\
			fprintf(stderr, "# %s:%d:%s:Expected '%s' %s '%s'.\n",		\
				__FILE__, __LINE__, _metadata->name, __e, #op, __s);	\
			_metadata->exit_code = KSFT_FAIL;				\
		}									\
		__bad;									\
	     }); __failed; __failed = __harness_bail(_metadata, assert))

#define ASSERT_EQ(e, s)		__HARNESS_CMP(e, #e, s, #s, ==, true)
#define ASSERT_NE(e, s)		__HARNESS_CMP(e, #e, s, #s, !=, true)
#define ASSERT_LT(e, s)		__HARNESS_CMP(e, #e, s, #s, <, true)
#define ASSERT_LE(e, s)		__HARNESS_CMP(e, #e, s, #s, <=, true)
#define ASSERT_GT(e, s)		__HARNESS_CMP(e, #e, s, #s, >, true)
#define ASSERT_GE(e, s)		__HARNESS_CMP(e, #e, s, #s, >=, true)
#define ASSERT_TRUE(s)		__HARNESS_CMP(0, "0", s, #s, !=, true)
#define ASSERT_FALSE(s)		__HARNESS_CMP(0, "0", s, #s, ==, true)
#define ASSERT_STREQ(e, s)	__HARNESS_STR(e, s, ==, true)
#define ASSERT_STRNE(e, s)	__HARNESS_STR(e, s, !=, true)
#define EXPECT_EQ(e, s)		__HARNESS_CMP(e, #e, s, #s, ==, false)
#define EXPECT_NE(e, s)		__HARNESS_CMP(e, #e, s, #s, !=, false)
#define EXPECT_LT(e, s)		__HARNESS_CMP(e, #e, s, #s, <, false)
#define EXPECT_LE(e, s)		__HARNESS_CMP(e, #e, s, #s, <=, false)
#define EXPECT_GT(e, s)		__HARNESS_CMP(e, #e, s, #s, >, false)
#define EXPECT_GE(e, s)		__HARNESS_CMP(e, #e, s, #s, >=, false)
#define EXPECT_TRUE(s)		__HARNESS_CMP(0, "0", s, #s, !=, false)
#define EXPECT_FALSE(s)		__HARNESS_CMP(0, "0", s, #s, ==, false)
#define EXPECT_STREQ(e, s)	__HARNESS_STR(e, s, ==, false)
#define EXPECT_STRNE(e, s)	__HARNESS_STR(e, s, !=, false)

static pid_t __harness_child;
static volatile sig_atomic_t __harness_timed_out;

static void __harness_alarm(int sig)
{
	(void)sig;
	__harness_timed_out = 1;
	kill(-__harness_child, SIGKILL);
}

/* Runs one test in a child; KSFT_PASS, KSFT_FAIL or KSFT_SKIP. */
static inline int __harness_run_one(struct __test_metadata *m, const struct __harness_test *t,
				    const void *variant, const char *full)
{
	struct sigaction sa = { .sa_handler = __harness_alarm }, old;
	int status = 0, rc;
	pid_t pid;

	memset(m, 0, sizeof(*m));
	m->name = t->name;
	printf("#  RUN           %s ...\n", full);
	fflush(stdout);
	fflush(stderr);
	pid = fork();
	if (pid < 0) {
		printf("# %s: fork: %s\n", full, strerror(errno));
		return KSFT_FAIL;
	}
	if (pid == 0) {
		setpgid(0, 0);
		t->run(m, variant);
		fflush(stdout);
		fflush(stderr);
		_exit(m->exit_code);
	}
	/* Here too, so that a timeout right away still finds the group. */
	setpgid(pid, pid);
	__harness_child = pid;
	__harness_timed_out = 0;
	sigaction(SIGALRM, &sa, &old);
	alarm(t->timeout);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	alarm(0);
	sigaction(SIGALRM, &old, NULL);

	if (__harness_timed_out) {
		printf("# %s: Test terminated by timeout (%d s)\n", full, t->timeout);
		rc = KSFT_FAIL;
	} else if (WIFSIGNALED(status)) {
		printf("# %s: Test terminated by signal %d\n", full, WTERMSIG(status));
		rc = KSFT_FAIL;
	} else if (WEXITSTATUS(status) == KSFT_SKIP && m->exit_code != KSFT_FAIL) {
		rc = KSFT_SKIP;
	} else if (WEXITSTATUS(status) != KSFT_PASS || m->exit_code == KSFT_FAIL) {
		rc = KSFT_FAIL;
	} else {
		rc = KSFT_PASS;
	}
	printf("#          %4s  %s\n", rc == KSFT_FAIL ? "FAIL" : "OK", full);
	return rc;
}

/* Whether the command line picks this test: with no -f/-v/-t/-r, every test. */
static inline bool __harness_picked(int argc, char **argv, const char *f, const char *v,
				    const char *t, const char *full)
{
	bool any = false;

	for (int i = 1; i < argc; i++) {
		const char *want, *have;

		if (!strcmp(argv[i], "-l"))
			continue;
		want = argv[++i];
		switch (argv[i - 1][1]) {
		case 'f': have = f; break;
		case 'v': have = v; break;
		case 't': have = t; break;
		case 'r': have = full; break;
		default: continue;
		}
		any = true;
		if (!strcmp(want, have))
			return true;
	}
	return !any;
}

/* The runner, by the kernel harness's name, for tests with their own main(). */
static inline int test_harness_run(int argc, char **argv)
{
	static const struct __harness_variant none = { .name = "" };
	unsigned int tests = 0, cases = 0, n = 0, pass = 0, fail = 0, skip = 0;
	const struct __harness_fixture *f;
	const struct __harness_variant *v;
	const struct __harness_test *t;
	struct __test_metadata *m;
	bool list = false;
	char full[512];

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-l")) {
			list = true;
		} else if (strlen(argv[i]) != 2 || !strchr("fvtr", argv[i][1]) ||
			   argv[i][0] != '-' || ++i == argc) {
			fprintf(stderr, "usage: %s [-l] [-f FIXTURE] [-v VARIANT] [-t TEST] "
				"[-r FIXTURE.VARIANT.TEST]...\n", argv[0]);
			return KSFT_FAIL;
		}
	}
	for (f = __harness_fixtures; f; f = f->next)
		for (v = f->variants ? f->variants : &none; v; v = v->next) {
			unsigned int before = tests;

			for (t = f->tests; t; t = t->next) {
				snprintf(full, sizeof(full), "%s%s%s.%s", f->name,
					 v->name[0] ? "." : "", v->name, t->name);
				if (!__harness_picked(argc, argv, f->name, v->name, t->name, full))
					continue;
				if (list)
					printf("%s\n", full);
				tests++;
			}
			cases += tests != before;
		}
	if (list)
		return KSFT_PASS;
	m = mmap(NULL, sizeof(*m), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED) {
		perror("mmap");
		return KSFT_FAIL;
	}
	printf("TAP version 13\n1..%u\n# Starting %u tests from %u test cases.\n",
	       tests, tests, cases);
	for (f = __harness_fixtures; f; f = f->next)
		for (v = f->variants ? f->variants : &none; v; v = v->next)
			for (t = f->tests; t; t = t->next) {
				int rc;

				snprintf(full, sizeof(full), "%s%s%s.%s", f->name,
					 v->name[0] ? "." : "", v->name, t->name);
				if (!__harness_picked(argc, argv, f->name, v->name, t->name, full))
					continue;
				rc = __harness_run_one(m, t, v->data, full);
				n++;
				if (rc == KSFT_SKIP) {
					skip++;
					printf("ok %u %s # SKIP %s\n", n, full, m->reason);
				} else if (rc == KSFT_PASS) {
					pass++;
					printf("ok %u %s\n", n, full);
				} else {
					fail++;
					printf("not ok %u %s\n", n, full);
				}
			}
	printf("# %s: %u / %u tests passed.\n", fail ? "FAILED" : "PASSED", pass + skip, n);
	printf("# Totals: pass:%u fail:%u xfail:0 xpass:0 skip:%u error:0\n", pass, fail, skip);
	return fail ? KSFT_FAIL : KSFT_PASS;
}

#define TEST_HARNESS_MAIN								\
	int main(int argc, char **argv)							\
	{										\
		return test_harness_run(argc, argv);					\
	}

#endif /* MMEXT_TESTS_HARNESS_H */
