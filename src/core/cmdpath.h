/* Path spellings a command's words may use, read as the kernel and the
 * programs read them (cmd.c). Pure. */
#ifndef MOAT_CORE_CMDPATH_H
#define MOAT_CORE_CMDPATH_H

#include <stdbool.h>
#include <stddef.h>

/* room for the paths moat_cmd_norm_proc builds */
#define MOAT_CMD_PATH_BUF 4096

/* Does p hold "/proc/" (a /proc link may be on its way)? Cheaper than
 * strstr for the short paths of commands. */
static inline bool moat_cmd_has_proc(const char *p)
{
	for (; *p; p++)
		if (p[0] == '/' && p[1] == 'p' && p[2] == 'r' && p[3] == 'o' && p[4] == 'c' &&
		    p[5] == '/')
			return true;
	return false;
}

/* SECURITY: lexical normalisation of the absolute path p in place, with
 * /proc's per-process links read as the kernel reads them, component by
 * component ("..", after one, leaves the place it leads to, not /proc):
 * /proc/PID/root (task/TID/root too) is "/" for every process a command
 * could name. 0 when p names a known place; -1 when it is or goes
 * through a working directory (/proc/PID/cwd, self's too: the directory
 * of the process that opens it, not known before running), or does not
 * fit in cap (or MOAT_CMD_PATH_BUF). */
int moat_cmd_norm_proc(char *p, size_t cap);

/* The path of a file:// URL's rest (after "file://HOST", starting at its
 * '/'), percent escapes decoded (not %00), up to a '?' or '#', into out
 * (room for strlen(path) + 1 bytes). */
void moat_cmd_url_path(const char *path, char *out);

#endif
