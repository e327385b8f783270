"""`find ... group by ... compute ...` and `find ... compute ...`:
every group's count, sum, min, max, avg and percentiles equal what this
script computes from the plain `find ... --json` rows, on three
recordings read by three readers (ftrace text, trace.dat, tracefs text);
in JSON, CSV and the table; ordered and limited as asked; errors at
their columns."""
import csv
import io
import math
import os
import unittest

from common import ArchiveCase, trace

TRACES = {"text": "lockchain-anomaly.txt", "dat": "diskio-anomaly.dat",
          "tracefs": os.path.join("dist", "jitterpipe-normal-01.trace")}


def pct(values, p):
    """numpy's "linear" percentile, as argusq computes it"""
    v = sorted(values)
    h = (len(v) - 1) * p / 100
    lo = math.floor(h)
    return v[lo] if lo + 1 >= len(v) else v[lo] + (h - lo) * (v[lo + 1] - v[lo])


FNS = {"count": len, "sum": sum, "min": min, "max": max, "avg": lambda v: sum(v) / len(v),
       "p50": lambda v: pct(v, 50), "p90": lambda v: pct(v, 90), "p95": lambda v: pct(v, 95),
       "p99": lambda v: pct(v, 99)}


def expected(rows, by, aggs):
    """{key tuple: {agg head: value}} computed from the rows"""
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r.get(f) for f in by), []).append(r)
    out = {}
    for key, rs in groups.items():
        d = {"count": len(rs)}
        for fn, field in aggs:
            vals = [r[field] for r in rs if isinstance(r.get(field), int)]
            d["%s(%s)" % (fn, field)] = FNS[fn](vals) if vals else (0 if fn == "sum" else None)
        out[key] = d
    return out


