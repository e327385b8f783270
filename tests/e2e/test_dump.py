"""argusq dump and its restore (docs/ARGUS-DUMP.md): a trace
written back out as an Argus trace, which `argusq ingest` reads into the
same events, nodes and edges -- for every trace shipped in tests/traces
and every one of ../shared/foreign."""
import json
import os
import unittest

from common import ROOT, TRACES, ArchiveCase, arch_of, trace

FOREIGN = os.path.join(ROOT, "..", "shared", "foreign")
# what `traces` says of a trace that its dump must give back (not its
# source, ingest time, or the lines the source had that were no events)
KEPT = ("events", "threads", "processes", "nodes", "edges", "first_ts", "last_ts", "format", "labels")


class RoundTrip(ArchiveCase):
    def listing(self, db):
        out = {w: self.json("-d", db, f"find {w}", db=False)[w] for w in ("events", "nodes", "edges")}
        t = self.json("-d", db, "traces", db=False)["traces"]
        self.assertEqual(len(t), 1)
        out["trace"] = {k: t[0][k] for k in KEPT}
        out["rules"] = self.json("-d", db, "rules", db=False)["rules"]
        return out

    def body(self, path):
        """The dump's lines but its dump record (which names the source)."""
        with open(path) as f:
            return [l for l in f.read().split("\n") if not l.startswith("dump ")]

    def round_trip(self, path, *extra):
        a, b = os.path.join(self.dir, "a.db"), os.path.join(self.dir, "b.db")
        d1, d2 = os.path.join(self.dir, "1.argus"), os.path.join(self.dir, "2.argus")
        for f in (a, b, d1, d2):
            if os.path.exists(f):
                os.unlink(f)
        self.ok("-d", a, "ingest", path, *arch_of(path), *extra, db=False)
        out = self.json("-d", a, "dump", "-o", d1, db=False)
        self.ok("-d", b, "ingest", d1, db=False)
        self.ok("-d", b, "dump", "-o", d2, db=False)
        la, lb = self.listing(a), self.listing(b)
        self.assertEqual(out["events"], la["trace"]["events"])
        self.assertTrue(la["events"])
        for what in la:
            self.assertEqual(la[what], lb[what], f"{path}: {what}")
        # the restored trace dumps to the same text: nothing the listing does
        # not show (contexts, thread flags, declarations) was lost either
        self.assertEqual(self.body(d1), self.body(d2))
        return la

    def files(self, d, ends):
        return sorted(os.path.join(d, f) for f in os.listdir(d) if f.endswith(ends))

    def test_every_shipped_trace(self):
        files = self.files(TRACES, (".trace", ".txt", ".dat"))
        self.assertGreater(len(files), 30)
        for path in files:
            with self.subTest(path=os.path.basename(path)):
                self.round_trip(path)

    def test_every_foreign_trace(self):
        if not os.path.isdir(FOREIGN):
            self.skipTest(f"{FOREIGN} is not there (../shared beside the project)")
        for path in self.files(FOREIGN, (".txt", ".dat")):
            with self.subTest(path=os.path.basename(path)):
                self.round_trip(path)

    def test_ctf_folders_and_perf_data(self):
        # the perf.data and CTF readers: a dump names their format, and the
        # dump's ingest gives the same events, nodes and edges
        self.round_trip(trace("pipechain-anomaly.perf.data"))
        lttng = os.path.join(os.path.dirname(FOREIGN), "foreign-lttng")
        if not os.path.isdir(lttng):
            self.skipTest(f"{lttng} is not there (../shared beside the project)")
        for name in sorted(os.listdir(lttng)):
            path = os.path.join(lttng, name)
            if os.path.isdir(path):
                with self.subTest(path=name):
                    self.round_trip(path)

    def test_perfetto_files(self):
        perfetto = os.path.join(os.path.dirname(FOREIGN), "foreign-perfetto")
        if not os.path.isdir(perfetto):
            self.skipTest(f"{perfetto} is not there (../shared beside the project)")
        for name in sorted(os.listdir(perfetto)):
            if name.endswith(".perfetto-trace"):
                with self.subTest(path=name):
                    self.round_trip(os.path.join(perfetto, name))

    def test_labels_and_rules_come_back(self):
        rules = os.path.join(self.dir, "r.rules")
        with open(rules, "w") as f:
            f.write("rule ignore wakeup where tid = 4124;\nrule boundary syscall begin where name = \"futex\";\n")
        la = self.round_trip(trace("lockchain-anomaly.txt"), "--rules", rules, "--label", "run=anomaly",
                             "--label", 'note=a "quoted"\\ value')
        self.assertEqual(la["trace"]["labels"], {"arch": "x86_64", "run": "anomaly", "note": 'a "quoted"\\ value'})
        self.assertEqual(len(la["rules"]), 2)
        # the rules shaped the graph: without them it is another one
        self.ok("-d", os.path.join(self.dir, "c.db"), "ingest", trace("lockchain-anomaly.txt"),
                *arch_of(trace("lockchain-anomaly.txt")), db=False)
        other = self.json("-d", os.path.join(self.dir, "c.db"), "traces", db=False)["traces"][0]
        self.assertNotEqual((other["nodes"], other["edges"]), (la["trace"]["nodes"], la["trace"]["edges"]))


