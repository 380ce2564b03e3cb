/* A tiny TAP test harness: one binary per module, checks print
 * "ok N - what" / "not ok N - what" and the plan at the end; the exit status
 * is non-zero when any check failed. Header-only. */
#ifndef MOAT_TEST_TAP_H
#define MOAT_TEST_TAP_H

#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int tap_n, tap_failed;

__attribute__((format(printf, 2, 3), unused)) static int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	tap_n++;
	char msg[1024];

	printf("%s %d - ", cond ? "ok" : "not ok", tap_n);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	/* one TAP line per check: control characters in names are escaped */
	for (const char *p = msg; *p; p++) {
		if (*p == '\n')
			fputs("\\n", stdout);
		else if ((unsigned char)*p < 0x20)
			putchar('?');
		else
			putchar(*p);
	}
	printf("\n");
	if (!cond)
		tap_failed++;
	return cond;
}

#define CHECK(cond) tap_ok(!!(cond), "%s:%d: %s", __FILE__, __LINE__, #cond)
#define CHECKF(cond, ...) tap_ok(!!(cond), __VA_ARGS__)
#define CHECK_INT(a, b)                                                                         \
	do {                                                                                    \
		long long tap_a_ = (long long)(a), tap_b_ = (long long)(b);                     \
		tap_ok(tap_a_ == tap_b_, "%s:%d: %s == %s (%lld vs %lld)", __FILE__, __LINE__, \
		       #a, #b, tap_a_, tap_b_);                                                 \
	} while (0)
#define CHECK_STR(a, b)                                                                      \
	do {                                                                                 \
		const char *tap_a_ = (a), *tap_b_ = (b);                                     \
		tap_ok(tap_a_ && tap_b_ && strcmp(tap_a_, tap_b_) == 0,                      \
		       "%s:%d: %s == \"%s\" (got \"%s\")", __FILE__, __LINE__, #a,            \
		       tap_b_ ? tap_b_ : "(null)", tap_a_ ? tap_a_ : "(null)");               \
	} while (0)

/* A test that runs commands through moat's sandbox needs a mount
 * namespace. Where the machine refuses one (a container's default
 * profile) moat fails closed, and the test skips whole, saying so; under
 * MOAT_MUST_WORK=1 (CI) that is a failure. */
__attribute__((unused)) static void tap_require_namespaces(void)
{
	int st = 0;
	pid_t p = fork();
	const char *must = getenv("MOAT_MUST_WORK");

	if (p == 0)
		_exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 || unshare(CLONE_NEWNS) == 0 ? 0 : 1);
	if (p > 0 && waitpid(p, &st, 0) == p && WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return;
	if (must && !strcmp(must, "1")) {
		printf("1..1\nnot ok 1 - no mount namespace can be made here (MOAT_MUST_WORK=1)\n");
		exit(1);
	}
	printf("1..0 # SKIP no mount namespace can be made here (a container's default profile): "
	       "moat run refuses, as it must\n");
	exit(0);
}

__attribute__((unused)) static int tap_done(void)
{
	printf("1..%d\n", tap_n);
	if (tap_failed)
		fprintf(stderr, "%d of %d checks failed\n", tap_failed, tap_n);
	return tap_failed ? 1 : 0;
}

#endif
