/* Shell parser tests: the tree for each construct (dumped as a compact
 * string), word text and flags, errors with their offsets, limits at the
 * boundary, and the time to parse a 100 KB command (reported, not asserted). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/str.h"
#include "core/shell.h"
#include "tap.h"

static void dump_node(struct moat_buf *b, const struct moat_sh_node *n);

static void dump_text(struct moat_buf *b, const char *t, size_t len)
{
	bool q = len == 0 || memchr(t, ' ', len);

	if (q)
		moat_buf_putc(b, '\'');
	for (size_t k = 0; k < len; k++) {
		if (t[k] == '\n')
			moat_buf_puts(b, "\\n");
		else if (t[k] == '\t')
			moat_buf_puts(b, "\\t");
		else
			moat_buf_putc(b, t[k]);
	}
	if (q)
		moat_buf_putc(b, '\'');
}

static void dump_word(struct moat_buf *b, const struct moat_sh_word *w)
{
	dump_text(b, w->text, w->len);
	for (const struct moat_sh_sub *s = w->subs; s; s = s->next) {
		moat_buf_puts(b, s->kind == MOAT_SH_SUB_CMD ? "$[" : s->kind == MOAT_SH_SUB_IN ? "<[" : ">[");
		dump_node(b, s->body);
		moat_buf_putc(b, ']');
	}
}

static void dump_words(struct moat_buf *b, const struct moat_sh_word *w, size_t n, const char *sep)
{
	for (size_t i = 0; i < n; i++) {
		if (i)
			moat_buf_puts(b, sep);
		dump_word(b, &w[i]);
	}
}

static const char *opname(int op)
{
	static const char *const names[] = {"?", "<", ">", ">>", ">|", "<>", "<&", ">&", "&>", "&>>", "<<", "<<-", "<<<"};

	return op > 0 && op < (int)MOAT_ARRAY_SIZE(names) ? names[op] : "?";
}

static void dump_redirs(struct moat_buf *b, const struct moat_sh_redir *rd)
{
	for (; rd; rd = rd->next) {
		moat_buf_putc(b, ' ');
		if (rd->fd >= 0)
			moat_buf_printf(b, "%d", rd->fd);
		else if (rd->fd == -2)
			moat_buf_puts(b, "{v}");
		moat_buf_puts(b, opname(rd->op));
		dump_word(b, &rd->target);
		if (rd->op == MOAT_SH_R_HEREDOC || rd->op == MOAT_SH_R_HEREDOC_STRIP) {
			moat_buf_puts(b, (rd->body.flags & MOAT_SHW_QUOTED) ? "[=" : "[");
			dump_word(b, &rd->body);
			moat_buf_putc(b, ']');
		}
	}
}

static void dump_kids(struct moat_buf *b, const struct moat_sh_node *k)
{
	for (; k; k = k->next) {
		dump_node(b, k);
		if (k->next)
			moat_buf_puts(b, " ~ ");
	}
}

static void dump_node(struct moat_buf *b, const struct moat_sh_node *n)
{
	if (n->flags & MOAT_SHN_NEGATE)
		moat_buf_putc(b, '!');
	if (n->flags & MOAT_SHN_TIME)
		moat_buf_puts(b, "time ");
	switch (n->kind) {
	case MOAT_SH_LIST:
		for (const struct moat_sh_node *k = n->kids; k; k = k->next) {
			static const char *const ops[] = {"", "; ", " & ", " && ", " || "};

			dump_node(b, k);
			if (k->next)
				moat_buf_puts(b, ops[k->op]);
			else if (k->op == MOAT_SH_OP_BG)
				moat_buf_puts(b, " &");
		}
		return;
	case MOAT_SH_SIMPLE:
		moat_buf_putc(b, '{');
		dump_words(b, n->assigns, n->nassigns, " ");
		if (n->nassigns && n->nwords)
			moat_buf_putc(b, ' ');
		dump_words(b, n->words, n->nwords, " ");
		dump_redirs(b, n->redirs);
		moat_buf_putc(b, '}');
		return;
	case MOAT_SH_PIPELINE:
		for (const struct moat_sh_node *k = n->kids; k; k = k->next) {
			dump_node(b, k);
			if (k->next)
				moat_buf_puts(b, (k->flags & MOAT_SHN_PIPE_STDERR) ? " |& " : " | ");
		}
		return;
	case MOAT_SH_SUBSHELL:
		moat_buf_putc(b, '(');
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_GROUP:
		moat_buf_puts(b, "grp(");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_IF:
	case MOAT_SH_WHILE:
	case MOAT_SH_UNTIL:
		moat_buf_puts(b, n->kind == MOAT_SH_IF ? "if(" : n->kind == MOAT_SH_WHILE ? "while(" : "until(");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_FOR:
	case MOAT_SH_SELECT:
		moat_buf_puts(b, n->kind == MOAT_SH_FOR ? "for(" : "select(");
		dump_word(b, n->name);
		if (n->nwords) {
			moat_buf_puts(b, " in ");
			dump_words(b, n->words, n->nwords, " ");
		}
		moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_ARITH_FOR:
		moat_buf_puts(b, "afor(");
		dump_words(b, n->words, n->nwords, " ");
		moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_CASE:
		moat_buf_puts(b, "case(");
		dump_words(b, n->words, n->nwords, " ");
		if (n->kids)
			moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_CASE_ITEM:
		moat_buf_puts(b, "item(");
		dump_words(b, n->words, n->nwords, "|");
		moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_FUNC:
		moat_buf_puts(b, "func(");
		dump_word(b, n->name);
		moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_COND:
		moat_buf_puts(b, "cond(");
		dump_words(b, n->words, n->nwords, " ");
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_ARITH:
		moat_buf_puts(b, "arith(");
		dump_words(b, n->words, n->nwords, " ");
		moat_buf_putc(b, ')');
		break;
	case MOAT_SH_COPROC:
		moat_buf_puts(b, "coproc(");
		if (n->name)
			dump_word(b, n->name);
		moat_buf_puts(b, " ~ ");
		dump_kids(b, n->kids);
		moat_buf_putc(b, ')');
		break;
	default:
		moat_buf_puts(b, "??");
		break;
	}
	dump_redirs(b, n->redirs);
}

/* parse and dump; NULL on error (*err filled) */
static char *parse_dump(const char *src, size_t len, struct moat_sh_error *err, int *rc)
{
	struct moat_arena a;
	struct moat_sh_node *root;
	struct moat_buf b = MOAT_BUF_INIT;
	char *out = NULL;

	moat_arena_init(&a, NULL, 0);
	*rc = moat_sh_parse(&a, src, len, &root, err);
	if (*rc == 0) {
		moat_buf_append(&b, "", 0);
		dump_node(&b, root);
		out = moat_buf_steal(&b);
	}
	moat_arena_release(&a);
	return out;
}

