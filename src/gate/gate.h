/* The approval gate: what happens to an ASK.
 *
 *   1. a hard DENY stays DENY; ALLOW and soft DENY pass through unchanged
 *   2. answers remembered for this session (APPROVED_ALWAYS: the tool, or a
 *      command glob for bash)
 *   3. pre-approvals from the configuration ("approvals": tool, argument,
 *      case-sensitive glob on that one argument)
 *   4. the approver, within approval_timeout; concurrent asks for the same
 *      thing (tool + arguments) are asked once and all get the answer
 *   5. no approver, no terminal, a timeout or an error: DENIED, reason said
 *
 * Thread-safe. */
#ifndef MOAT_GATE_H
#define MOAT_GATE_H

#include <stdbool.h>

#include <jansson.h>

#include <moat/policy.h>
#include <moat/session.h>

#include "core/config.h"

#define MOAT_GATE_DEFAULT_TIMEOUT_S 120
#define MOAT_GATE_MAX_REMEMBERED 1024 /* session answers kept */

struct moat_gate;

struct moat_approval {
	enum moat_verdict verdict; /* final */
	bool asked;		   /* an approver was asked (or joined an ask in flight) */
	char by[32];		   /* "policy", "preapproved", "session", "tty", "callback",
				    * "elicitation", "none" */
	char answer[24];	   /* "approved", "denied", "approved_always", "" */
	char rule[160];		   /* the approvals entry or remembered pattern that matched */
	char reason[256];	   /* why, in one sentence (for a denial: how to pre-approve) */
	bool deferred;		   /* MOAT_GATE_DEFER: only a human could answer, nobody
				    * was asked; verdict is DENY */
};

/* Pre-approvals and the timeout come from cfg (compiled here; -EINVAL with
 * err for a bad glob, though config loading checked it). */
int moat_gate_new(const struct moat_config *cfg, struct moat_gate **ret, struct moat_error *err);
struct moat_gate *moat_gate_free(struct moat_gate *g);

/* The default approver (NULL: none). name is for the record. */
void moat_gate_set_approver(struct moat_gate *g, moat_approver_fn fn, void *ud, const char *name);

/* Decide. tool is canonical ("bash"); args the parsed arguments; d the
 * policy's decision. approver overrides the default when fn is non-NULL.
 * args_json_redacted and summary are shown to the approver. Returns 0. */
int moat_gate_decide(struct moat_gate *g, const char *call_id, const char *tool, json_t *args,
		     const struct moat_decision *d, moat_approver_fn fn, void *ud,
		     const char *name, struct moat_approval *ret);

/* moat_gate_decide with flags. MOAT_GATE_DEFER: where the approver would be
 * called (an ASK that nothing remembered or pre-approved settles, a sticky
 * ASK, or an identical ask in flight to join), return at once instead with
 * ret->deferred set and verdict DENY: nobody is asked and nothing waits, so
 * that a caller that must not block (an event loop) can hand the call to a
 * thread that may. Without an approver the ASK is DENIED as usual. */
#define MOAT_GATE_DEFER 0x1u
int moat_gate_decide_flags(struct moat_gate *g, const char *call_id, const char *tool, json_t *args,
			   const struct moat_decision *d, moat_approver_fn fn, void *ud,
			   const char *name, unsigned flags, struct moat_approval *ret);

/* The terminal approver: the boxed prompt on /dev/tty (never stdin),
 * "Allow? [y]es / [n]o / [a]lways" (and for bash "[p]refix always" when
 * ask->always_prefix is set). -ENOTTY when there is no terminal. */
int moat_tty_approver(void *ud, const struct moat_ask *ask, int timeout_ms,
		      struct moat_reply *ret);

#endif
