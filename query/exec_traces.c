/* query/exec_traces.c -- keeping an archive: `drop trace "NAME"` and
 * `rename trace "A" to "B"` (the catalog changes are db/manage.c's). */
#include <inttypes.h>
#include <string.h>

#include "query_int.h"

/* drop trace "NAME": the trace goes, its space is free for the next
 * writes at once (LMDB's free pages; `argusq compact` gives it back to
 * the file system). */
static int exec_drop(query_session *s, const query_stmt *st, query_error *err)
{
    db_error de = {0};
    db_trace_info t;
    if (db_drop_trace(s->archive, st->trace.name, &t, &de))
        return query_fail(err, &st->trace.pos, "%s", de.msg);
    if (strcmp(s->trace, st->trace.name) == 0)
        s->trace[0] = '\0'; /* the session's trace is gone: the latest again */
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"dropped\":", s->out);
        query_json_str(s->out, st->trace.name, st->trace.len);
        fprintf(s->out, ",\"events\":%" PRIu64 ",\"nodes\":%" PRIu64 ",\"edges\":%" PRIu64 "}\n", t.events,
                t.nodes, t.edges);
    } else
        fprintf(s->out, "dropped trace \"%s\" (%" PRIu64 " events, %" PRIu64 " nodes, %" PRIu64 " edges)\n",
                st->trace.name, t.events, t.nodes, t.edges);
    return 0;
}

static int exec_rename(query_session *s, const query_stmt *st, query_error *err)
{
    db_error de = {0};
    if (db_rename_trace(s->archive, st->trace.name, st->new_name.name, &de))
        return query_fail(err, strstr(de.msg, "already exists") || strstr(de.msg, "trace name")
                                   ? &st->new_name.pos
                                   : &st->trace.pos,
                          "%s", de.msg);
    if (strcmp(s->trace, st->trace.name) == 0) /* the session follows its trace */
        snprintf(s->trace, sizeof s->trace, "%s", st->new_name.name);
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"renamed\":", s->out);
        query_json_str(s->out, st->trace.name, st->trace.len);
        fputs(",\"to\":", s->out);
        query_json_str(s->out, st->new_name.name, st->new_name.len);
        fputs("}\n", s->out);
    } else
        fprintf(s->out, "renamed trace \"%s\" to \"%s\"\n", st->trace.name, st->new_name.name);
    return 0;
}

/* label trace "NAME" set KEY = VALUE | unset KEY */
static int exec_label(query_session *s, const query_stmt *st, query_error *err)
{
    db_error de = {0};
    const query_literal *l = &st->label_value;
    const char *value = !st->has_label_value ? NULL : l->kind == QUERY_LIT_STRING ? l->str : l->text;
    if (value && strlen(value) != (l->kind == QUERY_LIT_STRING ? l->len : strlen(l->text)))
        return query_fail(err, &l->pos, "a label's value cannot hold a NUL byte");
    int got = db_label_trace(s->archive, st->trace.name, st->new_name.name, value, &de);
    if (got < 0)
        return query_fail(err, strstr(de.msg, "label") == de.msg ? &st->new_name.pos : &st->trace.pos, "%s",
                          de.msg);
    if (got == 0)
        return query_fail(err, &st->new_name.pos, "trace \"%s\" has no label %s", st->trace.name,
                          st->new_name.name);
    if (s->format == QUERY_FMT_JSON) {
        fputs("{\"trace\":", s->out);
        query_json_str(s->out, st->trace.name, st->trace.len);
        fputs(value ? ",\"set\":" : ",\"unset\":", s->out);
        query_json_str(s->out, st->new_name.name, st->new_name.len);
        if (value) {
            fputs(",\"value\":", s->out);
            query_json_str(s->out, value, strlen(value));
        }
        fputs("}\n", s->out);
    } else if (value)
        fprintf(s->out, "trace \"%s\": %s = \"%s\"\n", st->trace.name, st->new_name.name, value);
    else
        fprintf(s->out, "trace \"%s\": %s unset\n", st->trace.name, st->new_name.name);
    return 0;
}

int query_exec_trace_stmt(query_session *s, const query_stmt *st, query_error *err)
{
    switch (st->kind) {
    case QUERY_ST_DROP_TRACE: return exec_drop(s, st, err);
    case QUERY_ST_LABEL: return exec_label(s, st, err);
    default: return exec_rename(s, st, err);
    }
}