static const struct {
	const char *src;
	const char *tree;
} trees[] = {
	/* words and quoting */
	{"echo hi", "{echo hi}"},
	{"  echo   hi  ", "{echo hi}"},
	{"echo 'a b' \"c d\" e\\ f", "{echo 'a b' 'c d' 'e f'}"},
	{"echo \"a\\\"b\" 'it'\\''s' \"\\$x\\\\\\z\"", "{echo a\"b it's $x\\\\z}"},
	{"echo a\"b\"'c'd", "{echo abcd}"},
	{"echo a\\\nb", "{echo ab}"},
	{"echo \"a\\\nb\"", "{echo ab}"},
	{"echo $'a\\tb\\x41\\101\\u00e9\\cA'", "{echo a\\tbAA\xc3\xa9\x01}"},
	{"echo $'a\\x00b'c", "{echo ac}"},
	{"echo $'\\'' $\"loc\"", "{echo ' loc}"},
	{"echo \"$'x'\"", "{echo $'x'}"},
	{"echo a#b # comment", "{echo a#b}"},
	{"# only a comment", ""},
	{"echo $ $x ${y} $1 $@ $? $$ $#", "{echo $ $x ${y} $1 $@ $? $$ $#}"},
	{"echo ${x:-'a b'} ${#x} ${x%%/*} ${x/a/b}", "{echo '${x:-'a b'}' ${#x} ${x%%/*} ${x/a/b}}"},
	{"echo ${x:-{a}}", "{echo ${x:-{a}}}"},
	{"echo {a,b}c", "{echo {a,b}c}"},
	/* lists and pipelines */
	{"a; b && c || d & e", "{a}; {b} && {c} || {d} & {e}"},
	{"a &", "{a} &"},
	{"a\nb\n\nc", "{a}; {b}; {c}"},
	{"a | b |& c", "{a} | {b} |& {c}"},
	{"a |\n b", "{a} | {b}"},
	{"a &&\n\n b", "{a} && {b}"},
	{"! a | b", "!{a} | {b}"},
	{"time -p a", "time {a}"},
	{"(a; b) && { c; }", "({a}; {b}) && grp({c})"},
	{"( (a) )", "(({a}))"},
	{"{ a\n}", "grp({a})"},
	{"echo }", "{echo }}"},
	{"echo {", "{echo {}"},
	/* redirections */
	{"cmd 2>&1 >f &>g >>h <i <>j >|k 3<&0 &>>l {fd}>m", "{cmd 2>&1 >f &>g >>h <i <>j >|k 3<&0 &>>l {v}>m}"},
	{"cmd > 'a b' 2> \"$x\"", "{cmd >'a b' 2>$x}"},
	{">f", "{ >f}"},
	{"<f cat", "{cat <f}"},
	{"echo x>y", "{echo x >y}"},
	{"echo 12>y", "{echo 12>y}"},
	{"echo a2>y", "{echo a2 >y}"},
	{"{ a; } > f 2>&1", "grp({a}) >f 2>&1"},
	{"while read l; do :; done < f", "while({read l} ~ {:}) <f"},
	/* assignments */
	{"A=1 B+=2 C[3]=x cmd A=2", "{A=1 B+=2 C[3]=x cmd A=2}"},
	{"a=(1 2 $(id)) b=x", "{a= 1 2 $(id)$[{id}] b=x}"},
	{"a=(\n 1 # c\n 2\n)", "{a= 1 2}"},
	{"\"A\"=1", "{A=1}"},
	/* substitutions */
	{"echo $(id) `id`", "{echo $(id)$[{id}] `id`$[{id}]}"},
	{"echo \"$(echo \"$(id)\")\"", "{echo '$(echo \"$(id)\")'$[{echo $(id)$[{id}]}]}"},
	{"echo \"a`id`b\"", "{echo a`id`b$[{id}]}"},
	{"echo `echo \\`id\\``", "{echo '`echo \\`id\\``'$[{echo `id`$[{id}]}]}"},
	{"echo ${x:-$(id)}", "{echo ${x:-$(id)}$[{id}]}"},
	{"echo \"${x:-\"$(id)\"}\"", "{echo ${x:-\"$(id)\"}$[{id}]}"},
	{"echo $(( 1 + $(id) ))", "{echo '$(( 1 + $(id) ))'$[{id}]}"},
	{"echo $((cd /; ls) | wc)", "{echo '$((cd /; ls) | wc)'$[({cd /}; {ls}) | {wc}]}"},
	{"echo $( (a) )", "{echo '$( (a) )'$[({a})]}"},
	{"echo $(case x in a) echo A;; esac)", "{echo '$(case x in a) echo A;; esac)'$[case(x ~ item(a ~ {echo A}))]}"},
	{"echo $()", "{echo $()$[]}"},
	{"diff <(ls a) >(wc)", "{diff '<(ls a)'<[{ls a}] >(wc)>[{wc}]}"},
	{"cat < <(ls)", "{cat <<(ls)<[{ls}]}"},
	{"echo \"$(echo \")\")\"", "{echo '$(echo \")\")'$[{echo )}]}"},
	{"echo \"$(echo ')')\"", "{echo '$(echo ')')'$[{echo )}]}"},
	/* here-documents */
	{"cat <<EOF\nhello $(id)\nEOF\necho after", "{cat <<EOF['hello $(id)\\n'$[{id}]]}; {echo after}"},
	{"cat <<'EOF'\n$(id) \\$x\nEOF", "{cat <<EOF[='$(id) \\$x\\n']}"},
	{"cat <<\"E\"OF\nx\nEOF", "{cat <<EOF[=x\\n]}"},
	{"cat <<\\EOF\nx\nEOF", "{cat <<EOF[=x\\n]}"},
	{"cat <<-EOF\n\tx\n\t\tEOF", "{cat <<-EOF[\\tx\\n]}"},
	{"cat <<EOF\n\\$x \\\\ \\a \"q\"\nEOF", "{cat <<EOF['$x \\ \\a \"q\"\\n']}"},
	{"cat <<A; cat <<B\na\nA\nb\nB", "{cat <<A[a\\n]}; {cat <<B[b\\n]}"},
	{"cat <<A <<B\na\nA\nb\nB\necho done", "{cat <<A[a\\n] <<B[b\\n]}; {echo done}"},
	{"cat <<EOF | wc\nx\nEOF", "{cat <<EOF[x\\n]} | {wc}"},
	{"cat <<EOF\nEOF", "{cat <<EOF['']}"},
	{"cat <<EOF\nx\nEOF\n", "{cat <<EOF[x\\n]}"},
	{"x=$(cat <<EOF\na)\nEOF\n)", "{'x=$(cat <<EOF\\na)\\nEOF\\n)'$[{cat <<EOF[a)\\n]}]}"},
	{"cat <<< \"x $(id)\"", "{cat <<<'x $(id)'$[{id}]}"},
	/* compound commands */
	{"if a; then b; elif c; then d; else e; fi", "if({a} ~ {b} ~ {c} ~ {d} ~ {e})"},
	{"if a\nthen b\nfi", "if({a} ~ {b})"},
	{"if [ -f x ]; then echo fi; fi", "if({[ -f x ]} ~ {echo fi})"},
	{"for x in a b; do echo $x; done", "for(x in a b ~ {echo $x})"},
	{"for x\ndo :; done", "for(x ~ {:})"},
	{"for x in a; { echo; }", "for(x in a ~ grp({echo}))"},
	{"for ((i=0;i<3;i++)); do echo; done", "afor(i=0;i<3;i++ ~ {echo})"},
	{"select x in a b; do break; done", "select(x in a b ~ {break})"},
	{"while read l; do echo; done", "while({read l} ~ {echo})"},
	{"until false; do :; done", "until({false} ~ {:})"},
	{"case $x in a|b) echo 1;; *) echo 2;; esac", "case($x ~ item(a|b ~ {echo 1}) ~ item(* ~ {echo 2}))"},
	{"case x in (a) ;; esac", "case(x ~ item(a ~ ))"},
	{"case x in\n a) echo\n esac", "case(x ~ item(a ~ {echo}))"},
	{"case x in a) x;& b) y;;& esac", "case(x ~ item(a ~ {x}) ~ item(b ~ {y}))"},
	{"case x in esac", "case(x)"},
	{"f() { echo; }", "func(f ~ grp({echo}))"},
	{"f ()\n{ echo; }", "func(f ~ grp({echo}))"},
	{"f() ( echo )", "func(f ~ ({echo}))"},
	{"function g { echo; }", "func(g ~ grp({echo}))"},
	{"function g() { echo; } > log", "func(g ~ grp({echo}) >log)"},
	{":(){ :|:& };:", "func(: ~ grp({:} | {:} &)); {:}"},
	{"[[ -f $x && $(id) == y ]]", "cond(-f $x $(id)$[{id}] == y)"},
	{"[[ $x =~ ^(a|b)$ ]]", "cond($x =~ ^ a b $)"},
	{"(( x = $(id) + 1 ))", "arith(' x = $(id) + 1 '$[{id}])"},
	{"((x++)) && echo", "arith(x++) && {echo}"},
	{"((cd /); ls)", "(({cd /}); {ls})"},
	{"coproc { cat; }", "coproc( ~ grp({cat}))"},
	{"coproc NAME { cat; }", "coproc(NAME ~ grp({cat}))"},
	{"coproc cat file", "coproc( ~ {cat file})"},
	{"echo if then fi done", "{echo if then fi done}"},
	{"\"if\" x", "{if x}"},
	{"in x", "{in x}"},
};

