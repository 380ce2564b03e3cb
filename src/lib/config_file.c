/* Reading a configuration file: the only place the configuration code
 * touches the filesystem. It reads at most MOAT_CONFIG_MAX_BYTES (a FIFO or a
 * device cannot make it read forever) and hands the text to the pure loader,
 * which names the file in every error.
 *
 * Library glue: never prints. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <moat/policy.h>

#include "base/compat.h"
#include "base/str.h"
#include "core/config.h"

static int read_error(struct moat_error *err, const char *path, int e)
{
	char buf[256];
	const char *msg = moat_strerror(e, buf, sizeof(buf));

	moat_error_set_where(err, path, 0, 0);
	moat_error_set(err, "cannot read config: %s", msg);
	return -e;
}

int moat_config_load_file(struct moat_config *c, const char *path, unsigned flags,
			  struct moat_error *err)
{
	struct moat_buf b = MOAT_BUF_INIT;
	struct stat st;
	char chunk[65536];
	int fd, r;

	if (!c || !path)
		return -EINVAL;
	/* SECURITY: a project file comes from a repository the user may not
	 * trust: it must be a regular file, not a symlink (whose target's bytes
	 * could end up quoted in an error) nor a FIFO (which would hang us).
	 * A user file may be a pipe (--config <(generate-config)). */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY |
			     ((flags & MOAT_CONFIG_PROJECT) ? O_NOFOLLOW | O_NONBLOCK : 0));
	if (fd < 0 && errno == ELOOP && (flags & MOAT_CONFIG_PROJECT)) {
		moat_error_set_where(err, path, 0, 0);
		moat_error_set(err, "cannot read project config: it is a symbolic link");
		return -EINVAL;
	}
	if (fd < 0)
		return read_error(err, path, errno);
	if (fstat(fd, &st) < 0) {
		r = errno;
		close(fd);
		return read_error(err, path, r);
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return read_error(err, path, EISDIR);
	}
	if ((flags & MOAT_CONFIG_PROJECT) && !S_ISREG(st.st_mode)) {
		close(fd);
		moat_error_set_where(err, path, 0, 0);
		moat_error_set(err, "cannot read project config: not a regular file");
		return -EINVAL;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			r = errno;
			close(fd);
			moat_buf_release(&b);
			return read_error(err, path, r);
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > MOAT_CONFIG_MAX_BYTES) {
			close(fd);
			moat_buf_release(&b);
			moat_error_set_where(err, path, 0, 0);
			moat_error_set(err, "cannot read config: larger than %u bytes",
				       MOAT_CONFIG_MAX_BYTES);
			return -EFBIG;
		}
		moat_buf_append(&b, chunk, (size_t)n);
		if (b.oom) {
			close(fd);
			moat_buf_release(&b);
			moat_error_set_where(err, path, 0, 0);
			moat_error_set(err, "cannot read config: out of memory");
			return -ENOMEM;
		}
	}
	close(fd);
	r = moat_config_load_string(c, b.data ? b.data : "", b.len, path, flags, err);
	moat_buf_release(&b);
	return r;
}

int moat_config_user_path(char *out, size_t outsz)
{
	const char *xdg = getenv("XDG_CONFIG_HOME");
	const char *home = getenv("HOME");
	int n;

	if (xdg && xdg[0] == '/')
		n = snprintf(out, outsz, "%s/moat/config.json", xdg);
	else if (home && home[0] == '/')
		n = snprintf(out, outsz, "%s/.config/moat/config.json", home);
	else
		return -ENOENT;
	if (n < 0 || (size_t)n >= outsz)
		return -ENAMETOOLONG;
	return access(out, F_OK) == 0 ? 0 : -ENOENT;
}

int moat_config_project_path(const char *dir, char *out, size_t outsz)
{
	int n = snprintf(out, outsz, "%s/.moat/config.json", strcmp(dir, "/") ? dir : "");

	if (n < 0 || (size_t)n >= outsz)
		return -ENAMETOOLONG;
	return access(out, F_OK) == 0 ? 0 : -ENOENT;
}
