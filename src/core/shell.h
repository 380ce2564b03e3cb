/* The shell command parser: reads a command string as bash would read it and
 * returns a syntax tree of commands, words and redirections.
 *
 * Words carry their text after quote removal with every expansion kept
 * verbatim ("$HOME", "$(date)"), plus flags saying whether the value can be
 * known before running. Command and process substitutions (and backquotes,
 * also inside double quotes, ${...} and here-document bodies) are parsed
 * recursively: their commands run, so they are part of the tree.
 *
 * Everything is allocated from an arena owned by the caller and freed at
 * once. Parsing is linear in the input (no backtracking, no rescans except a
 * bounded look-ahead) and recursion is bounded by MOAT_SH_MAX_NEST, so no
 * input can blow the stack or take quadratic time. Pure: no I/O. */
#ifndef MOAT_CORE_SHELL_H
#define MOAT_CORE_SHELL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- arena ------------------------------------------------------------ */

#define MOAT_ARENA_MAX_BYTES ((size_t)512 << 20) /* allocation fails beyond this */

struct moat_arena_chunk;

struct moat_arena {
	struct moat_arena_chunk *chunks; /* heap chunks, newest first */
	char *cur;
	size_t left;
	size_t next;  /* size of the next heap chunk */
	size_t total; /* bytes taken from the heap */
};

/* Start an arena; buf (may be NULL) is a first region the arena does not free. */
void moat_arena_init(struct moat_arena *a, void *buf, size_t size);
void *moat_arena_alloc_slow(struct moat_arena *a, size_t n);
/* 8-byte aligned, NULL when out of memory or over MOAT_ARENA_MAX_BYTES. */
static inline void *moat_arena_alloc(struct moat_arena *a, size_t n)
{
	size_t r = (n + 7) & ~(size_t)7;

	if (r - 1 < a->left && n <= MOAT_ARENA_MAX_BYTES) {
		void *p = a->cur;

		a->cur += r;
		a->left -= r;
		return p;
	}
	return moat_arena_alloc_slow(a, n);
}
char *moat_arena_strndup(struct moat_arena *a, const char *s, size_t n);
/* Free every heap chunk; the arena is empty and reusable afterwards. */
void moat_arena_release(struct moat_arena *a);

/* ---- syntax tree -------------------------------------------------------- */

#define MOAT_SH_MAX_LEN ((size_t)1 << 20) /* bytes of command text */
#define MOAT_SH_MAX_NEST 64		  /* nested compounds, substitutions, ${ }, $(( )) */
#define MOAT_SH_MAX_WORDS 262144	  /* words in one parse */
#define MOAT_SH_MAX_COMMANDS 131072	  /* commands (simple and compound) in one parse */

/* word flags */
#define MOAT_SHW_QUOTED 0x01u	 /* some part was quoted or escaped */
#define MOAT_SHW_EXPAND 0x02u	 /* contains $x, ${..}, $(..), `..`, $((..)), <(..): value unknown */
#define MOAT_SHW_GLOB 0x04u	 /* unquoted * ? or [..] */
#define MOAT_SHW_TILDE 0x08u	 /* leading unquoted ~ */
#define MOAT_SHW_SUBST 0x10u	 /* contains a command or process substitution */
#define MOAT_SHW_PROCSUBST 0x20u /* contains <( ) or >( ) */
#define MOAT_SHW_BRACE 0x40u	 /* unquoted brace expansion {a,b} / {1..3}: see moat_sh_word_btext */
#define MOAT_SHW_ATILDE 0x80u	 /* an assignment whose value starts with an unquoted ~ */

struct moat_sh_node;

#define MOAT_SH_SUB_CMD 1 /* $( ) or backquotes */
#define MOAT_SH_SUB_IN 2  /* <( ): the command's output is read as a file */
#define MOAT_SH_SUB_OUT 3 /* >( ): the command reads what is written to it */

struct moat_sh_sub {
	int kind;
	uint32_t off;		   /* offset of the '$', '`', '<' or '>' */
	struct moat_sh_node *body; /* a MOAT_SH_LIST */
	struct moat_sh_sub *next;
	int view_lo, view_hi;	   /* scratch for the consumer (cmd.c), -1 initially */
};

/* Where the expansions are in a word's text: everything outside the spans
 * is literal (quotes removed), everything inside is the expansion's source
 * verbatim. Expansions nested in ${...} or $((...)) belong to that span. */
#define MOAT_SH_SPAN_PARAM 1 /* $name, ${...}, $1, $@, $? ... */
#define MOAT_SH_SPAN_CMD 2   /* $( ) or backquotes (sub is its substitution) */
#define MOAT_SH_SPAN_ARITH 3 /* $(( )) */
#define MOAT_SH_SPAN_PROC 4  /* <( ) or >( ) */

struct moat_sh_span {
	uint32_t off, len;	  /* in the word's text */
	uint8_t kind;
	bool dq;		  /* inside double quotes (or a here-document body): not split */
	struct moat_sh_sub *sub;  /* MOAT_SH_SPAN_CMD / PROC */
	struct moat_sh_span *next;
};

struct moat_sh_word {
	const char *text;	  /* after quote removal, expansions verbatim, NUL-terminated */
	struct moat_sh_sub *subs; /* substitutions anywhere in the word, in order */
	struct moat_sh_span *spans; /* MOAT_SHW_EXPAND: where the expansions are, in order */
	uint32_t len;
	uint32_t off;	 /* byte offset in the parsed source */
	uint16_t flags;
	uint16_t eq;	 /* assignment NAME=, NAME+=, NAME[..]=: index of '=' plus one; else 0 */
};