static const struct {
	const char *src;
	size_t off;
	const char *msg;
} errors[] = {
	{"echo \"abc", 5, "unterminated double quote"},
	{"echo 'abc", 5, "unterminated single quote"},
	{"echo $'abc", 5, "unterminated $'"},
	{"echo $(ls", 5, "unterminated command substitution"},
	{"echo `ls", 5, "unterminated backquote"},
	{"echo ${x", 5, "unterminated ${"},
	{"cat <(ls", 4, "unterminated process substitution"},
	{"cat <<EOF\nx\n", 4, "unterminated here-document"},
	{"cat <<EOF", 4, "unterminated here-document"},
	{"cat <<EOF\nEOFx", 4, "unterminated here-document"},
	{"echo $(cat <<EOF\nx\n)", 11, "unterminated here-document"},
	{"if true; then echo", 0, "unterminated 'if'"},
	{"if true; echo; fi", 15, "unexpected 'fi'"},
	{"(echo", 0, "unterminated '('"},
	{"echo )", 5, "unexpected ')'"},
	{"fi", 0, "unexpected 'fi'"},
	{"done", 0, "unexpected 'done'"},
	{"echo; }", 6, "unexpected '}'"},
	{"{ echo }", 0, "unterminated '{'"},
	{"case x in a) ;;", 0, "unterminated 'case'"},
	{"case x a) ;; esac", 7, "expected 'in' after 'case WORD'"},
	{"for x in a; do", 0, "unterminated loop: expected 'done'"},
	{"while true", 0, "unterminated loop: expected 'do'"},
	{"| a", 0, "unexpected operator"},
	{"a &&", 4, "missing command"},
	{"a |", 3, "missing command"},
	{"a; ;", 3, "unexpected ';'"},
	{";; a", 0, "unexpected ';'"},
	{"echo >", 5, "missing redirection target"},
	{"echo > ;", 7, "missing redirection target"},
	{"echo a (", 7, "unexpected '('"},
	{"f() echo x", 0, "function body must be a compound command"},
	{"[[ -f x", 0, "unterminated '[['"},
	{"a=(1 2", 2, "unterminated array assignment"},
	{"echo \"$(echo 'x)\"", 13, "unterminated single quote"},
	{"x `echo \"y` z", 2, "unterminated double quote"},
	{"echo ok\nfi", 8, "unexpected 'fi'"},
};