class Values(ArchiveCase):
    """Attribute text goes out and comes back byte for byte."""

    def test_awkward_values_and_names(self):
        src = os.path.join(self.dir, "odd.trace")
        with open(src, "w") as f:
            f.write('#argus-trace 1\n'
                    'proc 10 "a \\"quoted\\" proc"\n'
                    'thread 10 11 "tab\there" main\n'
                    'symbol 0xABC "sym \\\\ bol"\n'
                    '100 11 wait reason=io note="x = \\"y\\" \\\\ z" big="123456789012345678901234567890"'
                    ' hex="0xABCDEF" empty="" eq=a=b\n'
                    '200 11 flag_write addr=0xABC value=-7 sym="sym \\\\ bol"\n'
                    '300 11 wakeup tid=11 reason=x\n')
        self.ingest(src, name="odd")
        before = self.json("find events")["events"]
        self.assertEqual(before[0]["note"], 'x = "y" \\ z')
        self.assertEqual(before[0]["big"], "123456789012345678901234567890")
        self.assertEqual(before[0]["hex"], "0xABCDEF")
        self.assertEqual(before[0]["empty"], "")
        self.assertEqual(before[0]["eq"], "a=b")
        dump = self.ok("dump").stdout  # the latest trace, on standard output
        self.assertTrue(dump.startswith("#argus-trace 1\n"))
        self.assertIn('symbol 0xabc "sym \\\\ bol"', dump)
        self.assertIn('thread 10 11 "tab\\there" main', dump)
        path = os.path.join(self.dir, "odd.argus")
        with open(path, "w") as f:
            f.write(dump)
        other = os.path.join(self.dir, "b.db")
        s = self.json("-d", other, "ingest", path, db=False)
        self.assertEqual(s["trace"], "odd")  # the dumped trace's name
        self.assertEqual(self.json("-d", other, "find events", db=False)["events"], before)
        nodes = self.json("-d", other, "find nodes", db=False)["nodes"]
        self.assertEqual(nodes, self.json("find nodes")["nodes"])
        self.assertEqual(nodes[0]["proc"], 'a "quoted" proc')
        self.assertEqual(nodes[0]["thread"], "tab\there")


