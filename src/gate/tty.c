/* The terminal approver: the boxed prompt of seed 000 on the controlling
 * terminal, answered with y, n, a (or p, "always" for a bash command prefix).
 *
 *   +----------------------------------+
 *   | Approval Required                |
 *   | bash                             |
 *   | command: rm -rf build/           |
 *   | rule: require_approval_for_exec… |
 *   +----------------------------------+
 *   Allow? [y]es / [n]o / [a]lways:
 *
 * It must never read the answer from standard input (an agent's pipe must
 * not answer for the human: only /dev/tty does, and input typed before the
 * prompt was drawn is discarded), never let an argument's bytes reach the
 * terminal as control characters or escape sequences (they are shown
 * escaped, so no argument can redraw or hide the prompt), and never wait
 * past timeout_ms. Anything but y, yes, a, always or p is a no. */
#include "gate/gate.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "base/str.h"

#define TTY_MIN_WIDTH 32       /* columns inside the box (seed 000's box) */
#define TTY_MAX_WIDTH 76       /* wider lines wrap */
#define TTY_MAX_ARGS 16	       /* arguments shown, then a count of the rest */
#define TTY_MAX_VALUE_LINES 12 /* lines per argument, then a count of the rest */
#define TTY_MAX_ANSWER 64      /* bytes of an answer line; a longer one is a no */

/* One prompt at a time on the terminal: concurrent asks queue here (within
 * their own timeouts). */
static pthread_mutex_t tty_lock = PTHREAD_MUTEX_INITIALIZER;

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- showing untrusted text --------------------------------------------- */

/* SECURITY: every untrusted byte reaches the terminal through
 * moat_buf_put_shown (src/base/str.h): control characters, invalid bytes and
 * invisible or bidi code points are written as escapes, never as themselves. */

/* Columns of shown text (one per code point: shown text is valid UTF-8). */
static size_t columns(const char *s, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		if (((unsigned char)s[i] & 0xc0) != 0x80)
			w++;
	return w;
}

/* Byte length of the first `cols` columns of s. */
static size_t take_columns(const char *s, size_t n, size_t cols)
{
	size_t i = 0, w = 0;

	while (i < n) {
		if (((unsigned char)s[i] & 0xc0) != 0x80) {
			if (w == cols)
				break;
			w++;
		}
		i++;
	}
	return i;
}

/* The box's lines, each shown text, separated by '\n' in one buffer. */
struct lines {
	struct moat_buf b;
	size_t width; /* widest line */
};

/* Add shown text as lines of at most TTY_MAX_WIDTH columns; past maxlines,
 * a last line says how much was left out. */
static void add_wrapped(struct lines *l, const char *text, size_t n, size_t maxlines)
{
	size_t used = 0;

	do {
		size_t take = take_columns(text, n, TTY_MAX_WIDTH), w;

		if (used + 1 == maxlines && take < n) {
			char more[64];

			snprintf(more, sizeof(more), "[... %zu more characters]", columns(text, n));
			moat_buf_puts(&l->b, more);
			moat_buf_putc(&l->b, '\n');
			w = strlen(more);
			if (w > l->width)
				l->width = w;
			return;
		}
		moat_buf_append(&l->b, text, take);
		moat_buf_putc(&l->b, '\n');
		w = columns(text, take);
		if (w > l->width)
			l->width = w;
		text += take;
		n -= take;
		used++;
	} while (n);
}

static void add_line(struct lines *l, const char *label, const char *raw, size_t n, size_t maxlines)
{
	struct moat_buf t = MOAT_BUF_INIT;

	if (label) {
		moat_buf_put_shown(&t, label, strlen(label));
		moat_buf_puts(&t, ": ");
	}
	moat_buf_put_shown(&t, raw, n);
	if (!t.oom)
		add_wrapped(l, t.data ? t.data : "", t.len, maxlines);
	else
		l->b.oom = true;
	moat_buf_release(&t);
}

/* The key arguments: each top-level argument, strings as they are, other
 * values as compact JSON. */
