/* moat error reporting: one fixed-size struct, no allocation, safe to copy.
 *
 * Every fallible libmoat call returns int: 0 on success, a negative errno on
 * failure, and when it was given a struct moat_error it fills it with the
 * place (file:line:column or argument name) and a one-line message. */
#ifndef MOAT_ERROR_H
#define MOAT_ERROR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MOAT_ERROR_WHERE_MAX 512
#define MOAT_ERROR_MSG_MAX 768

struct moat_error {
	/* "file:line:column" or "argument --foo" or ""; never NULL-terminated garbage */
	char where[MOAT_ERROR_WHERE_MAX];
	/* key path inside a document ("safety.path_rules[2].pattern") or "" */
	char key[256];
	/* lower-case sentence without a trailing period */
	char msg[MOAT_ERROR_MSG_MAX];
};

void moat_error_clear(struct moat_error *e);
/* Set the message; where/key untouched. Safe with e == NULL. */
void moat_error_set(struct moat_error *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void moat_error_set_where(struct moat_error *e, const char *file, int line, int column);
void moat_error_set_key(struct moat_error *e, const char *key);
/* Render "where: key: msg" (parts omitted when empty) into out. */
size_t moat_error_format(const struct moat_error *e, char *out, size_t outsz);

#ifdef __cplusplus
}
#endif
#endif
