/* Fuzz the plan's parsers and builder: --net values, then a profile layer
 * built from the input (paths, masks, protected names, limits, flags) over
 * each built-in profile, planned against faked kernel features and printed
 * as JSON. Input: lines; line 1 a --net value, line 2 feature bits, the rest
 * "r PATH" (read-only), "w PATH" (read-write), "m PATH" (mask), "p NAME"
 * (protected), "e NAME" (env), "d PATTERN" (denied path). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text, *line, *next;
	struct moat_profile over;
	struct moat_error err;
	struct moat_kfeatures kf;
	struct moat_strv denied = {.v = NULL};
	unsigned bits = 0;
	int lineno = 0;
	static char *argv[] = {"x", NULL};

	if (size > 4096)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	moat_profile_init(&over, "fuzz");
	moat_error_clear(&err);
	for (line = text; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		lineno++;
		if (lineno == 1) {
			(void)moat_parse_net(line, &over, &err);
			continue;
		}
		if (lineno == 2) {
			bits = (unsigned)strtoul(line, NULL, 16);
			continue;
		}
		if (strlen(line) < 3 || line[1] != ' ')
			continue;
		switch (line[0]) {
		case 'r':
			moat_strv_add(&over.ro, line + 2);
			over.set |= MOAT_PF_RO;
			break;
		case 'w':
			moat_strv_add(&over.rw, line + 2);
			over.set |= MOAT_PF_RW;
			break;
		case 'm':
			moat_strv_add(&over.mask, line + 2);
			over.set |= MOAT_PF_MASK;
			break;
		case 'p':
			moat_strv_add(&over.protect, line + 2);
			over.set |= MOAT_PF_PROTECT;
			break;
		case 'e':
			moat_strv_add(&over.env_pass, line + 2);
			over.set |= MOAT_PF_ENV_PASS;
			break;
		case 'd':
			moat_strv_add(&denied, line + 2);
			break;
		default:
			break;
		}
	}
	over.mem_mb = (long)(bits >> 8) & 0xfff;
	over.pids = (long)(bits >> 20) & 0x3ff;
	over.set |= (bits & 0x80) ? (MOAT_PF_MEM | MOAT_PF_PIDS) : 0;

	for (size_t i = 0; moat_profile_builtin_names[i]; i++) {
		struct moat_profile p;
		struct moat_plan_context ctx;
		struct moat_plan *plan = NULL;

		if (moat_profile_builtin(moat_profile_builtin_names[i], &p) < 0)
			continue;
		(void)moat_profile_layer(&p, &over, &err);
		moat_kfeatures_full(&kf);
		kf.landlock_abi = (int)(bits & 0xf) - 4; /* -4..11 */
		kf.userns = bits & 0x10;
		kf.is_root = bits & 0x20;
		kf.cgroup = bits & 0x40;
		memset(&ctx, 0, sizeof(ctx));
		ctx.workspace = "/home/u/ws";
		ctx.cwd = "/home/u/ws/sub";
		ctx.home = "/home/u";
		ctx.denied_extra = &denied;
		ctx.argv = argv;
		if (moat_plan_build(&p, &ctx, &kf, &plan, &err) == 0) {
			struct moat_buf b = MOAT_BUF_INIT;
			char gaps[256];

			moat_plan_to_json(plan, &b);
			moat_buf_release(&b);
			(void)moat_plan_gaps(plan, gaps, sizeof(gaps));
			moat_plan_free(plan);
		}
		moat_profile_release(&p);
	}
	moat_strv_release(&denied);
	moat_profile_release(&over);
	free(text);
	return 0;
}