static void test_trees(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(trees); i++) {
		struct moat_sh_error e = {0, NULL};
		int rc;
		char *d = parse_dump(trees[i].src, strlen(trees[i].src), &e, &rc);

		if (!CHECKF(d && strcmp(d, trees[i].tree) == 0, "tree of \"%s\"", trees[i].src))
			fprintf(stderr, "# want %s\n#  got %s (rc %d: %s at %zu)\n", trees[i].tree,
				d ? d : "-", rc, e.msg ? e.msg : "", e.offset);
		free(d);
	}
}

static void test_errors(void)
{
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(errors); i++) {
		struct moat_sh_error e = {0, NULL};
		int rc;
		char *d = parse_dump(errors[i].src, strlen(errors[i].src), &e, &rc);

		if (!CHECKF(!d && rc == -EINVAL && e.offset == errors[i].off && e.msg &&
				    strcmp(e.msg, errors[i].msg) == 0,
			    "error for \"%s\"", errors[i].src))
			fprintf(stderr, "# want %s at %zu\n#  got %s at %zu (rc %d, tree %s)\n", errors[i].msg,
				errors[i].off, e.msg ? e.msg : "-", e.offset, rc, d ? d : "-");
		free(d);
	}
}

/* the first word (argv[idx]) of the first simple command */
static const struct moat_sh_word *word_at(struct moat_arena *a, const char *src, size_t idx)
{
	struct moat_sh_node *root, *n;
	struct moat_sh_error e;

	if (moat_sh_parse(a, src, strlen(src), &root, &e) != 0)
		return NULL;
	n = root->kids;
	while (n && n->kind != MOAT_SH_SIMPLE)
		n = n->kids;
	if (!n || idx >= n->nwords)
		return NULL;
	return &n->words[idx];
}