class Commands(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.ingest(trace("lockchain-normal.txt"), name="normal")

    def test_trace_option_and_default(self):
        out = os.path.join(self.dir, "lc.argus")
        s = self.json("dump", "--trace", "lc", "-o", out)
        self.assertEqual((s["trace"], s["dump"]), ("lc", out))
        self.assertEqual(s["events"], self.json("traces")["traces"][0]["events"])
        with open(out) as f:
            self.assertIn('name="lc"', f.read(1000))
        self.assertIn('name="normal"', self.ok("dump").stdout[:1000])  # the latest
        p = self.ok("dump", "--trace", "lc", "-o", os.path.join(self.dir, "x.argus"))
        self.assertIn('dumped trace "lc"', p.stdout)

    def test_restore_names(self):
        out = os.path.join(self.dir, "lc.argus")
        self.ok("dump", "--trace", "lc", "-o", out)
        p = self.run_argusq("ingest", out)
        self.assertEqual(p.returncode, 1)  # "lc" is there already
        self.assertIn("lc", p.stderr)
        s = self.json("ingest", out, "--name", "lc2")
        self.assertEqual(s["trace"], "lc2")
        t = {x["name"]: x for x in self.json("traces")["traces"]}
        self.assertEqual(t["lc2"]["format"], t["lc"]["format"])
        self.assertEqual(t["lc2"]["source"], out)
        self.assertEqual(self.json('find nodes in trace "lc2"'), self.json('find nodes in trace "lc"'))

    def test_errors(self):
        p = self.run_argusq("dump", "--trace", "nope")
        self.assertEqual(p.returncode, 1)
        self.assertIn('no trace "nope"', p.stderr)
        bad = os.path.join(self.dir, "no", "such", "dir", "x.argus")
        p = self.run_argusq("dump", "-o", bad)
        self.assertEqual(p.returncode, 1)
        self.assertIn(bad, p.stderr)
        p = self.run_argusq("traces", "-o", "x")
        self.assertEqual(p.returncode, 2)
        self.assertIn("-o FILE is an option of dump", p.stderr)
        p = self.run_argusq("-d", os.path.join(self.dir, "none.db"), "dump", db=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such archive", p.stderr)

    def test_a_failed_dump_leaves_the_old_file(self):
        out = os.path.join(self.dir, "lc.argus")
        with open(out, "w") as f:
            f.write("keep me\n")
        p = self.run_argusq("dump", "--trace", "nope", "-o", out)
        self.assertEqual(p.returncode, 1)
        with open(out) as f:
            self.assertEqual(f.read(), "keep me\n")
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(["argus.db", "argus.db-lock", "lc.argus"]))


class BadDumps(ArchiveCase):
    """A damaged dump is refused at its line, and the archive keeps no part of it."""

    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.dump = self.ok("dump").stdout.split("\n")

    def refused(self, lines, want):
        path = os.path.join(self.dir, "bad.argus")
        with open(path, "w") as f:
            f.write("\n".join(lines))
        p = self.run_argusq("ingest", path, "--name", "bad")
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(want, p.stderr)
        self.assertEqual([t["name"] for t in self.json("traces")["traces"]], ["lc"])

    def first_event(self):
        return next(i for i, l in enumerate(self.dump) if l[:1].isdigit())

    def test_bad_field(self):
        lines = list(self.dump)
        i = self.first_event()
        lines[i] = lines[i].replace("@cpu=1", "@cpu=x")
        self.refused(lines, f"bad.argus:{i + 1}: bad value for @cpu=: \"x\"")

    def test_unknown_dump_key(self):
        lines = list(self.dump)
        i = self.first_event()
        lines[i] += " @color=red"
        self.refused(lines, f"bad.argus:{i + 1}: unknown dump key @color=")

    def test_cut_short(self):
        self.refused(self.dump[: len(self.dump) // 2], "the file is cut short")

    def test_header_record_after_events(self):
        lines = list(self.dump)
        lines.insert(self.first_event() + 1, 'label "k" "v"')
        self.refused(lines, "label records belong to the dump's header")

    def test_dump_record_not_first(self):
        lines = list(self.dump)
        lines.insert(1, 'symbol 0x1 "s"')
        self.refused(lines, "bad.argus:4: the dump record must be the first record")

    def test_bad_rule(self):
        lines = list(self.dump)
        lines.insert(3, 'rule "rule ignore wait where x = 1"')
        self.refused(lines, "bad.argus:4 (rule record):1:13: only wakeups can be ignored")

    def test_dump_keys_need_a_dump(self):
        self.refused(["#argus-trace 1", 'thread 1 1 "t"', "100 1 wait reason=io @cpu=1"],
                     "bad.argus:3: wait: @cpu= is a key of argusq dumps")
        self.refused(["#argus-trace 1", 'thread 1 1 "t"', "100 1 raw"], 'bad.argus:3: unknown event type "raw"')


if __name__ == "__main__":
    unittest.main()
