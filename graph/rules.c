/* graph/rules.c -- user-defined rules (paper/000 §User Interactions):
 * "users can gradually inject their knowledge to improve the graph" --
 * extra boundary events (1.f), extra connections (2.g), and wakeups that
 * are not causal (a lock used only for mutual exclusion). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph_int.h"

/* The value of `key` on ev as text: the fields tid, pid, event and the
 * event's object under its user name (target, timer, block, ...), else an
 * attribute. */
bool graph_event_key(const db_event *ev, const char *key, char *buf, size_t len)
{
    const char *obj = db_evtype_obj_name(ev->type);
    if (strcmp(key, "tid") == 0)
        snprintf(buf, len, "%u", ev->tid);
    else if (strcmp(key, "pid") == 0)
        snprintf(buf, len, "%u", ev->pid);
    else if (strcmp(key, "event") == 0)
        snprintf(buf, len, "%s", ev->name);
    else if (obj && strcmp(key, obj) == 0)
        snprintf(buf, len, db_evtype_obj_is_addr(ev->type) ? "0x%llx" : "%llu", (unsigned long long)ev->obj);
    else {
        const char *v;
        size_t n;
        if (!db_event_attr(ev, key, &v, &n))
            return false;
        snprintf(buf, len, "%.*s", (int)n, v);
    }
    return true;
}

/* Text equality, except that two numbers are equal by value (0x10 = 16). */
static bool same_value(const char *a, const char *b)
{
    if (strcmp(a, b) == 0)
        return true;
    char *ea, *eb;
    bool na = a[0] == '-', nb = b[0] == '-';
    unsigned long long x = strtoull(a + na, &ea, 0), y = strtoull(b + nb, &eb, 0);
    return *a && *b && !*ea && !*eb && ea != a + na && eb != b + nb && x == y && (na == nb || x == 0);
}

bool graph_match_event(const graph_match *m, const db_event *ev)
{
    if (m->type >= 0 ? ev->type != m->type : strcmp(ev->name, m->event) != 0)
        return false;
    if (m->phase >= 0 && ev->phase != m->phase)
        return false;
    for (int i = 0; i < m->nattrs; i++) {
        char buf[GRAPH_VAL_MAX];
        if (!graph_event_key(ev, m->attrs[i].key, buf, sizeof buf) || !same_value(buf, m->attrs[i].val))
            return false;
    }
    return true;
}

bool graph_rule_boundary(const graph_state *g, const db_event *ev)
{
    for (size_t i = 0; i < g->nrules; i++)
        if (g->rules[i].kind == GRAPH_RULE_BOUNDARY && graph_match_event(&g->rules[i].a, ev))
            return true;
    return false;
}

bool graph_rule_ignores_wakeup(const graph_state *g, const db_event *ev)
{
    for (size_t i = 0; i < g->nrules; i++)
        if (g->rules[i].kind == GRAPH_RULE_IGNORE_WAKEUP && graph_match_event(&g->rules[i].a, ev))
            return true;
    return false;
}

/* Each connect rule keeps, per key value, the latest event matching `a`;
 * an event matching `b` with the same value is connected from it (kind
 * user), like a flag write to its reads (paper/000 2.g). */
int graph_rule_connect(graph_state *g, const db_event *ev, uint32_t node)
{
    for (size_t i = 0; i < g->nrules; i++) {
        const graph_rule *r = &g->rules[i];
        if (r->kind != GRAPH_RULE_CONNECT)
            continue;
        char buf[GRAPH_VAL_MAX];
        uint32_t ix;
        if (graph_match_event(&r->b, ev) && graph_event_key(ev, r->b_key, buf, sizeof buf) &&
            base_map_get(&g->user[i], graph_fnv1a(buf, strlen(buf)), &ix)) {
            const graph_pend *p = &g->pend[ix - 1];
            if (p->ev != ev->id && graph_edge(g, DB_EDGE_USER, p->ev, p->node, ev->id, node))
                return -1;
        }
        if (graph_match_event(&r->a, ev) && graph_event_key(ev, r->a_key, buf, sizeof buf) &&
            graph_pend_keep(g, &g->user[i], graph_fnv1a(buf, strlen(buf)), ev, node))
            return -1;
    }
    return 0;
}