static void test_word_flags(void)
{
	static const struct {
		const char *src;
		size_t idx;
		const char *text;
		unsigned flags;
	} rows[] = {
		{"echo plain", 1, "plain", 0},
		{"echo 'q'", 1, "q", MOAT_SHW_QUOTED},
		{"echo \\rm", 1, "rm", MOAT_SHW_QUOTED},
		{"\\rm -rf", 0, "rm", MOAT_SHW_QUOTED},
		{"echo $HOME", 1, "$HOME", MOAT_SHW_EXPAND},
		{"echo \"$HOME\"", 1, "$HOME", MOAT_SHW_EXPAND | MOAT_SHW_QUOTED},
		{"echo '$HOME'", 1, "$HOME", MOAT_SHW_QUOTED},
		{"echo ${HOME}/x", 1, "${HOME}/x", MOAT_SHW_EXPAND},
		{"echo $(id)", 1, "$(id)", MOAT_SHW_EXPAND | MOAT_SHW_SUBST},
		{"echo `id`", 1, "`id`", MOAT_SHW_EXPAND | MOAT_SHW_SUBST},
		{"echo <(id)", 1, "<(id)", MOAT_SHW_EXPAND | MOAT_SHW_SUBST | MOAT_SHW_PROCSUBST},
		{"echo $((1+2))", 1, "$((1+2))", MOAT_SHW_EXPAND},
		{"echo *.c", 1, "*.c", MOAT_SHW_GLOB},
		{"echo '*'.c", 1, "*.c", MOAT_SHW_QUOTED},
		{"echo a?", 1, "a?", MOAT_SHW_GLOB},
		{"echo [ab]", 1, "[ab]", MOAT_SHW_GLOB},
		{"[ -f x ]", 0, "[", 0},
		{"echo ~", 1, "~", MOAT_SHW_TILDE},
		{"echo ~/x", 1, "~/x", MOAT_SHW_TILDE},
		{"echo \"~\"", 1, "~", MOAT_SHW_QUOTED},
		{"echo a~", 1, "a~", 0},
		{"echo {a,b}", 1, "{a,b}", MOAT_SHW_BRACE},
		{"echo {1..3}", 1, "{1..3}", MOAT_SHW_BRACE},
		{"echo \"{a,b}\"", 1, "{a,b}", MOAT_SHW_QUOTED},
		{"echo {a}", 1, "{a}", MOAT_SHW_BRACE},
		{"echo {a", 1, "{a", 0},
		{"echo a,b}", 1, "a,b}", 0},
		{"echo ${x}{a,b}", 1, "${x}{a,b}", MOAT_SHW_EXPAND | MOAT_SHW_BRACE},
		/* a control byte from $'' cannot be told from a brace mark: unknown */
		{"echo $'\\x01'{a,b}", 1, "{{a,b}", MOAT_SHW_QUOTED | MOAT_SHW_EXPAND},
		{"r''m", 0, "rm", MOAT_SHW_QUOTED},
	};
	struct moat_arena a;

	moat_arena_init(&a, NULL, 0);
	for (size_t i = 0; i < MOAT_ARRAY_SIZE(rows); i++) {
		const struct moat_sh_word *w = word_at(&a, rows[i].src, rows[i].idx);

		if (!CHECKF(w && strcmp(w->text, rows[i].text) == 0 && w->flags == rows[i].flags,
			    "word %zu of \"%s\"", rows[i].idx, rows[i].src))
			fprintf(stderr, "# want \"%s\" flags %#x, got \"%s\" flags %#x\n", rows[i].text,
				rows[i].flags, w ? w->text : "-", w ? w->flags : 0);
	}
	/* brace text marks */
	{
		const struct moat_sh_word *w = word_at(&a, "echo x{a,b}y", 1);

		CHECK(w && moat_sh_word_btext(w) && strcmp(moat_sh_word_btext(w), "x\001a\002b\003y") == 0);
		w = word_at(&a, "echo xy", 1);
		CHECK(w && moat_sh_word_btext(w) == NULL);
	}
	/* assignments: eq is the index of '=' plus one */
	{
		struct moat_sh_node *root;
		struct moat_sh_error e;

		CHECK(moat_sh_parse(&a, "A=1 B+=2 C[i]=3 cmd D=4", 23, &root, &e) == 0);
		CHECK(root->kids->nassigns == 3);
		CHECK(root->kids->assigns[0].eq == 2);
		CHECK(root->kids->assigns[1].eq == 3);
		CHECK(root->kids->assigns[2].eq == 5);
		CHECK(root->kids->nwords == 2 && root->kids->words[1].eq == 0); /* an argument */
	}
	/* offsets */
	{
		const struct moat_sh_word *w = word_at(&a, "  echo   'a b'", 1);

		CHECK(w && w->off == 9 && w->len == 3);
	}
	moat_arena_release(&a);
}

