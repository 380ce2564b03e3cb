/* Path spellings a command's words may use (cmdpath.h). */
#include <string.h>

#include "base/str.h"
#include "core/cmd.h"
#include "core/cmdpath.h"

/* Which per-process link of /proc the normalised absolute path p (of n
 * bytes) is: 0 none, 1 /proc/PID/root, 2 /proc/PID/cwd (task/TID/ too). */
static int proc_link(const char *p, size_t n)
{
	const char *s = p + 6, *e = p + n, *c;
	size_t pl;

	if (n < 11 || memcmp(p, "/proc/", 6) != 0)
		return 0;
	pl = strcspn(s, "/");
	if (s + pl >= e)
		return 0;
	c = s + pl + 1;
	if ((size_t)(e - c) > 5 && memcmp(c, "task/", 5) == 0) {
		c += 5;
		c += strcspn(c, "/");
		if (c >= e)
			return 0;
		c++;
	}
	if (e - c == 4 && memcmp(c, "root", 4) == 0)
		return 1;
	return e - c == 3 && memcmp(c, "cwd", 3) == 0 ? 2 : 0;
}

/* (cmdpath.h) */
int moat_cmd_norm_proc(char *p, size_t cap)
{
	char out[MOAT_CMD_PATH_BUF];
	const char *in = p;
	size_t o = 0;

	if (!moat_cmd_has_proc(p)) { /* no link of /proc on the way: in place */
		moat_cmd_norm_path(p);
		return 0;
	}
	while (*in) {
		const char *c;
		size_t l;
		int k;

		while (*in == '/')
			in++;
		if (!*in)
			break;
		c = in;
		while (*in && *in != '/')
			in++;
		l = (size_t)(in - c);
		if (l == 1 && c[0] == '.')
			continue;
		if (l == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
			continue;
		}
		if (o + l + 2 > sizeof(out))
			return -1;
		out[o++] = '/';
		memcpy(out + o, c, l);
		o += l;
		out[o] = '\0';
		k = proc_link(out, o);
		if (k == 1) {
			o = 0;
		} else if (k == 2) {
			return -1;
		}
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = '\0';
	if (o + 1 > cap)
		return -1;
	memcpy(p, out, o + 1);
	return 0;
}


void moat_cmd_url_path(const char *p, char *o)
{
	for (; *p && *p != '?' && *p != '#'; p++) {
		int hi, lo;

		if (*p == '%' && (hi = moat_hexval(p[1])) >= 0 && (lo = moat_hexval(p[2])) >= 0 &&
		    (hi || lo)) {
			*o++ = (char)(hi << 4 | lo);
			p += 2;
			continue;
		}
		*o++ = *p;
	}
	*o = '\0';
}
