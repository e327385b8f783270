"""Normal versus anomaly: normalized-node matching, node and
path comparison, diagnose, check fix and the transaction graph, on the
lockchain traces (the reference analysis: hog's 300 ms sleep while holding
the mutex is the root cause of ui-main's long wait) and on a fixture."""
import os

from common import ROOT, ArchiveCase, trace

UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'


class Lockchain(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")  # the default trace
        self.ui = self.json(UI)["nodes"][0]

    def test_match_finds_ui_main_in_the_normal_trace(self):
        m = self.json(f'match node {self.ui["id"]} in trace "normal"')["nodes"]
        self.assertTrue(m)
        self.assertTrue(all(x["trace"] == "normal" for x in m))
        self.assertEqual(m[0]["thread"], "ui-main")
        scores = [x["score"] for x in m]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertEqual(m[0]["score"], 1.0)
        self.assertLess(m[0]["blocked"], 10_000_000)  # the same step, without the long wait
        # without `in trace`: every trace, this one included, never the node itself
        allm = self.json(f'match node {self.ui["id"]}')["nodes"]
        self.assertEqual({x["trace"] for x in allm}, {"normal", "anomaly"})
        self.assertNotIn((self.ui["id"], "anomaly"), [(x["id"], x["trace"]) for x in allm])
        # a node of another thread does not match ui-main's nodes
        hog = self.json('find nodes where thread = "hog" order by blocked desc limit 1')["nodes"][0]
        self.assertNotIn("ui-main", {x["thread"] for x in self.json(f'match node {hog["id"]}')["nodes"]})

    def test_compare_nodes(self):
        base = self.json(f'match node {self.ui["id"]} in trace "normal"')["nodes"][0]
        c = self.json(f'compare node {self.ui["id"]} with node {base["id"]} in trace "normal"')
        self.assertEqual(c["a"]["id"], self.ui["id"])
        self.assertEqual(c["b"]["id"], base["id"])
        self.assertIn("syscall:futex", c["common"])
        self.assertEqual(c["only_a"], [])
        self.assertEqual(c["blocked"]["a"], self.ui["blocked"])
        self.assertLess(c["blocked"]["delta"], -250_000_000)
        self.assertEqual([r["syscall"] for r in c["syscall_returns"]], ["futex"])
        # two different steps differ in their normal forms
        sleep = self.json('find nodes where thread = "ui-main" and blocked > 25ms and blocked < 35ms limit 1')["nodes"][0]
        d = self.json(f'compare node {sleep["id"]} with node {self.ui["id"]}')
        self.assertTrue(d["only_a"])
        self.assertLess(d["score"], 1.0)
        p = self.run_argusq("compare node 1 with node 999999")
        self.assertEqual(p.returncode, 1)
        self.assertIn(":1:26:", p.stderr)

    def test_compare_paths(self):
        base = self.json(f'match node {self.ui["id"]} in trace "normal"')["nodes"][0]
        c = self.json(f'compare path (slice back from node {base["id"]} in trace "normal") '
                      f'with (slice back from node {self.ui["id"]})')
        self.assertEqual(c["period"]["end"], self.ui["begin"])
        self.assertEqual(c["period"]["end"] - c["period"]["begin"], self.ui["blocked"])
        top = [t["thread"] for t in c["threads"][:3]]
        self.assertIn("hog", top)
        self.assertIn("worker", top)
        self.assertNotIn("ui-main", [t["thread"] for t in c["threads"]])
        self.assertEqual(c["anomaly_path"][0]["id"], self.ui["id"])
        p = self.run_argusq("compare path (traces) with (slice back from node 1)")
        self.assertEqual(p.returncode, 1)
        self.assertIn("two slices", p.stderr)

    def check_diagnosis(self, d, baseline_trace):
        self.assertEqual(d["anomaly"]["id"], self.ui["id"])
        self.assertEqual(d["kind"], "wait")
        self.assertIsNotNone(d["baseline"])
        self.assertEqual(d["baseline"]["thread"], "ui-main")
        self.assertEqual(d["baseline"]["trace"], baseline_trace)
        self.assertLess(d["baseline"]["blocked"], 100_000_000)
        suspects = [s["thread"] for s in d["suspects"]]
        self.assertIn("hog", suspects[:3])
        self.assertEqual(suspects[0], "hog")
        for s in d["suspects"]:
            self.assertEqual(set(s) >= {"node", "thread", "proc", "reason", "evidence"}, True)
        self.assertIn("timer", d["suspects"][0]["reason"])
        self.assertEqual(d["anomaly_path"][0]["id"], self.ui["id"])
        self.assertIn("hog", [n["thread"] for n in d["anomaly_path"]])
        self.assertEqual(d["normal_path"][0]["id"], d["baseline"]["id"])

    def test_diagnose_within_the_anomaly_trace(self):
        d = self.json(f'diagnose node {self.ui["id"]}')
        self.check_diagnosis(d, "anomaly")
        self.assertLess(d["baseline"]["end"], self.ui["begin"])  # earlier in the same trace

    def test_diagnose_against_the_normal_trace(self):
        self.check_diagnosis(self.json(f'diagnose node {self.ui["id"]} against trace "normal"'), "normal")

    def test_diagnose_thread_picks_the_longest_block(self):
        d = self.json('diagnose thread "ui-main" against trace "normal"')
        self.check_diagnosis(d, "normal")
        p = self.run_argusq('diagnose thread "nobody"')
        self.assertEqual(p.returncode, 1)
        self.assertIn('no thread named "nobody"', p.stderr)

    def test_diagnose_explains_itself(self):
        out = self.ok('diagnose thread "ui-main" against trace "normal"').stdout
        self.assertIn("a long wait", out)
        self.assertIn("normal counterpart", out)
        # ranked by the time it took of ui-main's wait, the chain named
        self.assertRegex(out, r"1\. hog .*slept 2\d\d\.\dms on a timer it armed \(node \d+\) "
                              r"while ui-main waited on it through worker")
        self.assertRegex(out, r"went to: hog timer 9\d\.\d%")

    def test_diagnose_busy_node(self):
        busy = self.json('find nodes where thread = "worker" and duration > 400us order by duration desc limit 1')["nodes"][0]
        d = self.json(f'diagnose node {busy["id"]}')
        self.assertEqual(d["kind"], "busy" if busy["blocked"] < busy["duration"] else "wait")

    def test_check_fix(self):
        c = self.json('check fix of thread "ui-main" after trace "normal"')
        self.assertEqual(c["before"]["id"], self.ui["id"])
        self.assertTrue(c["shrank"])
        self.assertEqual(c["by"], c["before"]["blocked"] - c["after"]["blocked"])
        self.assertLess(c["ratio"], 0.5)
        n = self.json(f'check fix of node {self.ui["id"]} after trace "normal"')
        self.assertTrue(n["shrank"])
        self.assertLess(n["after"]["blocked"], 10_000_000)  # the counterpart: the futex wait
        # and the other way round: no shrink
        r = self.json('check fix of thread "ui-main" in trace "normal" after trace "anomaly"')
        self.assertFalse(r["shrank"])
        self.assertIn("did not shrink", self.ok('check fix of thread "ui-main" in trace "normal" after trace "anomaly"').stdout)


class Transaction(ArchiveCase):
    def test_transaction_graph_from_user_input(self):
        self.ingest(os.path.join(ROOT, "tests", "fixtures", "transaction.argus"), name="tx")

        def node(tid, ts):
            return self.json(f"find events where tid = {tid} and ts = {ts}")["events"][0]["node"]

        root = node(101, 1000)
        t = self.json(f"transaction from node {root}")
        ids = {n["id"] for n in t["nodes"]}
        self.assertEqual(t["nodes"][0]["id"], root)
        for tid, ts in [(201, 1040), (102, 1045), (101, 1070), (103, 1065)]:
            self.assertIn(node(tid, ts), ids, (tid, ts))
        for tid, ts in [(301, 2000), (201, 2010)]:
            self.assertNotIn(node(tid, ts), ids, (tid, ts))
        kinds = {e["kind"] for e in t["edges"]}
        self.assertNotIn("wakeup", kinds)
        self.assertTrue({"ipc", "dispatch"} <= kinds)
        dot = self.ok("--format", "dot", f"transaction from node {root}").stdout
        self.assertTrue(dot.startswith("digraph"))


class BusyAndYield(ArchiveCase):
    def test_kinds(self):
        self.ingest(os.path.join(ROOT, "tests", "fixtures", "busy-yield.argus"), name="by")

        def node(ts):
            return self.json(f"find events where tid = 701 and ts = {ts}")["events"][0]["node"]

        busy = self.json(f"diagnose node {node(3010)}")
        self.assertEqual(busy["kind"], "busy")
        self.assertEqual(busy["baseline"]["id"], node(2010))
        self.assertEqual(busy["suspects"][0]["node"], node(3010))
        self.assertIn("syscall:stat", busy["suspects"][0]["evidence"])
        y = self.json(f"diagnose node {node(900200)}")
        self.assertEqual(y["kind"], "yield")
        self.assertIn("yielded", y["suspects"][0]["reason"])
        w = self.json(f"diagnose node {node(2010)}")
        self.assertEqual(w["kind"], "wait")
