/* query/query_grammar.y -- the argusq query language (lemon LALR(1)).
 *
 * Generated into build/gen/query_grammar.{c,h} (token codes QTK_*); the
 * lexer is query/query_lex.re, the driver query/parse.c, the AST
 * query/query_ast.h.
 *
 * ---------------------------------------------------------------------
 * The language.  Keywords are case-insensitive.  Statements are separated
 * by ';' (a trailing ';' and empty statements are allowed).  `--` starts a
 * comment that runs to the end of the line.
 *
 *   script    ::= [stmt] { ';' [stmt] }
 *   stmt      ::= 'traces'
 *               | 'use' 'trace' STRING
 *               | 'drop' 'trace' STRING | 'rename' 'trace' STRING 'to' STRING
 *               | 'label' 'trace' STRING ('set' ID '=' literal | 'unset' ID)
 *               | 'traces' 'where' expr
 *               | 'help' [WORD]                     WORD: any identifier or keyword
 *               | 'show' 'node' N [in_trace]
 *               | 'events' 'of' 'node' N [in_trace]
 *               | 'find' ('nodes' | 'events' | 'edges') ['where' expr]
 *                        ['group' 'by' FIELD {',' FIELD} ['compute' AGG {',' AGG}]
 *                         | 'compute' AGG {',' AGG}]
 *                        ['order' 'by' (FIELD | AGG) ['asc' | 'desc']] ['limit' K] [in_trace]
 *                        AGG: count | FN '(' FIELD ')', FN one of count, sum, min,
 *                        max, avg, median, p50, p90, p95, p99
 *               | 'slice' ('back' | 'forward') 'from' 'node' N
 *                        ['depth' D] ['via' KIND {',' KIND}] ['with' 'weak'] [in_trace]
 *               | 'match' 'node' N places         places: also 'limit' K
 *               | 'diagnose' ('node' N | 'thread' STRING) places
 *               | 'compare' 'thread' STRING places  (in traces .. against traces ..)
 *               | 'check' 'fix' 'of' ('node' N | 'thread' STRING) [in_trace] 'after' 'trace' STRING
 *               | 'check' 'fix' 'of' 'thread' STRING 'in' 'traces' ['where' expr]
 *                        'after' 'traces' ['where' expr]
 *               | 'export' stmt 'to' STRING         the statement's output into a file
 *   in_trace  ::= 'in' 'trace' STRING
 *   places    ::= { 'in' 'trace' STRING | 'in' 'traces' ['where' expr] | 'in' 'archive' STRING
 *                 | 'against' 'trace' STRING | 'against' 'traces' ['where' expr] }
 *                                                   each at most once, in any order
 *   expr      ::= expr 'or' expr | expr 'and' expr | 'not' expr | '(' expr ')'
 *               | operand CMP operand               CMP: = != <> < <= > >=
 *               | FIELD ['not'] 'in' '(' literal {',' literal} ')'
 *   operand   ::= FIELD | literal
 *   literal   ::= STRING | INTEGER | DURATION
 *
 * Precedence, loosest first: or, and, not, comparison; or/and associate to
 * the left.  N, K, D are INTEGER literals and must not be negative.
 *
 * Tokens (query/query_lex.re):
 *   FIELD, KIND = ID   [A-Za-z_][A-Za-z0-9_.]*; every keyword except
 *                      and/or/not/in may also be used as an ID (fields
 *                      `node`, `events`, `limit`, kind `weak`, ...) through
 *                      %fallback: a keyword the parser cannot shift where
 *                      it stands is retried as an ID
 *   STRING             "..." with escapes \" and \\ only; no newline or NUL
 *   INTEGER            decimal, 0x hexadecimal, -decimal, -0xhex
 *   DURATION           (integer | integer.digits) immediately followed by
 *                      ns | us | ms | s; converted to whole nanoseconds
 * ---------------------------------------------------------------------
 *
 * Memory: every semantic value is either a plain value or points into the
 * script's arena, so no %destructor is needed -- on an error the driver
 * frees the parser and the arena and nothing leaks. */

%include {
#include <string.h>

#include "query/query_ast.h"
}

%name query_parser
%token_prefix QTK_
%token_type {query_token}
%extra_argument {query_parse_state *ps}
%stack_size 200
%start_symbol script

%syntax_error {
    (void)yymajor;
    query_ast_syntax_error(ps, &TOKEN);
}
%stack_overflow {
    query_ast_error(ps, ps->cur ? &ps->cur->pos : NULL, "query is nested too deeply");
}
/* Nothing to free (the arena owns all); this only keeps lemon's
 * yy_destructor from declaring an unused `ps`. */
