/* Fuzz the path normalizer: random bytes, with a cwd picked by the first
 * byte (Unix, Windows drive, UNC, none). Checks the invariants every caller
 * relies on: refused bytes are refused, results are absolute in one of the
 * three forms, hold no "//" (but the UNC prefix), "." or ".." components nor
 * a trailing slash, and normalizing a result gives it back. */
#include <assert.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/str.h"
#include "core/path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const cwds[] = {"/home/user/proj", "C:\\Users\\Me\\proj", "\\\\srv\\share\\dir",
				   NULL};

static void check_shape(const char *out, bool posix)
{
	size_t len = strlen(out);
	size_t i = 0;
	bool unc = out[0] == '/' && out[1] == '/';
	bool drive = out[0] >= 'a' && out[0] <= 'z' && out[1] == ':' && out[2] == '/';

	assert(len > 0 && len < MOAT_PATH_MAX);
	assert(moat_utf8_valid(out, len));
	assert(out[0] == '/' || drive);
	assert(!(out[0] >= 'A' && out[0] <= 'Z' && out[1] == ':'));
	if (posix)
		assert(out[0] == '/' && !unc);
	if (unc) {
		assert(out[2] != '/' && out[2] != '\0');
		i = 2;
	}
	if (drive)
		i = 2;
	assert(strstr(out + i, "//") == NULL);
	if (!(len == 1 || (drive && len == 3)))
		assert(out[len - 1] != '/');
	/* no "." or ".." components */
	for (const char *p = out; *p; p++) {
		if (*p != '/')
			continue;
		if (p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
			abort();
		if (p[1] == '.' && p[2] == '.' && (p[3] == '/' || p[3] == '\0'))
			abort();
	}
	if (unc || drive) {
		/* Windows forms never keep a backslash: it was a separator */
		assert(strchr(out, '\\') == NULL);
	}
	assert(moat_path_within(out, "/"));
	assert(moat_path_within(out, out));
}

static void check_idempotent(const char *out, bool posix)
{
	char again[MOAT_PATH_MAX], spelled[MOAT_PATH_MAX];
	size_t len = strlen(out);
	int r;

	memcpy(spelled, out, len + 1);
	/* a UNC result is re-read in its backslash spelling ("//x" is Unix) */
	if (!posix && out[0] == '/' && out[1] == '/')
		for (size_t i = 0; i < len; i++)
			if (spelled[i] == '/')
				spelled[i] = '\\';
	if (posix)
		r = moat_path_normalize_posix(spelled, len, NULL, again, sizeof(again));
	else
		r = moat_path_normalize(spelled, len, NULL, again, sizeof(again));
	assert(r == 0);
	assert(strcmp(again, out) == 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char out[MOAT_PATH_MAX], pout[MOAT_PATH_MAX];
	const char *cwd, *in;
	size_t len;
	bool valid;
	int r, rp;

	if (size < 1)
		return 0;
	cwd = cwds[data[0] % MOAT_ARRAY_SIZE(cwds)];
	in = (const char *)data + 1;
	len = size - 1;
	valid = moat_utf8_valid(in, len);

	memset(out, 'Z', sizeof(out));
	r = moat_path_normalize(in, len, cwd, out, sizeof(out));
	if (len == 0)
		assert(r == -EINVAL);
	else if (len >= MOAT_PATH_MAX)
		assert(r == -ENAMETOOLONG);
	else if (!valid)
		assert(r == -EINVAL);
	if (r != 0) {
		assert(r == -EINVAL || r == -ENAMETOOLONG);
		assert(out[0] == 'Z'); /* never written on failure */
	} else {
		check_shape(out, false);
		check_idempotent(out, false);
		/* a Unix absolute input stays Unix, whatever the cwd */
		if (in[0] == '/')
			assert(out[0] == '/' && out[1] != '/');
	}

	rp = moat_path_normalize_posix(in, len, cwd, pout, sizeof(pout));
	if (rp == 0) {
		check_shape(pout, true);
		check_idempotent(pout, true);
		/* when the input is Unix-shaped both readings agree */
		if (r == 0 && !moat_path_is_windows_form(out) && cwd && cwd[0] == '/')
			assert(strcmp(out, pout) == 0);
	} else if (valid && len > 0 && len < MOAT_PATH_MAX && cwd && cwd[0] == '/') {
		/* with a Unix cwd only length can fail the POSIX reading */
		assert(rp == -ENAMETOOLONG);
	}

	/* the small predicates on the raw bytes, NUL-terminated */
	if (len < 256) {
		char name[256];

		memcpy(name, in, len);
		name[len] = '\0';
		(void)moat_path_arg_name(name);
		(void)moat_path_within(name, "/ws");
		(void)moat_path_is_windows_form(name);
	}
	return 0;
}
