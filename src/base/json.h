/* Strict JSON over jansson, plus a small linear scanner that finds where a
 * node sits in the source text.
 *
 * Strict means: duplicate keys in any object are refused (a checker and a
 * user could otherwise read different values), "\u0000" in strings and raw
 * NUL bytes are refused, invalid UTF-8 is refused, nesting is bounded before
 * jansson recurses, and the document size is bounded. Errors name
 * "name:line:column" (columns count Unicode characters, 1-based, as jansson
 * does) and say what is wrong in lower case.
 *
 * jansson does not remember positions, so the scanner walks the text again:
 * moat_json_locate() maps a path of object keys and "[N]" indices to a
 * line:column, and moat_json_iter walks the members of one object or array
 * in text order, so a caller walking a parsed tree can know the offset of
 * every node in linear time.
 *
 * The scanner functions expect text that jansson accepted; on other text they
 * fail cleanly (-EINVAL / -ENOENT), never read out of bounds.
 * Pure: no I/O. */
#ifndef MOAT_BASE_JSON_H
#define MOAT_BASE_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include <moat/error.h>

/* Nesting limit for tool arguments and the default for moat_json_parse_object. */
#define MOAT_JSON_MAX_DEPTH 64
/* Longest token quoted back in an error message. */
#define MOAT_JSON_MAX_QUOTE 64

/* "object", "array", "string", "integer", "number", "boolean", "null" */
const char *moat_json_type_name(const json_t *v);

/* Parse a document whose top level is an object or an array.
 * name is used in error positions ("args:1:7"); NULL means "<input>".
 * len over max_bytes, nesting deeper than max_depth, duplicate keys, NUL
 * characters, invalid UTF-8, a byte order mark and trailing garbage are all
 * -EINVAL with err filled. -ENOMEM on allocation failure. */
int moat_json_parse(const char *text, size_t len, const char *name, size_t max_bytes,
		    unsigned max_depth, json_t **ret, struct moat_error *err);

/* Same, for tool-call arguments: the top level must be an object; nesting is
 * bounded by MOAT_JSON_MAX_DEPTH. */
int moat_json_parse_object(const char *text, size_t len, const char *name, size_t max_bytes,
			   json_t **ret, struct moat_error *err);

/* The fast path of moat_json_parse_object for the usual tool-call
 * arguments, without jansson's lexer: an object of at most
 * MOAT_JSON_FLAT_MAX_MEMBERS members, each key a plain string (printable
 * ASCII without escapes) met once, each value a plain string, an integer of
 * at most 18 digits (no leading zero, no "-0"), true, false or null;
 * whitespace around tokens as JSON allows. Such text is strict JSON that
 * moat_json_parse_object accepts, and *ret (a new reference) is the value it
 * makes, members in the same order. Anything else, valid or not (nesting,
 * escapes, non-ASCII, reals, a duplicate key, over max_bytes), is -EAGAIN
 * with nothing made: the caller parses with moat_json_parse_object, which
 * decides and explains. ret NULL: check only. -ENOMEM on allocation
 * failure. */
#define MOAT_JSON_FLAT_MAX_MEMBERS 16
int moat_json_parse_flat(const char *text, size_t len, size_t max_bytes, json_t **ret);
/* The same check on the flat object starting at text[off] ('{'): the offset
 * just past its '}', 0 when it is not one. */
size_t moat_json_flat_end(const char *text, size_t len, size_t off);
/* Tokens of such fast paths, each from text[off]: the offset just past it,
 * 0 when it is not one. A plain string: printable ASCII between quotes, no
 * escapes. A plain integer: as above, its value in *ret. */
size_t moat_json_plain_string(const char *text, size_t len, size_t off);
size_t moat_json_plain_int(const char *text, size_t len, size_t off, json_int_t *ret);
/* The offset of the first byte at or after off that is not JSON whitespace. */
size_t moat_json_skip_ws(const char *text, size_t len, size_t off);

/* 1-based line and column (in characters) of the byte at off (off == len:
 * just past the end). */
void moat_json_linecol(const char *text, size_t len, size_t off, int *ret_line, int *ret_col);

/* Incremental line:column tracking for a walk that visits offsets mostly in
 * increasing order (going backwards restarts from the top; still correct). */
struct moat_json_pos {
	size_t off;
	int line;
	int col; /* characters before off on its line */
};
void moat_json_pos_init(struct moat_json_pos *p);
void moat_json_pos_seek(struct moat_json_pos *p, const char *text, size_t len, size_t off,
			int *ret_line, int *ret_col);

/* Offset of the top-level value (after leading whitespace). */
int moat_json_root(const char *text, size_t len, size_t *ret_off);

/* Walk the members of the object or the elements of the array that starts
 * at container_off. */
struct moat_json_iter {
	const char *text;
	size_t len;
	size_t off;
	bool object;
	bool first;
};
int moat_json_iter_init(struct moat_json_iter *it, const char *text, size_t len,
			size_t container_off);
/* Returns 1 and the offsets of the next member (ret_key_off: the key's
 * opening quote, for objects; for arrays the element's offset), 0 at the end,
 * -EINVAL on malformed text. Either out pointer may be NULL. */
int moat_json_iter_next(struct moat_json_iter *it, size_t *ret_key_off, size_t *ret_value_off);

/* true when the string token at off ("...") decodes to exactly key. */
bool moat_json_string_equals(const char *text, size_t len, size_t off, const char *key);

/* Find the node at path (object keys, or "[N]" for array indices) and give
 * the offset of its value, or of its key when want_key is set and the last
 * component is an object key. n == 0 is the root. -ENOENT when absent. */
int moat_json_locate_offset(const char *text, size_t len, const char *const *path, size_t n,
			    bool want_key, size_t *ret_off);
/* line:column of the value at path. */
int moat_json_locate(const char *text, size_t len, const char *const *path_components, size_t n,
		     int *ret_line, int *ret_col);
/* line:column of the key at path (for "unknown key" errors). */
int moat_json_locate_key(const char *text, size_t len, const char *const *path_components, size_t n,
			 int *ret_line, int *ret_col);

#endif