%token_destructor { (void)ps; (void)yypminor; }
%parse_failure {
    query_ast_error(ps, NULL, "syntax error");
}

/* Token order fixes the QTK_* codes; ID first so %fallback can name it. */
%token ID STRING INTEGER DURATION SEMI COMMA LP RP EQ NE LT LE GT GE.
%token TRACES USE TRACE HELP SHOW NODE EVENTS OF FIND NODES WHERE ORDER BY ASC DESC
       LIMIT SLICE BACK FORWARD FROM DEPTH VIA WITH WEAK
       RULE RULES BOUNDARY CONNECT IGNORE TO ON DROP REBUILD GRAPH BEGIN END SEND RECV
       MATCH COMPARE PATH DIAGNOSE THREAD AGAINST CHECK FIX AFTER TRANSACTION EDGES EXPORT
       CRITICAL RENAME LABEL SET UNSET ARCHIVE BETWEEN GROUP COMPUTE.

%fallback ID TRACES USE TRACE HELP SHOW NODE EVENTS OF FIND NODES WHERE ORDER BY ASC DESC
             LIMIT SLICE BACK FORWARD FROM DEPTH VIA WITH WEAK
             RULE RULES BOUNDARY CONNECT IGNORE TO ON DROP REBUILD GRAPH BEGIN END SEND RECV
             MATCH COMPARE PATH DIAGNOSE THREAD AGAINST CHECK FIX AFTER TRANSACTION EDGES EXPORT
             CRITICAL RENAME LABEL SET UNSET ARCHIVE BETWEEN GROUP COMPUTE.

%left OR.
%left AND.
%right NOT.

/* ---- script ---- */
script ::= stmts.
stmts ::= stmt_opt.
stmts ::= stmts SEMI stmt_opt.
stmt_opt ::= .
stmt_opt ::= stmt(S). { query_ast_add_stmt(ps, S); }

/* ---- statements ---- */
%type stmt {query_stmt *}

stmt(A) ::= TRACES(T). { A = query_ast_stmt(ps, QUERY_ST_TRACES, &T); }
/* the traces whose catalog entry and labels satisfy EXPR */
stmt(A) ::= TRACES(T) WHERE expr(E). {
    A = query_ast_stmt(ps, QUERY_ST_TRACES, &T);
    A->where = E;
}

stmt(A) ::= USE(U) TRACE STRING(S). {
    A = query_ast_stmt(ps, QUERY_ST_USE, &U);
    A->trace = query_ast_name(ps, &S);
}

stmt(A) ::= HELP(H). { A = query_ast_stmt(ps, QUERY_ST_HELP, &H); }
stmt(A) ::= HELP(H) word(W). {
    A = query_ast_stmt(ps, QUERY_ST_HELP, &H);
    A->topic = W;
}

stmt(A) ::= SHOW(S) NODE nodeid(N) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_SHOW_NODE, &S);
    A->node = N.value;
    A->node_pos = N.pos;
    A->trace = I;
}

stmt(A) ::= EVENTS(E) OF NODE nodeid(N) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_EVENTS_OF, &E);
    A->node = N.value;
    A->node_pos = N.pos;
    A->trace = I;
}

stmt(A) ::= FIND(F) target(T) where_opt(W) group_opt(G) order_opt(O) limit_opt(L) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_FIND, &F);
    A->target = T;
    A->where = W;
    query_ast_group(ps, A, &G, &O);
    A->has_order = O.has;
    A->order_by = O.field;
    A->order_desc = O.desc;
    A->has_limit = L.has;
    A->limit = L.value;
    A->limit_pos = L.pos;
    A->trace = I;
}

stmt(A) ::= SLICE(S) slice_dir(D) FROM NODE nodeid(N) depth_opt(P) via_opt(V) weak_opt(K)
            in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_SLICE, &S);
    A->dir = D;
    A->node = N.value;
    A->node_pos = N.pos;
    A->has_depth = P.has;
    A->depth = P.value;
    A->depth_pos = P.pos;
    A->via = V.items;
    A->via_count = V.count;
    A->with_weak = K;
    A->trace = I;
}

/* user rules (paper/000 §User Interactions): kept with the trace, applied
 * by `rebuild graph` */