static char *repeat(const char *unit, size_t n, const char *tail)
{
	size_t ul = strlen(unit), tl = strlen(tail);
	char *s = malloc(ul * n + tl + 1);

	for (size_t i = 0; i < n; i++)
		memcpy(s + i * ul, unit, ul);
	memcpy(s + ul * n, tail, tl + 1);
	return s;
}

static int parse_rc(const char *s, size_t len, struct moat_sh_error *e)
{
	struct moat_arena a;
	struct moat_sh_node *root;
	int rc;

	moat_arena_init(&a, NULL, 0);
	rc = moat_sh_parse(&a, s, len, &root, e);
	moat_arena_release(&a);
	return rc;
}

/* Where the expansions are in a word's text: "kind:off+len" per span, 'd'
 * after the kind when inside double quotes. */
static void test_spans(void)
{
	static const struct {
		const char *src;
		const char *text;  /* the first word's text */
		const char *spans; /* its spans */
	} rows[] = {
		{"$a", "$a", "P:0+2"},
		{"x$a/y", "x$a/y", "P:1+2"},
		{"\"$a\"", "$a", "Pd:0+2"},
		{"'$a'$b", "$a$b", "P:2+2"},
		{"${X:-/}", "${X:-/}", "P:0+7"},
		{"\"${X:-\"/\"}\"", "${X:-\"/\"}", "Pd:0+9"},
		{"${X:-$(rm -rf /)}", "${X:-$(rm -rf /)}", "P:0+17"},
		{"$(echo /)x", "$(echo /)x", "C:0+9"},
		{"`echo /`", "`echo /`", "C:0+8"},
		{"\"a`b`c\"", "a`b`c", "Cd:1+3"},
		{"$((1+2))", "$((1+2))", "A:0+8"},
		{"<(ls)", "<(ls)", "S:0+5"},
		{"$1$@\"$*\"$#", "$1$@$*$#", "P:0+2 P:2+2 Pd:4+2 P:6+2"},
		{"$'\\x24a'", "$a", ""},
		{"a\\$b", "a$b", ""},
		{"plain", "plain", ""},
		{"~/x", "~/x", ""},
	};

	for (size_t i = 0; i < MOAT_ARRAY_SIZE(rows); i++) {
		struct moat_arena ar;
		struct moat_sh_node *root;
		struct moat_sh_error se;
		struct moat_buf b = MOAT_BUF_INIT;
		const struct moat_sh_word *w;

		moat_arena_init(&ar, NULL, 0);
		if (!CHECKF(moat_sh_parse(&ar, rows[i].src, strlen(rows[i].src), &root, &se) == 0 &&
				    root->kids && root->kids->nwords,
			    "\"%s\" parses", rows[i].src)) {
			moat_arena_release(&ar);
			continue;
		}
		w = &root->kids->words[0];
		for (const struct moat_sh_span *sp = w->spans; sp; sp = sp->next)
			moat_buf_printf(&b, "%s%c%s:%u+%u", b.len ? " " : "",
					"?PCAS"[sp->kind], sp->dq ? "d" : "", sp->off, sp->len);
		CHECKF(strcmp(w->text, rows[i].text) == 0 &&
			       strcmp(b.data ? b.data : "", rows[i].spans) == 0,
		       "\"%s\": text [%s] spans [%s]", rows[i].src, w->text, b.data ? b.data : "");
		/* a span is always inside the text, in order */
		for (const struct moat_sh_span *sp = w->spans; sp; sp = sp->next)
			CHECK(sp->off + sp->len <= w->len && (!sp->next || sp->next->off >= sp->off + sp->len));
		moat_buf_release(&b);
		moat_arena_release(&ar);
	}
	/* an assignment's value starting with an unquoted ~ */
	{
		static const struct {
			const char *src;
			int atilde;
		} as[] = {{"a=~/x", 1}, {"a=~", 1}, {"a=\"~\"", 0}, {"a='~'/x", 0}, {"a=$b~", 0},
			  {"a=~$b", 1}};

		for (size_t i = 0; i < MOAT_ARRAY_SIZE(as); i++) {
			struct moat_arena ar;
			struct moat_sh_node *root;
			struct moat_sh_error se;

			moat_arena_init(&ar, NULL, 0);
			CHECKF(moat_sh_parse(&ar, as[i].src, strlen(as[i].src), &root, &se) == 0 &&
				       root->kids && root->kids->nassigns == 1 &&
				       !!(root->kids->assigns[0].flags & MOAT_SHW_ATILDE) == as[i].atilde,
			       "\"%s\": leading ~ of the value %s", as[i].src,
			       as[i].atilde ? "flagged" : "not flagged");
			moat_arena_release(&ar);
		}
	}
}

