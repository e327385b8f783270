/* query/words.c -- the words of the language, for a shell's Tab
 * completion (cli/repl.c, through argusq_language_words): the keywords as
 * the lexer spells them (build/gen/query_keywords.h is made from
 * query_lex.re's rules), the fields of each table, the aggregates, and
 * the kinds of nodes and edges, which a `where` compares kind with.  Each
 * comes from the table its own code reads, so a word added to the
 * language is offered without a second list to keep. */
#include <assert.h>
#include <strings.h>

#include "query_int.h"

static const char *const keywords[] = {
#include "query_keywords.h"
};

void query_words_add(query_words *ws, const char *w)
{
    assert(w && *w);
    size_t shown = ws->n < ws->cap ? ws->n : ws->cap;
    for (size_t i = 0; i < shown; i++)
        if (strcasecmp(ws->w[i], w) == 0)
            return;
    if (ws->n < ws->cap)
        ws->w[ws->n] = w;
    ws->n++;
}

size_t query_words_list(const char **words, size_t cap)
{
    query_words ws = {.w = words, .cap = cap};
    for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
        query_words_add(&ws, keywords[i]);
    query_fields_words(&ws);
    query_agg_words(&ws);
    for (int k = 0; k < DB_NODE__COUNT; k++)
        query_words_add(&ws, db_node_kind_name(k));
    for (int k = 0; k < DB_EDGE__COUNT; k++)
        query_words_add(&ws, db_edge_kind_name(k));
    return ws.n;
}