stmt(A) ::= RULE(R) BOUNDARY rule_match(M) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_RULE, &R);
    A->rule = QUERY_RULE_BOUNDARY;
    A->ra = M;
    A->trace = I;
}
stmt(A) ::= RULE(R) CONNECT rule_match(M) TO rule_match(N) ON ID(K) EQ ID(L) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_RULE, &R);
    A->rule = QUERY_RULE_CONNECT;
    A->ra = M;
    A->rb = N;
    A->a_key = query_ast_name(ps, &K);
    A->b_key = query_ast_name(ps, &L);
    A->trace = I;
}
stmt(A) ::= RULE(R) IGNORE ID(T) where_opt(W) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_RULE, &R);
    A->rule = QUERY_RULE_IGNORE;
    A->ra.type = query_ast_name(ps, &T);
    A->ra.where = W;
    A->trace = I;
}
stmt(A) ::= RULES(R) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_RULES, &R);
    A->trace = I;
}
stmt(A) ::= DROP(D) RULE nodeid(N) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_DROP_RULE, &D);
    A->node = N.value;
    A->node_pos = N.pos;
    A->trace = I;
}
/* keeping an archive: traces dropped and renamed (db/manage.c) */
stmt(A) ::= DROP(D) TRACE STRING(S). {
    A = query_ast_stmt(ps, QUERY_ST_DROP_TRACE, &D);
    A->trace = query_ast_name(ps, &S);
}
stmt(A) ::= RENAME(R) TRACE STRING(S) TO STRING(T). {
    A = query_ast_stmt(ps, QUERY_ST_RENAME_TRACE, &R);
    A->trace = query_ast_name(ps, &S);
    A->new_name = query_ast_name(ps, &T);
}
/* a trace's labels (db/manage.c) */
stmt(A) ::= LABEL(L) TRACE STRING(S) SET ID(K) EQ literal(V). {
    A = query_ast_stmt(ps, QUERY_ST_LABEL, &L);
    A->trace = query_ast_name(ps, &S);
    A->new_name = query_ast_name(ps, &K);
    A->label_value = V;
    A->has_label_value = true;
}
stmt(A) ::= LABEL(L) TRACE STRING(S) UNSET ID(K). {
    A = query_ast_stmt(ps, QUERY_ST_LABEL, &L);
    A->trace = query_ast_name(ps, &S);
    A->new_name = query_ast_name(ps, &K);
}
stmt(A) ::= REBUILD(R) GRAPH in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_REBUILD, &R);
    A->trace = I;
}

/* normal versus anomaly (paper/001 §Identify root cause, paper/004):
 * where the counterparts are looked for comes in clauses, in any order
 * (`in trace`, `in traces [where E]`, `in archive "PATH"`), see places */
stmt(A) ::= MATCH(M) NODE nodeid(N) places(P). {
    A = query_ast_stmt(ps, QUERY_ST_MATCH, &M);
    A->node = N.value;
    A->node_pos = N.pos;
    query_ast_places(ps, A, &P);
}
stmt(A) ::= COMPARE(C) NODE nodeid(N) WITH NODE nodeid(M) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_COMPARE_NODES, &C);
    A->node = N.value;
    A->node_pos = N.pos;
    A->node2 = M.value;
    A->node2_pos = M.pos;
    A->trace = I;
}
/* two groups of runs: the distributions of thread NAME's worst steps'
 * critical paths side by side */
stmt(A) ::= COMPARE(C) THREAD STRING(S) places(P). {
    A = query_ast_stmt(ps, QUERY_ST_COMPARE_GROUPS, &C);
    A->by_thread = true;
    A->thread_name = query_ast_name(ps, &S);
    query_ast_places(ps, A, &P);
}
stmt(A) ::= COMPARE(C) PATH LP stmt(X) RP WITH LP stmt(Y) RP. {
    A = query_ast_stmt(ps, QUERY_ST_COMPARE_PATHS, &C);
    A->path_a = X;
    A->path_b = Y;
}
/* the baseline: `against trace "T"`, or the best counterpart in any trace
 * (that satisfies EXPR), of this archive or of the one `in archive` names;
 * `in trace` is the anomaly's */