/* MOAT_SHW_BRACE: the text with unquoted '{' ',' '}' as bytes 1, 2, 3 (stored
 * after the text), for brace expansion; NULL otherwise. */
static inline const char *moat_sh_word_btext(const struct moat_sh_word *w)
{
	return (w->flags & MOAT_SHW_BRACE) ? w->text + w->len + 1 : (const char *)0;
}

/* redirection operators */
enum moat_sh_redir_op {
	MOAT_SH_R_IN = 1,	   /* <  */
	MOAT_SH_R_OUT,		   /* >  */
	MOAT_SH_R_APPEND,	   /* >> */
	MOAT_SH_R_CLOBBER,	   /* >| */
	MOAT_SH_R_RDWR,		   /* <> */
	MOAT_SH_R_DUPIN,	   /* <& */
	MOAT_SH_R_DUPOUT,	   /* >& (a file when the target is not a number or '-') */
	MOAT_SH_R_ALL,		   /* &> */
	MOAT_SH_R_ALL_APPEND,	   /* &>> */
	MOAT_SH_R_HEREDOC,	   /* << */
	MOAT_SH_R_HEREDOC_STRIP,   /* <<- */
	MOAT_SH_R_HERESTRING,	   /* <<< */
};

struct moat_sh_redir {
	int op;
	int fd;			    /* explicit descriptor, -1 when none, -2 for {name} */
	struct moat_sh_word target; /* file, descriptor, here-string or here-doc delimiter */
	/* here-documents: the body; MOAT_SHW_QUOTED when the delimiter was quoted
	 * (literal body), else expansions in the body are parsed (subs). */
	struct moat_sh_word body;
	struct moat_sh_redir *next;
};

enum moat_sh_kind {
	MOAT_SH_LIST = 1,  /* kids: and-or items, each with op (what follows it) */
	MOAT_SH_SIMPLE,	   /* assigns, words, redirs */
	MOAT_SH_PIPELINE,  /* kids: stages (2 or more) */
	MOAT_SH_SUBSHELL,  /* kids: one LIST */
	MOAT_SH_GROUP,	   /* { }: kids: one LIST */
	MOAT_SH_IF,	   /* kids: cond, then, [cond, then]..., [else] (LISTs) */
	MOAT_SH_WHILE,	   /* kids: cond, body */
	MOAT_SH_UNTIL,	   /* kids: cond, body */
	MOAT_SH_FOR,	   /* name, words (the in-list), kids: body */
	MOAT_SH_SELECT,	   /* as FOR */
	MOAT_SH_ARITH_FOR, /* words: the (( )) text, kids: body */
	MOAT_SH_CASE,	   /* words[0]: subject, kids: CASE_ITEMs */
	MOAT_SH_CASE_ITEM, /* words: patterns, kids: one LIST */
	MOAT_SH_FUNC,	   /* name, kids: the body (a compound command) */
	MOAT_SH_COND,	   /* [[ ]]: words */
	MOAT_SH_ARITH,	   /* (( )): words[0] holds the expression */
	MOAT_SH_COPROC,	   /* name (may be NULL), kids: the command */
};

/* op: what follows an item of a LIST */
#define MOAT_SH_OP_NONE 0
#define MOAT_SH_OP_SEQ 1 /* ; or newline */
#define MOAT_SH_OP_BG 2	 /* & */
#define MOAT_SH_OP_AND 3 /* && */
#define MOAT_SH_OP_OR 4	 /* || */

/* node flags */
#define MOAT_SHN_BG 0x01u	  /* runs in the background (its and-or list ends with &) */
#define MOAT_SHN_NEGATE 0x02u	  /* ! pipeline */
#define MOAT_SHN_TIME 0x04u	  /* time pipeline */
#define MOAT_SHN_PIPE_STDERR 0x08u /* stage followed by |& */

struct moat_sh_node {
	uint8_t kind;
	uint8_t op;
	uint16_t flags;
	uint32_t off; /* offset of the first byte of the command */
	struct moat_sh_node *kids;
	struct moat_sh_node *next;
	struct moat_sh_word *words;
	struct moat_sh_word *assigns; /* SIMPLE: leading NAME=value (array elements follow their NAME=) */
	struct moat_sh_redir *redirs;
	struct moat_sh_word *name; /* FUNC, FOR, SELECT, COPROC */
	uint32_t nwords;
	uint32_t nassigns;
};

struct moat_sh_error {
	size_t offset;	 /* byte offset in the source where the problem is */
	const char *msg; /* static string, lower case */
};

/* Parse src[0..len). Returns 0 with *ret a MOAT_SH_LIST (never NULL), or
 * -EINVAL (syntax error, unterminated quote/substitution/here-document,
 * unbalanced keyword, NUL byte, a limit exceeded) with err filled, or
 * -ENOMEM. Everything hangs off the arena. */
int moat_sh_parse(struct moat_arena *a, const char *src, size_t len, struct moat_sh_node **ret,
		  struct moat_sh_error *err);
/* The same for text found nested nest levels deep in another command (sh -c
 * BODY): the nesting limit counts from there, so re-parsed text cannot add
 * its own MOAT_SH_MAX_NEST levels of recursion. */
int moat_sh_parse_nested(struct moat_arena *a, const char *src, size_t len, int nest,
			 struct moat_sh_node **ret, struct moat_sh_error *err);

/* Line and column (1-based) of a byte offset, for messages. */
void moat_sh_line_col(const char *src, size_t len, size_t off, int *ret_line, int *ret_col);

#endif
