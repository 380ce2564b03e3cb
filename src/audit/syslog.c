/* The syslog sink of the audit log: one RFC 5424 message per record, sent
 * as one datagram to the local syslog socket, so that fleets ship audit
 * records with the log pipeline they already run:
 *
 *   <PRI>1 TIMESTAMP HOSTNAME moat PID - - {"time":...}
 *
 * Facility user (LOG_USER): every syslog daemon routes it by default, and
 * authpriv would hide the records from the usual files on some systems.
 * The socket is /dev/log; MOAT_SYSLOG_SOCKET overrides it (tests bind their
 * own socket), read here and nowhere else.
 *
 * Best effort by design: the send never blocks (a stalled daemon must not
 * stall tool calls), and the audit file stays the record of truth. This
 * module must never print and never send a raw newline inside a message. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include "audit/audit.h"
#include "base/str.h"

/* The longest JSON text sent in one datagram; a longer record is refused
 * with -EMSGSIZE (the writer then sends a shortened record). 64 KiB stays
 * under the default socket buffer and what rsyslog and journald accept. */
#define MOAT_SYSLOG_MAX_MSG (64u << 10)
#define MOAT_SYSLOG_DEFAULT_SOCKET "/dev/log"

/* RFC 5424 HOSTNAME: 1 to 255 printable US-ASCII characters, else "-". */
static void hostname(char *out, size_t outsz)
{
	char h[256];
	size_t n;

	if (gethostname(h, sizeof(h)) < 0)
		goto nil;
	h[sizeof(h) - 1] = '\0';
	n = strlen(h);
	if (n == 0)
		goto nil;
	for (size_t i = 0; i < n; i++)
		if (h[i] < 33 || h[i] > 126)
			goto nil;
	moat_strlcpy(out, h, outsz);
	return;
nil:
	moat_strlcpy(out, "-", outsz);
}

int moat_syslog_send(const char *json_line, size_t len, int severity)
{
	const char *sock_path = secure_getenv("MOAT_SYSLOG_SOCKET");
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	struct moat_buf msg = MOAT_BUF_INIT;
	char host[256], ts[64];
	struct timespec now;
	struct tm tm;
	ssize_t n;
	int fd, r = 0;

	if (!json_line || severity < 0 || severity > 7)
		return -EINVAL;
	while (len && (json_line[len - 1] == '\n' || json_line[len - 1] == '\r'))
		len--;
	if (len > MOAT_SYSLOG_MAX_MSG)
		return -EMSGSIZE;
	/* SECURITY: one message, one line; the audit writer never produces
	 * one, but this is a public function. */
	if (memchr(json_line, '\n', len) || memchr(json_line, '\r', len))
		return -EINVAL;
	if (!sock_path || !sock_path[0])
		sock_path = MOAT_SYSLOG_DEFAULT_SOCKET;
	if (moat_strlcpy(sa.sun_path, sock_path, sizeof(sa.sun_path)) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;

	if (clock_gettime(CLOCK_REALTIME, &now) < 0 || !gmtime_r(&now.tv_sec, &tm))
		return -errno;
	snprintf(ts, sizeof(ts), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
		 tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
		 (int)(now.tv_nsec / 1000000L) % 1000);
	hostname(host, sizeof(host));
	moat_buf_printf(&msg, "<%d>1 %s %s moat %ld - - ", LOG_USER | severity, ts, host,
			(long)getpid());
	moat_buf_append(&msg, json_line, len);
	if (msg.oom) {
		moat_buf_release(&msg);
		return -ENOMEM;
	}

	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		moat_buf_release(&msg);
		return r;
	}
	do
		n = sendto(fd, msg.data, msg.len, MSG_DONTWAIT | MSG_NOSIGNAL,
			   (const struct sockaddr *)&sa, sizeof(sa));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		r = -errno;
	else if ((size_t)n != msg.len)
		r = -EIO;
	close(fd);
	moat_buf_release(&msg);
	return r;
}