stmt(A) ::= DIAGNOSE(D) NODE nodeid(N) places(P). {
    A = query_ast_stmt(ps, QUERY_ST_DIAGNOSE, &D);
    A->node = N.value;
    A->node_pos = N.pos;
    query_ast_places(ps, A, &P);
}
stmt(A) ::= DIAGNOSE(D) THREAD STRING(S) places(P). {
    A = query_ast_stmt(ps, QUERY_ST_DIAGNOSE, &D);
    A->by_thread = true;
    A->thread_name = query_ast_name(ps, &S);
    query_ast_places(ps, A, &P);
}
stmt(A) ::= CHECK(C) FIX OF NODE nodeid(N) in_trace(I) AFTER TRACE STRING(S). {
    A = query_ast_stmt(ps, QUERY_ST_CHECK_FIX, &C);
    A->node = N.value;
    A->node_pos = N.pos;
    A->trace = I;
    A->after = query_ast_name(ps, &S);
}
stmt(A) ::= CHECK(C) FIX OF THREAD STRING(T) in_trace(I) AFTER TRACE STRING(S). {
    A = query_ast_stmt(ps, QUERY_ST_CHECK_FIX, &C);
    A->by_thread = true;
    A->thread_name = query_ast_name(ps, &T);
    A->trace = I;
    A->after = query_ast_name(ps, &S);
}
/* check fix of thread "NAME" in traces [where E1] after traces [where E2]:
 * the broken runs' waits against the fixed runs' */
stmt(A) ::= CHECK(C) FIX OF THREAD STRING(T) IN TRACES(B) where_opt(W1) AFTER TRACES(F) where_opt(W2). {
    A = query_ast_stmt(ps, QUERY_ST_CHECK_FIX, &C);
    A->by_thread = true;
    A->thread_name = query_ast_name(ps, &T);
    A->traces_all = true;
    A->traces_where = W1;
    A->traces_pos = B.pos;
    A->against_all = true;
    A->against_where = W2;
    A->against_traces_pos = F.pos;
}
/* critical path of node N | of thread "NAME": where the node's period
 * (its wait and its run) went, every ns to one thread, node and state */
stmt(A) ::= CRITICAL(C) PATH OF NODE nodeid(N) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_CRITICAL_PATH, &C);
    A->node = N.value;
    A->node_pos = N.pos;
    A->trace = I;
}
/* of thread "NAME": its whole life in the trace, or [T1, T2] of it */
stmt(A) ::= CRITICAL(C) PATH OF THREAD STRING(S) between_opt(W) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_CRITICAL_PATH, &C);
    A->by_thread = true;
    A->thread_name = query_ast_name(ps, &S);
    A->trace = I;
    A->has_span = W.from.has;
    A->span_from = W.from.value;
    A->span_to = W.to.value;
    if (W.from.has && W.to.value <= W.from.value)
        query_ast_error(ps, &W.to.pos, "between T1 and T2 needs T2 after T1");
}

%type between_opt {query_ast_between}
between_opt(A) ::= . { memset(&A, 0, sizeof A); }
between_opt(A) ::= BETWEEN instant(F) AND instant(T). { A.from = F; A.to = T; }

/* a time of the trace: ns, or a duration since its clock's zero, as the
 * timestamps print (1089.091062s) */
%type instant {query_ast_num}
instant(A) ::= INTEGER(T). { A = query_ast_count(ps, &T, "a time"); }
instant(A) ::= DURATION(T). { A = (query_ast_num){.has = true, .value = T.uval, .pos = T.pos}; }
stmt(A) ::= TRANSACTION(T) FROM NODE nodeid(N) depth_opt(P) in_trace(I). {
    A = query_ast_stmt(ps, QUERY_ST_TRANSACTION, &T);
    A->node = N.value;
    A->node_pos = N.pos;
    A->has_depth = P.has;
    A->depth = P.value;
    A->depth_pos = P.pos;
    A->trace = I;
}

/* export STMT to "FILE": STMT's output goes to FILE (the executor rejects
 * an export inside an export) */
stmt(A) ::= EXPORT(E) stmt(X) TO STRING(F). {
    A = query_ast_stmt(ps, QUERY_ST_EXPORT, &E);
    A->inner = X;
    A->file = query_ast_name(ps, &F);
}

/* the clauses of match and diagnose, in any order (query_ast_places
 * says which a statement takes) */
