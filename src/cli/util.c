/* Helpers shared by the subcommands: error printing, reading input with a
 * cap, the working directory, and the environment lookup for config
 * expansion (the only place the CLI hands getenv to the core). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/str.h"
#include "cli/cli.h"
#include "core/config.h"
#include "core/path.h"

int cli_usage_error(const char *sub, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "moat %s: ", sub);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return MOAT_EXIT_USAGE;
}

int cli_print_error(const char *sub, const struct moat_error *e)
{
	char buf[2048];

	moat_error_format(e, buf, sizeof(buf));
	fprintf(stderr, "moat %s: %s\n", sub, buf);
	return MOAT_EXIT_USAGE;
}

int cli_read_all(const char *path, size_t cap, char **ret, size_t *ret_len)
{
	struct moat_buf b = MOAT_BUF_INIT;
	int fd = 0;
	char tmp[65536];

	if (strcmp(path, "-") != 0) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -errno;
	}
	for (;;) {
		ssize_t n = read(fd, tmp, sizeof(tmp));

		if (n < 0) {
			if (errno == EINTR)
				continue;
			int r = -errno;
			if (fd)
				close(fd);
			moat_buf_release(&b);
			return r;
		}
		if (n == 0)
			break;
		if (b.len + (size_t)n > cap) {
			if (fd)
				close(fd);
			moat_buf_release(&b);
			return -EFBIG;
		}
		moat_buf_append(&b, tmp, (size_t)n);
	}
	if (fd)
		close(fd);
	*ret_len = b.len;
	*ret = moat_buf_steal(&b);
	return *ret ? 0 : -ENOMEM;
}

static const char *env_lookup(const char *name, void *ud)
{
	(void)ud;
	return getenv(name);
}

void cli_install_env(void)
{
	moat_config_set_env(env_lookup, NULL);
}

int cli_resolve_cwd(const char *arg, char *out, size_t outsz)
{
	char here[MOAT_PATH_MAX];

	if (!getcwd(here, sizeof(here)))
		return -errno;
	if (!arg)
		arg = here;
	return moat_path_normalize(arg, strlen(arg), here, out, outsz);
}

bool cli_is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h") || !strcmp(arg, "help");
}