static void test_limits(void)
{
	struct moat_sh_error e;
	char *s, *t;
	size_t n;

	/* nesting: ( ( ( a ) ) ) at the limit and one over ("((" would be arithmetic) */
	s = repeat("( ", MOAT_SH_MAX_NEST, "a");
	t = repeat(" )", MOAT_SH_MAX_NEST, "");
	{
		char *u = malloc(strlen(s) + strlen(t) + 1);

		memcpy(u, s, strlen(s));
		memcpy(u + strlen(s), t, strlen(t) + 1);
		CHECK_INT(parse_rc(u, strlen(u), &e), 0);
		free(u);
	}
	free(s);
	free(t);
	s = repeat("( ", MOAT_SH_MAX_NEST + 1, "a");
	t = repeat(" )", MOAT_SH_MAX_NEST + 1, "");
	{
		char *u = malloc(strlen(s) + strlen(t) + 1);

		memcpy(u, s, strlen(s));
		memcpy(u + strlen(s), t, strlen(t) + 1);
		CHECK_INT(parse_rc(u, strlen(u), &e), -EINVAL);
		CHECK_STR(e.msg, "nesting too deep");
		CHECK_INT(e.offset, 2 * MOAT_SH_MAX_NEST);
		free(u);
	}
	free(s);
	free(t);
	/* a megabyte of openers of every kind fails cleanly, without blowing the stack */
	{
		static const char *const units[] = {"$(", "\"$(", "${", "`", "$((", "((", "{ ", "<(",
						    "\"${x:-", "$( ( ", "if ", "[[ $("};

		for (size_t k = 0; k < MOAT_ARRAY_SIZE(units); k++) {
			size_t cnt = MOAT_SH_MAX_LEN / strlen(units[k]);
			clock_t c0 = clock();

			s = repeat(units[k], cnt, "");
			CHECKF(parse_rc(s, strlen(s), &e) == -EINVAL, "1 MB of \"%s\" refused", units[k]);
			printf("# 1 MB of \"%s\": %s at %zu in %.1f ms\n", units[k], e.msg, e.offset,
			       (double)(clock() - c0) * 1000.0 / CLOCKS_PER_SEC);
			free(s);
		}
	}
	/* words: exactly the limit, then one more */
	s = repeat("a ", MOAT_SH_MAX_WORDS, "");
	CHECK_INT(parse_rc(s, strlen(s), &e), 0);
	free(s);
	s = repeat("a ", MOAT_SH_MAX_WORDS + 1, "");
	CHECK_INT(parse_rc(s, strlen(s), &e), -EINVAL);
	CHECK_STR(e.msg, "too many words");
	free(s);
	/* commands: the list node plus one node per simple command */
	s = repeat("a;", MOAT_SH_MAX_COMMANDS - 1, "");
	CHECK_INT(parse_rc(s, strlen(s), &e), 0);
	free(s);
	s = repeat("a;", MOAT_SH_MAX_COMMANDS, "");
	CHECK_INT(parse_rc(s, strlen(s), &e), -EINVAL);
	CHECK_STR(e.msg, "too many commands");
	free(s);
	/* length */
	n = MOAT_SH_MAX_LEN;
	s = malloc(n + 2);
	memset(s, ' ', n + 1);
	s[n + 1] = '\0';
	CHECK_INT(parse_rc(s, n, &e), 0);
	CHECK_INT(parse_rc(s, n + 1, &e), -EINVAL);
	CHECK_STR(e.msg, "command too long");
	free(s);
	/* NUL bytes */
	CHECK_INT(parse_rc("echo a\0b", 8, &e), -EINVAL);
	CHECK_INT(e.offset, 6);
	/* an empty command is an empty list */
	CHECK_INT(parse_rc("", 0, &e), 0);
	CHECK_INT(parse_rc(NULL, 0, &e), 0);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void test_timing(void)
{
	static const char *const unit =
		"for f in $(ls *.c); do gcc -O2 -c \"$f\" -o \"${f%.c}.o\" 2>&1 | tee -a log; done && echo 'ok' || exit 1\n";
	size_t cnt = 100000 / strlen(unit) + 1;
	char *s = repeat(unit, cnt, "");
	struct moat_sh_error e;
	double best = 1e9;

	for (int k = 0; k < 5; k++) {
		double t0 = now_ms();

		CHECK_INT(parse_rc(s, strlen(s), &e), 0);
		if (now_ms() - t0 < best)
			best = now_ms() - t0;
	}
	printf("# parse of a %zu byte command: %.3f ms (best of 5)\n", strlen(s), best);
	free(s);
	/* a deep but valid nesting, and long quoted words */
	s = repeat("'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' ", 2000, "");
	{
		double t0 = now_ms();

		CHECK_INT(parse_rc(s, strlen(s), &e), 0);
		printf("# parse of %zu bytes of quoted words: %.3f ms\n", strlen(s), now_ms() - t0);
	}
	free(s);
}

static void test_arena(void)
{
	struct moat_arena a;
	char buf[100];
	void *p, *q;

	moat_arena_init(&a, buf, sizeof(buf));
	p = moat_arena_alloc(&a, 10);
	CHECK(p && ((uintptr_t)p & 7) == 0 && (char *)p >= buf && (char *)p < buf + sizeof(buf));
	q = moat_arena_alloc(&a, 1000); /* spills into a heap chunk */
	CHECK(q && ((uintptr_t)q & 7) == 0 && ((char *)q < buf || (char *)q >= buf + sizeof(buf)));
	CHECK(moat_arena_alloc(&a, MOAT_ARENA_MAX_BYTES + 1) == NULL);
	CHECK(moat_arena_strndup(&a, "abc", 2) && strcmp(moat_arena_strndup(&a, "abc", 2), "ab") == 0);
	moat_arena_release(&a);
	moat_arena_release(&a);
}

static void test_line_col(void)
{
	int l, c;

	moat_sh_line_col("ab\ncd", 5, 4, &l, &c);
	CHECK(l == 2 && c == 2);
	moat_sh_line_col("ab", 2, 0, &l, &c);
	CHECK(l == 1 && c == 1);
}

/* The one-pass fast path (plain words, single quotes, && || ; |, file
 * redirections) at its limits: 4096 bytes and 64 words per command. Each
 * command must give exactly the tree the full parser gives; a trailing
 * comment sends the same command to the full parser (the fast path leaves
 * comments to it). Sanitizer builds also cross-check every fast parse. */
static void test_fast_path_limits(void)
{
	static const size_t lens[] = {4094, 4095, 4096, 4097, 4098};
	static const size_t words[] = {62, 63, 64, 65, 66};
	static const char *const tails[] = {"", " > out.txt", " 2>&1 | tee log", " && b 'q x'"};

	for (size_t t = 0; t < MOAT_ARRAY_SIZE(tails); t++) {
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(words); k++) {
			struct moat_buf c = MOAT_BUF_INIT, full = MOAT_BUF_INIT;
			struct moat_sh_error e1, e2;
			char *a, *b;
			int r1, r2;

			for (size_t w = 0; w < words[k]; w++)
				moat_buf_printf(&c, "%sw%zu", w ? " " : "", w);
			moat_buf_puts(&c, tails[t]);
			moat_buf_append(&full, c.data, c.len);
			moat_buf_puts(&full, " #c");
			a = parse_dump(c.data, c.len, &e1, &r1);
			b = parse_dump(full.data, full.len, &e2, &r2);
			tap_ok(r1 == 0 && r2 == 0 && a && b && !strcmp(a, b),
			       "fast path = full parser: %zu words, tail '%s'", words[k], tails[t]);
			free(a);
			free(b);
			moat_buf_release(&c);
			moat_buf_release(&full);
		}
		for (size_t k = 0; k < MOAT_ARRAY_SIZE(lens); k++) {
			struct moat_buf c = MOAT_BUF_INIT, full = MOAT_BUF_INIT;
			struct moat_sh_error e1, e2;
			size_t tl = strlen(tails[t]);
			char *a, *b;
			int r1, r2;

			moat_buf_puts(&c, "cmd ");
			while (c.len + tl < lens[k])
				moat_buf_putc(&c, 'x');
			moat_buf_puts(&c, tails[t]);
			moat_buf_append(&full, c.data, c.len);
			moat_buf_puts(&full, " #c");
			a = parse_dump(c.data, c.len, &e1, &r1);
			b = parse_dump(full.data, full.len, &e2, &r2);
			tap_ok(c.len == lens[k] && r1 == 0 && r2 == 0 && a && b && !strcmp(a, b),
			       "fast path = full parser: %zu bytes, tail '%s'", lens[k], tails[t]);
			free(a);
			free(b);
			moat_buf_release(&c);
			moat_buf_release(&full);
		}
	}
}

int main(void)
{
	test_trees();
	test_errors();
	test_word_flags();
	test_spans();
	test_limits();
	test_timing();
	test_arena();
	test_line_col();
	test_fast_path_limits();
	return tap_done();
}
