"""User-defined rules (paper/000 §User Interactions): extra boundaries,
extra connections, wakeups to ignore; kept with the trace and applied by
`rebuild graph` without re-ingesting."""
import os

from common import ArchiveCase, trace

UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'


class UserRules(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")

    def slice_threads(self):
        n = self.json(UI)["nodes"][0]
        sl = self.json(f"slice back from node {n['id']} depth 6")
        return [x["thread"] for x in sl["nodes"]]

    def test_ignore_wakeup_cuts_the_chain_and_drop_restores_it(self):
        self.assertIn("hog", self.slice_threads())
        edges = self.json("traces")["traces"][0]["edges"]
        r = self.json("rule ignore wakeup where tid = 4124")  # wakeups made by hog
        self.assertEqual(r["rule"], 1)
        # a rule changes nothing until the graph is rebuilt
        self.assertIn("hog", self.slice_threads())
        rb = self.json("rebuild graph")
        self.assertEqual(rb["rules"], 1)
        self.assertLess(rb["edges"], edges)
        self.assertEqual(self.json("traces")["traces"][0]["edges"], rb["edges"])
        threads = self.slice_threads()
        self.assertIn("worker", threads)
        self.assertNotIn("hog", threads)
        self.assertEqual(self.json("rules")["rules"], [{"rule": 1, "text": "rule ignore wakeup where tid = 4124"}])
        self.ok("drop rule 1")
        self.assertEqual(self.json("rebuild graph")["edges"], edges)
        self.assertIn("hog", self.slice_threads())
        self.assertEqual(self.json("rules")["rules"], [])

    def test_boundary_rule_starts_a_node_at_each_matching_event(self):
        futex = self.json('find events where type = "syscall" and name = "futex" and phase = "begin" and tid = 4123')["events"]
        self.assertTrue(futex)
        firsts_before = [self.json(f"events of node {e['node']}")["events"][0]["id"] for e in futex]
        self.assertNotEqual(firsts_before, [e["id"] for e in futex])
        nodes = self.json("traces")["traces"][0]["nodes"]
        self.ok('rule boundary syscall begin where name = "futex"')
        self.assertGreater(self.json("rebuild graph")["nodes"], nodes)
        futex = self.json('find events where type = "syscall" and name = "futex" and phase = "begin" and tid = 4123')["events"]
        for e in futex:
            self.assertEqual(self.json(f"events of node {e['node']}")["events"][0]["id"], e["id"])

    def test_connect_rule_adds_user_edges(self):
        self.ok("rule connect sys_enter where nr = 202 to sys_exit on tid = tid")
        self.json("rebuild graph")
        ex = self.json('find events where event = "sys_exit" and nr = 202 and tid = 4123 limit 3')["events"]
        self.assertEqual(len(ex), 3)
        for e in ex:
            ins = [x for x in self.json(f"show node {e['node']}")["in"] if x["kind"] == "user" and x["to_event"] == e["id"]]
            self.assertEqual(len(ins), 1, e)
            src = self.json(f"find events where id = {ins[0]['from_event']}")["events"][0]
            self.assertEqual((src["event"], src["tid"], src["nr"]), ("sys_enter", 4123, 202))
            self.assertLessEqual(src["ts"], e["ts"])
            self.assertLess(src["id"], e["id"])

    def test_rebuild_keeps_the_default_trace(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        self.json('rebuild graph in trace "lc"')
        self.assertLess(self.json(UI)["nodes"][0]["blocked"], 100_000_000)  # still "normal"

    def test_bad_rules(self):
        p = self.run_argusq("rule ignore wait where x = 1")
        self.assertEqual(p.returncode, 1)
        self.assertIn(":1:13: only wakeups can be ignored", p.stderr)
        p = self.run_argusq('rule boundary syscall where name = "a" or name = "b"')
        self.assertEqual(p.returncode, 1)
        self.assertIn(":1:40:", p.stderr)
        p = self.run_argusq("drop rule 7")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no rule 7", p.stderr)
        self.assertEqual(self.json("rules")["rules"], [])


class RulesFile(ArchiveCase):
    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_ingest_with_rules_file(self):
        rules = self.write("lock.rules", "-- hog's mutex is mutual exclusion only\nrule ignore wakeup where tid = 4124;\n")
        s = self.json("ingest", trace("lockchain-anomaly.txt"), "--rules", rules)
        n = self.json(UI)["nodes"][0]
        threads = [x["thread"] for x in self.json(f"slice back from node {n['id']} depth 6")["nodes"]]
        self.assertNotIn("hog", threads)
        self.assertEqual([r["text"] for r in self.json("rules")["rules"]], ["rule ignore wakeup where tid = 4124"])
        # rebuilding with the stored rules gives the same graph
        rb = self.json("rebuild graph")
        self.assertEqual((rb["nodes"], rb["edges"]), (s["nodes"], s["edges"]))

    def test_bad_rules_file_names_line_and_column_and_leaves_no_trace(self):
        rules = self.write("bad.rules", "rule ignore wakeup where tid = 4124;\nrule boundary syscall where name ~ 1;\n")
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), "--rules", rules)
        self.assertEqual(p.returncode, 1)
        self.assertIn("bad.rules:2:34:", p.stderr)
        self.assertFalse(os.path.exists(self.db) and self.json("traces")["traces"])
        rules = self.write("notrule.rules", "traces;\n")
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), "--rules", rules)
        self.assertEqual(p.returncode, 1)
        self.assertIn("notrule.rules:1:1: only `rule` statements", p.stderr)
