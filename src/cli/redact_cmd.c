/* moat redact: standard input to standard output with secrets redacted,
 * using the same redactor as the audit log. Input is read whole (bounded)
 * so that multi-line secrets such as PEM blocks are seen at once. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "cli/cli.h"
#include "core/redact.h"

#define REDACT_MAX_INPUT (256u << 20)

int cmd_redact(int argc, char **argv)
{
	struct moat_buf out = MOAT_BUF_INIT;
	char *in = NULL;
	size_t len = 0;
	int r;

	for (int i = 1; i < argc; i++) {
		if (cli_is_help(argv[i])) {
			printf("usage: moat redact < input > output\n\n"
			       "Copy standard input to standard output with secrets replaced by "
			       "%s:\ntokens and keys of well-known shapes, passwords in URLs and "
			       "key=value pairs,\nAuthorization headers, PEM private keys, and "
			       "opaque tokens of 32+ characters.\n\nexit status: 0, or 2 when the "
			       "input cannot be read (over 256 MiB).\n",
			       MOAT_REDACTED);
			return 0;
		}
		return cli_usage_error("redact", "unexpected argument '%s'", argv[i]);
	}
	r = cli_read_all("-", REDACT_MAX_INPUT, &in, &len);
	if (r < 0)
		return cli_usage_error("redact", "cannot read standard input: %s", strerror(-r));
	r = moat_redact(in, len, &out);
	free(in);
	if (r < 0 || out.oom) {
		moat_buf_release(&out);
		return cli_usage_error("redact", "out of memory");
	}
	if (out.len && fwrite(out.data, 1, out.len, stdout) != out.len) {
		moat_buf_release(&out);
		return cli_usage_error("redact", "cannot write standard output");
	}
	moat_buf_release(&out);
	if (fflush(stdout))
		return cli_usage_error("redact", "cannot write standard output: %s",
				       strerror(errno));
	return 0;
}
