/* Fuzz the shell parser and command analysis: any input is parsed and
 * analysed with the unrecoverable-operation floor on, every default
 * denied-command pattern is matched against the result, and the input is
 * also tried as a pattern. Must never crash, leak or hang; an analysis must
 * be internally consistent (findings and pipes name views that exist). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/cmd.h"
#include "core/config.h"
#include "core/shell.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct moat_cmdpat *pats[64];
static size_t npats;

static void check(const struct moat_cmd_analysis *a)
{
	for (size_t v = 0; v < a->nviews; v++) {
		const struct moat_cmdview *w = &a->views[v];

		if (!w->prog || !w->text || !w->argv || w->argv[w->argc] != NULL)
			abort();
		if (w->feeds_from >= (int)v || w->feeds_first > w->feeds_from ||
		    (w->feeds_from >= 0 && w->feeds_first < 0))
			abort();
		if (w->parent >= (int)v)
			abort();
		if (w->depth < 0 || w->depth > MOAT_CMD_MAX_DEPTH)
			abort();
	}
	for (size_t f = 0; f < a->nfindings; f++)
		if (a->findings[f].view >= a->nviews || !a->findings[f].rule[0])
			abort();
	for (size_t r = 0; r < a->nredirs; r++)
		if (a->redirs[r].view >= a->nviews || !a->redirs[r].target)
			abort();
	for (size_t p = 0; p < a->npaths; p++)
		if (a->paths[p].view >= a->nviews || !a->paths[p].text ||
		    (a->paths[p].abs && a->paths[p].abs[0] != '/'))
			abort();
	if (a->fork_bomb >= (int)a->nviews)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct moat_cmd_opts opts = {.home = "/home/u", .hardline = true};
	struct moat_cmd_analysis *a = NULL;
	struct moat_error err;
	size_t view;

	if (!npats)
		for (; moat_default_denied_commands[npats] && npats < 64; npats++)
			if (moat_cmdpat_compile(moat_default_denied_commands[npats], &pats[npats],
						&err) != 0)
				abort();
	if (moat_cmd_analyze((const char *)data, size, &opts, &a, &err) == 0) {
		check(a);
		for (size_t i = 0; i < npats; i++)
			if (moat_cmdpat_match(pats[i], a, &view) && view >= a->nviews)
				abort();
		/* the input as a pattern, against its own analysis */
		if (size < 512 && !memchr(data, 0, size)) {
			char *s = malloc(size + 1);
			struct moat_cmdpat *p = NULL;

			memcpy(s, data, size);
			s[size] = '\0';
			if (moat_cmdpat_compile(s, &p, &err) == 0) {
				if (moat_cmdpat_match(p, a, &view) && view >= a->nviews)
					abort();
				moat_cmdpat_free(p);
			}
			free(s);
		}
		moat_cmd_analysis_free(a);
	}
	/* a working directory, then hardline off and no home, take other paths */
	opts.cwd = "/home/u/project";
	if (moat_cmd_analyze((const char *)data, size, &opts, &a, &err) == 0) {
		check(a);
		moat_cmd_analysis_free(a);
	}
	opts.cwd = NULL;
	opts.hardline = false;
	opts.home = NULL;
	if (moat_cmd_analyze((const char *)data, size, &opts, &a, &err) == 0) {
		check(a);
		moat_cmd_analysis_free(a);
	}
	return 0;
}
