/* Secret redaction for logs and audit records. Pure: no I/O.
 *
 * Replaces secrets with "[REDACTED]" while keeping the surrounding text:
 * key=value / key: value for api_key, token, secret, password, passwd, pwd,
 * bearer, authorization, auth, access_key, private_key (any case); flags
 * --api-key/--token/--password/--bearer/--auth/--secret and -p for mysql;
 * "Authorization: Bearer|Basic X"; URL userinfo passwords
 * (scheme://user:pass@host); curl -u/--user user:pass; well-known key shapes
 * (sk-, sk-ant-, AKIA/ASIA, ghp_/gho_/ghu_/ghs_/ghr_/github_pat_, xox?-, AIza,
 * glpat-, JWTs, PEM private key blocks); and bare opaque tokens of 32+
 * characters mixing letters and digits. Ordinary text stays untouched, and
 * so do git/SHA-256 hex digests (40/64/128 hex), UUIDs, ordinary paths and
 * shell references ($TOKEN, ${TOKEN}). "Authorization: Bearer X" keeps the
 * scheme word; quoted values are hidden whole; a PEM block keeps its BEGIN
 * and END lines. Redaction is idempotent: redacting twice equals once. */
#ifndef MOAT_CORE_REDACT_H
#define MOAT_CORE_REDACT_H

#include <stdbool.h>
#include <stddef.h>

#include "base/str.h"

#define MOAT_REDACTED "[REDACTED]"

/* Append the redacted form of [in, in+len) to out. Linear time; allocates
 * only into out. 0, -EINVAL (out NULL, or in NULL with len), -ENOMEM. */
int moat_redact(const char *in, size_t len, struct moat_buf *out);

/* Whether [s, s+n) holds a credential of a well-known shape (the table
 * the redactor reads: sk-, ghp_, AKIA..., glpat-, pypi-, ...) starting
 * where a word starts: a prefix, then at least the shape's minimum of
 * letters, digits, '_' and '-', read more loosely than the redactor reads
 * free text (no shape's own body class, digit or end). The environment's
 * scrubbing asks it (plan.h, moat_env_is_secret). Linear in n. */
bool moat_redact_has_shape(const char *s, size_t n);

#endif