static void add_args(struct lines *l, const char *args_json)
{
	json_t *o;
	size_t shown = 0, total;
	const char *key;
	json_t *v;

	if (!args_json)
		return;
	o = json_loads(args_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, NULL);
	if (!json_is_object(o)) {
		add_line(l, "arguments", args_json, strlen(args_json), TTY_MAX_VALUE_LINES);
		json_decref(o);
		return;
	}
	total = json_object_size(o);
	json_object_foreach(o, key, v)
	{
		if (shown == TTY_MAX_ARGS) {
			char more[64];

			snprintf(more, sizeof(more), "[... %zu more arguments]", total - shown);
			add_line(l, NULL, more, strlen(more), 1);
			break;
		}
		if (json_is_string(v)) {
			add_line(l, key, json_string_value(v), json_string_length(v),
				 TTY_MAX_VALUE_LINES);
		} else {
			char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);

			if (s)
				add_line(l, key, s, strlen(s), TTY_MAX_VALUE_LINES);
			free(s);
		}
		shown++;
	}
	json_decref(o);
}

static void put_rule(struct moat_buf *b, size_t width)
{
	moat_buf_putc(b, '+');
	for (size_t i = 0; i < width + 2; i++)
		moat_buf_putc(b, '-');
	moat_buf_puts(b, "+\r\n");
}

/* The whole prompt, ready to write. */
static int render(const struct moat_ask *ask, struct moat_buf *out)
{
	struct lines l = {MOAT_BUF_INIT, TTY_MIN_WIDTH};
	const char *p, *end;

	add_line(&l, NULL, "Approval Required", strlen("Approval Required"), 1);
	add_line(&l, NULL, ask->tool ? ask->tool : "?", strlen(ask->tool ? ask->tool : "?"), 2);
	if (ask->args_json)
		add_args(&l, ask->args_json);
	else if (ask->summary && *ask->summary)
		add_line(&l, NULL, ask->summary, strlen(ask->summary), TTY_MAX_VALUE_LINES);
	if (ask->decision && ask->decision->rule[0])
		add_line(&l, "rule", ask->decision->rule, strlen(ask->decision->rule), 3);
	if (ask->decision && ask->decision->reason[0])
		add_line(&l, "reason", ask->decision->reason, strlen(ask->decision->reason), 6);
	if (l.b.oom) {
		moat_buf_release(&l.b);
		return -ENOMEM;
	}

	moat_buf_puts(out, "\r\n");
	put_rule(out, l.width);
	p = l.b.data;
	end = p + l.b.len;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = (size_t)(nl - p), w = columns(p, n);

		moat_buf_puts(out, "| ");
		moat_buf_append(out, p, n);
		for (; w < l.width; w++)
			moat_buf_putc(out, ' ');
		moat_buf_puts(out, " |\r\n");
		p = nl + 1;
	}
	put_rule(out, l.width);
	moat_buf_puts(out, "Allow? [y]es / [n]o / [a]lways");
	if (ask->always_prefix && *ask->always_prefix) {
		moat_buf_puts(out, " / [p] always for '");
		moat_buf_put_shown(out, ask->always_prefix, strlen(ask->always_prefix));
		moat_buf_putc(out, '\'');
	}
	moat_buf_puts(out, ": ");
	moat_buf_release(&l.b);
	return out->oom ? -ENOMEM : 0;
}

/* ---- the terminal ------------------------------------------------------- */