%type places {query_ast_clauses}
places(A) ::= . { memset(&A, 0, sizeof A); }
places(A) ::= places(A) IN TRACE STRING(S). { query_ast_clause_trace(ps, &A, &S); }
places(A) ::= places(A) IN ARCHIVE STRING(S). { query_ast_clause_archive(ps, &A, &S); }
places(A) ::= places(A) IN(W) TRACES(T). { query_ast_clause_traces(ps, &A, &W, &T, NULL); }
places(A) ::= places(A) IN(W) TRACES(T) WHERE expr(E). { query_ast_clause_traces(ps, &A, &W, &T, E); }
places(A) ::= places(A) AGAINST(W) TRACE STRING(S). { query_ast_clause_against(ps, &A, &W, &S); }
places(A) ::= places(A) AGAINST(W) TRACES(T). { query_ast_clause_traces(ps, &A, &W, &T, NULL); }
places(A) ::= places(A) AGAINST(W) TRACES(T) WHERE expr(E). { query_ast_clause_traces(ps, &A, &W, &T, E); }
places(A) ::= places(A) LIMIT(L) INTEGER(T). { query_ast_clause_limit(ps, &A, &L, &T); }

%type rule_match {query_rule_match}
rule_match(A) ::= ID(T) where_opt(W). {
    memset(&A, 0, sizeof A);
    A.type = query_ast_name(ps, &T);
    A.where = W;
}
/* the phase words are keywords here, so that a keyword after a type
 * (`to`, `on`) is not taken for a phase through %fallback */
rule_match(A) ::= ID(T) phase(P) where_opt(W). {
    memset(&A, 0, sizeof A);
    A.type = query_ast_name(ps, &T);
    A.phase = query_ast_name(ps, &P);
    A.where = W;
}

%type phase {query_token}
phase(A) ::= BEGIN(T). { A = T; }
phase(A) ::= END(T).   { A = T; }
phase(A) ::= SEND(T).  { A = T; }
phase(A) ::= RECV(T).  { A = T; }

/* ---- statement parts ---- */
%type word {query_name}
word(A) ::= ID(T).  { A = query_ast_name(ps, &T); }
word(A) ::= AND(T). { A = query_ast_name(ps, &T); }
word(A) ::= OR(T).  { A = query_ast_name(ps, &T); }
word(A) ::= NOT(T). { A = query_ast_name(ps, &T); }
word(A) ::= IN(T).  { A = query_ast_name(ps, &T); }

%type nodeid {query_ast_num}
nodeid(A) ::= INTEGER(T). { A = query_ast_count(ps, &T, "node id"); }

%type in_trace {query_name}
in_trace(A) ::= . { memset(&A, 0, sizeof A); }
in_trace(A) ::= IN TRACE STRING(S). { A = query_ast_name(ps, &S); }

%type target {query_target}
target(A) ::= NODES.  { A = QUERY_TARGET_NODES; }
target(A) ::= EVENTS. { A = QUERY_TARGET_EVENTS; }
target(A) ::= EDGES.  { A = QUERY_TARGET_EDGES; }

%type where_opt {const query_expr *}
where_opt(A) ::= . { A = NULL; }
where_opt(A) ::= WHERE expr(E). { A = E; }

%type order_opt {query_ast_order}
order_opt(A) ::= . { memset(&A, 0, sizeof A); }
order_opt(A) ::= ORDER BY ID(F) desc_opt(D). {
    memset(&A, 0, sizeof A);
    A.has = true;
    A.field = query_ast_name(ps, &F);
    A.desc = D;
}
order_opt(A) ::= ORDER BY agg_call(G) desc_opt(D). {
    memset(&A, 0, sizeof A);
    A.has = true;
    A.agg = G;
    A.is_agg = true;
    A.field = G.fn_name;
    A.desc = D;
}

/* group by / compute (query/exec_group.c): rows counted and summed per
 * value of the group fields, or over all rows */
%type group_opt {query_ast_group_by}
group_opt(A) ::= . { memset(&A, 0, sizeof A); }
group_opt(A) ::= GROUP(K) BY via_list(L) compute_opt(C). {
    A.has = true;
    A.pos = K.pos;
    A.by = L;
    A.aggs = C;
}
group_opt(A) ::= COMPUTE(K) agg_list(C). {
    memset(&A, 0, sizeof A);
    A.has = true;
    A.pos = K.pos;
    A.aggs = C;
}

%type compute_opt {query_ast_aggs}
compute_opt(A) ::= . { memset(&A, 0, sizeof A); }
compute_opt(A) ::= COMPUTE agg_list(L). { A = L; }

%type agg_list {query_ast_aggs}
agg_list(A) ::= agg(G). {
    memset(&A, 0, sizeof A);
    query_ast_aggs_push(ps, &A, G);
}
agg_list(A) ::= agg_list(A) COMMA agg(G). { query_ast_aggs_push(ps, &A, G); }