class Group(ArchiveCase):
    def setUp(self):
        super().setUp()
        for name, f in TRACES.items():
            self.ingest(trace(f), name)

    def rows(self, target, where, name):
        stmt = "find %s%s" % (target, " where " + where if where else "")
        return self.json("--trace", name, stmt)[target]

    def check(self, name, target, where, by, aggs):
        """the grouped answer against the rows, key by key and value by value"""
        stmt = "find %s%s group by %s compute %s" % (
            target, " where " + where if where else "", ", ".join(by),
            ", ".join("%s(%s)" % a for a in aggs))
        got = self.json("--trace", name, stmt)
        want = expected(self.rows(target, where, name), by, aggs)
        self.assertEqual(got["group_by"], by)
        self.assertEqual(got["aggregates"], ["count"] + ["%s(%s)" % a for a in aggs])
        self.assertEqual(got["groups_total"], len(want))
        self.assertEqual(got["rows"], sum(d["count"] for d in want.values()))
        self.assertGreater(len(want), 1, stmt)  # a grouping that groups
        keys = [tuple(g[f] for f in by) for g in got["groups"]]
        self.assertEqual(sorted(keys, key=repr), sorted(want, key=repr))
        for g in got["groups"]:
            w = want[tuple(g[f] for f in by)]
            for head, v in w.items():
                if isinstance(v, float):
                    self.assertAlmostEqual(g[head], v, delta=1e-6 * max(1, abs(v)), msg=(stmt, head))
                else:
                    self.assertEqual(g[head], v, (stmt, head, g))
        return got, want

    def test_nodes_events_edges_on_three_traces(self):
        aggs_n = [("sum", "blocked"), ("max", "blocked"), ("min", "duration"), ("avg", "duration"),
                  ("p50", "blocked"), ("p95", "duration"), ("p99", "running")]
        for name in TRACES:
            with self.subTest(trace=name):
                self.check(name, "nodes", None, ["thread"], aggs_n)
                self.check(name, "nodes", "blocked > 100us", ["proc", "kind"], [("sum", "blocked"), ("p90", "blocked")])
                self.check(name, "events", 'type = "syscall"', ["name"], [("sum", "tid"), ("max", "ts")])
                self.check(name, "edges", None, ["kind"], [("min", "from"), ("max", "to")])

    def test_order_and_limit(self):
        got = self.json("--trace", "text", "find nodes where blocked > 1ms group by thread order by sum(blocked) desc")
        sums = [g["sum(blocked)"] for g in got["groups"]]
        self.assertEqual(sums, sorted(sums, reverse=True))
        top = self.json("--trace", "text",
                        "find nodes where blocked > 1ms group by thread order by sum(blocked) desc limit 3")
        self.assertEqual(top["groups"], got["groups"][:3])
        self.assertEqual(top["groups_total"], got["groups_total"])
        by_count = self.json("--trace", "text", 'find events where type = "syscall" group by name order by count desc')
        counts = [g["count"] for g in by_count["groups"]]
        self.assertEqual(counts, sorted(counts, reverse=True))
        # ties in the order go by the group fields, ascending; no order: the fields ascending
        plain = self.json("--trace", "text", "find nodes group by thread")
        names = [g["thread"] for g in plain["groups"]]
        self.assertEqual(names, sorted(names))
        asc = self.json("--trace", "text", "find nodes group by thread order by thread desc")
        self.assertEqual([g["thread"] for g in asc["groups"]], sorted(names, reverse=True))

    def test_compute_over_all_rows(self):
        rows = self.rows("nodes", "blocked > 0", "dat")
        got = self.json("--trace", "dat", "find nodes where blocked > 0 compute count, sum(blocked), max(blocked)")
        self.assertEqual(got["groups"], [{"count": len(rows), "sum(blocked)": sum(r["blocked"] for r in rows),
                                          "max(blocked)": max(r["blocked"] for r in rows)}])
        none = self.json("--trace", "dat", "find nodes where tid = 999999 compute count, max(blocked)")
        self.assertEqual(none["groups"], [{"count": 0, "max(blocked)": None}])

    def test_csv_and_table(self):
        stmt = "find nodes group by kind compute sum(duration), p95(blocked)"
        doc = self.json("--trace", "text", stmt)
        text = self.ok("--trace", "text", "--format", "csv", stmt).stdout
        rows = list(csv.reader(io.StringIO(text)))
        self.assertEqual(rows[0], ["kind", "count", "sum(duration)", "p95(blocked)"])
        self.assertEqual(len(rows) - 1, len(doc["groups"]))
        for r, g in zip(rows[1:], doc["groups"]):
            self.assertEqual(r[0], g["kind"])
            self.assertEqual(int(r[1]), g["count"])  # numbers as numbers, durations in ns
            self.assertEqual(int(r[2]), g["sum(duration)"])
            self.assertAlmostEqual(float(r[3]), g["p95(blocked)"], places=3)
        table = self.ok("--trace", "text", stmt).stdout.splitlines()
        self.assertEqual(table[0].split(), ["kind", "count", "sum(duration)", "p95(blocked)"])
        self.assertEqual(table[-1], "%d groups of %d rows" % (doc["groups_total"], doc["rows"]))
        self.assertTrue(any(line.split()[0] == "thread" and line.split()[2].endswith("ms") for line in table[1:-1]),
                        table)

    def test_errors(self):
        for stmt, col, msg in (
                ("find nodes group by threadd", 21, 'unknown field "threadd"; did you mean "thread"?'),
                ("find nodes group by thread compute total(blocked)", 36, 'no aggregate "total"'),
                ("find nodes group by thread compute sum", 36, "sum of what? sum(FIELD)"),
                ("find nodes group by thread compute blocked", 36, '"blocked" is no aggregate'),
                ("find nodes group by thread order by begin", 37, "order by begin: a group holds many rows"),
                ("find nodes order by sum(blocked)", 21, "order by an aggregate needs `group by` or `compute`"),
                ("find nodes group by thread compute sum(blokced)", 40, 'unknown field "blokced"')):
            with self.subTest(stmt=stmt):
                p = self.run_argusq("--trace", "text", stmt)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("query:1:%d: %s" % (col, msg), p.stderr)
        p = self.run_argusq("--trace", "text", "--format", "svg", "find nodes group by thread")
        self.assertEqual(p.returncode, 1)
        self.assertIn("group by and compute give a table", p.stderr)
        # group and compute are words still: a field or attribute of that name
        self.ok("--trace", "text", "find events where group = 1 limit 1")


if __name__ == "__main__":
    unittest.main()