static int write_all(int fd, const char *s, size_t n)
{
	while (n) {
		ssize_t k = write(fd, s, n);

		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		s += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Read one line within the deadline (-1: none). 0 with *eof when the
 * terminal closed; -ETIMEDOUT. */
static int read_line(int fd, long long deadline, char *line, size_t linesz, bool *eof,
		     bool *too_long)
{
	size_t len = 0;

	*eof = false;
	*too_long = false;
	line[0] = '\0';
	for (;;) {
		struct pollfd pfd = {fd, POLLIN, 0};
		long long left = -1;
		char buf[256];
		ssize_t k;
		int n;

		if (deadline >= 0) {
			left = deadline - now_ms();
			if (left <= 0)
				return -ETIMEDOUT;
		}
		n = poll(&pfd, 1, left < 0 ? -1 : left > INT_MAX ? INT_MAX : (int)left);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			continue;
		k = read(fd, buf, sizeof(buf));
		if (k < 0) {
			if (errno == EINTR || errno == EAGAIN)
				continue;
			if (errno == EIO) { /* hung up */
				*eof = true;
				return 0;
			}
			return -errno;
		}
		if (k == 0) {
			*eof = true;
			return 0;
		}
		for (ssize_t i = 0; i < k; i++) {
			if (buf[i] == '\n' || buf[i] == '\r')
				return 0;
			if (len + 1 < linesz) {
				line[len++] = buf[i];
				line[len] = '\0';
			} else {
				*too_long = true;
			}
		}
	}
}

static enum moat_answer parse_answer(const char *line, bool prefix_offered, bool *prefix)
{
	char w[TTY_MAX_ANSWER + 1];
	size_t n = 0;

	*prefix = false;
	while (*line == ' ' || *line == '\t')
		line++;
	for (; *line && n + 1 < sizeof(w); line++)
		w[n++] = (*line >= 'A' && *line <= 'Z') ? (char)(*line - 'A' + 'a') : *line;
	while (n && (w[n - 1] == ' ' || w[n - 1] == '\t'))
		n--;
	w[n] = '\0';
	if (!strcmp(w, "y") || !strcmp(w, "yes"))
		return MOAT_ANSWER_APPROVED;
	if (!strcmp(w, "a") || !strcmp(w, "always"))
		return MOAT_ANSWER_APPROVED_ALWAYS;
	if (prefix_offered && !strcmp(w, "p")) {
		*prefix = true;
		return MOAT_ANSWER_APPROVED_ALWAYS;
	}
	return MOAT_ANSWER_DENIED;
}

static int lock_within(long long timeout_ms)
{
	struct timespec until;
	int r;

	if (timeout_ms < 0)
		return -pthread_mutex_lock(&tty_lock);
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += timeout_ms / 1000;
	until.tv_nsec += (timeout_ms % 1000) * 1000000;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	r = pthread_mutex_timedlock(&tty_lock, &until);
	return r == ETIMEDOUT ? -ETIMEDOUT : -r;
}

int moat_tty_approver(void *ud, const struct moat_ask *ask, int timeout_ms, struct moat_reply *ret)
{
	struct moat_buf prompt = MOAT_BUF_INIT;
	struct termios saved, t;
	char line[TTY_MAX_ANSWER + 1];
	long long deadline = timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
	bool eof = false, too_long = false, prefix = false, have_termios;
	enum moat_answer answer;
	int fd, r;

	if (!ask || !ret)
		return -EINVAL;
	r = lock_within(timeout_ms < 0 ? -1 : timeout_ms);
	if (r < 0)
		return r;
	/* SECURITY: the controlling terminal, never standard input */
	fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
	if (fd < 0) {
		pthread_mutex_unlock(&tty_lock);
		return -ENOTTY;
	}
	/* a background job cannot ask (reading would stop it) */
	if (tcgetpgrp(fd) != getpgrp()) {
		close(fd);
		pthread_mutex_unlock(&tty_lock);
		return -ENOTTY;
	}
	r = render(ask, &prompt);
	if (r < 0)
		goto out;
	/* a line at a time, echoed, whatever mode the terminal was left in */
	have_termios = tcgetattr(fd, &saved) == 0;
	if (have_termios) {
		t = saved;
		t.c_lflag |= ICANON | ECHO;
		t.c_iflag |= ICRNL;
		tcsetattr(fd, TCSANOW, &t);
	}
	/* SECURITY: input typed before the prompt was shown does not answer it */
	tcflush(fd, TCIFLUSH);
	r = write_all(fd, prompt.data, prompt.len);
	if (r >= 0)
		r = read_line(fd, deadline, line, sizeof(line), &eof, &too_long);
	if (r == -ETIMEDOUT) {
		char msg[96];

		int sec = (timeout_ms + 999) / 1000;

		snprintf(msg, sizeof(msg), "\r\n(no answer within %d second%s: denied)\r\n", sec,
			 sec == 1 ? "" : "s");
		write_all(fd, msg, strlen(msg));
	} else if (r >= 0 && eof) {
		write_all(fd, "\r\n(no answer: denied)\r\n", strlen("\r\n(no answer: denied)\r\n"));
	}
	if (have_termios)
		tcsetattr(fd, TCSANOW, &saved);
	if (r < 0)
		goto out;
	answer = eof || too_long
		     ? MOAT_ANSWER_DENIED
		     : parse_answer(line, ask->always_prefix && *ask->always_prefix, &prefix);
	memset(ret, 0, sizeof(*ret));
	ret->answer = answer;
	if (answer == MOAT_ANSWER_APPROVED_ALWAYS && prefix)
		moat_strlcpy(ret->always_pattern, ask->always_prefix, sizeof(ret->always_pattern));
	r = 0;
out:
	moat_buf_release(&prompt);
	close(fd);
	pthread_mutex_unlock(&tty_lock);
	return r;
}