%type agg {query_agg}
agg(A) ::= ID(F). { A = query_ast_agg(ps, &F, NULL); }
agg(A) ::= agg_call(G). { A = G; }

%type agg_call {query_agg}
agg_call(A) ::= ID(F) LP ID(X) RP. { A = query_ast_agg(ps, &F, &X); }

%type desc_opt {bool}
desc_opt(A) ::= .     { A = false; }
desc_opt(A) ::= ASC.  { A = false; }
desc_opt(A) ::= DESC. { A = true; }

%type limit_opt {query_ast_num}
limit_opt(A) ::= . { memset(&A, 0, sizeof A); }
limit_opt(A) ::= LIMIT INTEGER(T). { A = query_ast_count(ps, &T, "limit"); }

%type slice_dir {query_slice_dir}
slice_dir(A) ::= BACK.    { A = QUERY_SLICE_BACK; }
slice_dir(A) ::= FORWARD. { A = QUERY_SLICE_FORWARD; }

%type depth_opt {query_ast_num}
depth_opt(A) ::= . { memset(&A, 0, sizeof A); }
depth_opt(A) ::= DEPTH INTEGER(T). {
    A = query_ast_count(ps, &T, "depth");
    if (A.value > QUERY_DEPTH_MAX)
        query_ast_error(ps, &T.pos, "depth is at most %d", QUERY_DEPTH_MAX);
}

%type via_opt {query_ast_names}
via_opt(A) ::= . { memset(&A, 0, sizeof A); }
via_opt(A) ::= VIA via_list(L). { A = L; }

%type via_list {query_ast_names}
via_list(A) ::= ID(T). {
    memset(&A, 0, sizeof A);
    query_ast_names_push(ps, &A, query_ast_name(ps, &T));
}
via_list(A) ::= via_list(A) COMMA ID(T). { query_ast_names_push(ps, &A, query_ast_name(ps, &T)); }

%type weak_opt {bool}
weak_opt(A) ::= . { A = false; }
weak_opt(A) ::= WITH WEAK. { A = true; }

/* ---- expressions ---- */
%type expr {const query_expr *}
expr(A) ::= expr(L) OR(O) expr(R).  { A = query_ast_binary(ps, QUERY_EX_OR, &O, L, R); }
expr(A) ::= expr(L) AND(O) expr(R). { A = query_ast_binary(ps, QUERY_EX_AND, &O, L, R); }
expr(A) ::= NOT(O) expr(E).         { A = query_ast_not(ps, &O, E); }
expr(A) ::= LP expr(E) RP.          { A = E; }
expr(A) ::= operand(L) cmp_op(O) operand(R). { A = query_ast_cmp(ps, &O, &L, &R); }
expr(A) ::= ID(F) IN(O) LP lit_list(L) RP.        { A = query_ast_in(ps, &O, &F, &L, false); }
expr(A) ::= ID(F) NOT(O) IN LP lit_list(L) RP.    { A = query_ast_in(ps, &O, &F, &L, true); }

%type cmp_op {query_ast_op}
cmp_op(A) ::= EQ(T). { A.op = QUERY_OP_EQ; A.pos = T.pos; }
cmp_op(A) ::= NE(T). { A.op = QUERY_OP_NE; A.pos = T.pos; }
cmp_op(A) ::= LT(T). { A.op = QUERY_OP_LT; A.pos = T.pos; }
cmp_op(A) ::= LE(T). { A.op = QUERY_OP_LE; A.pos = T.pos; }
cmp_op(A) ::= GT(T). { A.op = QUERY_OP_GT; A.pos = T.pos; }
cmp_op(A) ::= GE(T). { A.op = QUERY_OP_GE; A.pos = T.pos; }

%type operand {query_operand}
operand(A) ::= ID(T).      { A = query_ast_field_operand(ps, &T); }
operand(A) ::= literal(L). { A = query_ast_lit_operand(&L); }

%type literal {query_literal}
literal(A) ::= STRING(T).   { A = query_ast_literal(ps, &T); }
literal(A) ::= INTEGER(T).  { A = query_ast_literal(ps, &T); }
literal(A) ::= DURATION(T). { A = query_ast_literal(ps, &T); }

%type lit_list {query_ast_lits}
lit_list(A) ::= literal(L). {
    memset(&A, 0, sizeof A);
    query_ast_lits_push(ps, &A, L);
}
lit_list(A) ::= lit_list(A) COMMA literal(L). { query_ast_lits_push(ps, &A, L); }
