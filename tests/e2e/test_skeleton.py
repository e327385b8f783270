"""The walking skeleton end to end: real ftrace traces into an
archive, the graph, `find` and `slice back` from the command line."""
import os

from common import ArchiveCase, count_event_lines, trace

LOCKCHAIN_FORMS = ["lockchain-anomaly.txt", "lockchain-anomaly-raw.trace", "lockchain-anomaly-report.txt"]


class Ingest(ArchiveCase):
    def test_summary_counts_every_event_line(self):
        for name in LOCKCHAIN_FORMS + ["ipcdaemon.txt", "ipcdaemon-raw.trace"]:
            with self.subTest(trace=name):
                s = self.ingest(trace(name))
                self.assertLessEqual({"trace", "events", "threads", "processes", "nodes", "edges", "skipped"}, set(s))
                self.assertEqual(s["trace"], name)
                self.assertEqual(s["events"], count_event_lines(trace(name)))
                self.assertGreater(s["nodes"], 10)
                self.assertGreater(s["edges"], 10)

    def test_name_option_and_duplicate_name(self):
        self.ingest(trace("lockchain-anomaly.txt"), name="run1")
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), "--name", "run1")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("already exists", p.stderr)
        names = [t["name"] for t in self.json("traces")["traces"]]
        self.assertEqual(names, ["run1"])

    def test_archive_from_environment(self):
        db = os.path.join(self.dir, "env.db")
        p = self.run_argusq("ingest", trace("lockchain-normal.txt"), db=False, env={"ARGUSQ_DB": db})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.exists(db))
        p = self.run_argusq("--json", "traces", db=False, env={"ARGUSQ_DB": db})
        self.assertIn("lockchain-normal.txt", p.stdout)

    def test_bad_line_names_file_and_line_and_leaves_archive_as_it_was(self):
        self.ingest(trace("lockchain-normal.txt"))
        before = self.json("traces")
        bad = os.path.join(self.dir, "bad.txt")
        with open(trace("lockchain-anomaly.txt")) as f:
            lines = f.readlines()
        lines[40] = "this is not an ftrace line\n"
        with open(bad, "w") as f:
            f.writelines(lines)
        p = self.run_argusq("ingest", bad)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("bad.txt:41:", p.stderr)
        self.assertEqual(self.json("traces"), before)

    def test_missing_file(self):
        p = self.run_argusq("ingest", os.path.join(self.dir, "nope.txt"))
        self.assertEqual(p.returncode, 2)
        self.assertIn("nope.txt", p.stderr)


class LockchainSlice(ArchiveCase):
    """The reference analysis of shared/traces/README.md: the node of ui-main
    after its longest wait; slicing back reaches worker (wakeup), then hog
    (wakeup on unlock), then the timer that ended hog's 300 ms sleep, and
    the node of hog that armed it (timer edge)."""

    def check(self, name):
        self.ingest(trace(name), name="t")
        nodes = self.json("find nodes where thread = \"ui-main\" order by blocked desc limit 1")["nodes"]
        self.assertEqual(len(nodes), 1)
        n = nodes[0]
        self.assertEqual(n["thread"], "ui-main")
        self.assertGreater(n["blocked"], 250_000_000)
        self.assertLess(n["blocked"], 330_000_000)
        sl = self.json(f"slice back from node {n['id']} depth 20")
        by_id = {x["id"]: x for x in sl["nodes"]}
        self.assertEqual(sl["nodes"][0]["id"], n["id"])
        edges = sl["edges"]
        self.assertNotIn("weak", {e["kind"] for e in edges})

        def into(node_id, kind):
            return [by_id[e["from"]] for e in edges if e["to"] == node_id and e["kind"] == kind]

        workers = [x for x in into(n["id"], "wakeup") if x["thread"] == "worker"]
        self.assertEqual(len(workers), 1, "ui-main is woken by worker")
        hogs = [x for x in into(workers[0]["id"], "wakeup") if x["thread"] == "hog"]
        self.assertEqual(len(hogs), 1, "worker is woken by hog's unlock")
        timers = [x for x in into(hogs[0]["id"], "wakeup") if x["kind"] == "timer"]
        self.assertEqual(len(timers), 1, "hog is woken by its sleep timer")
        self.assertIn("hrtimer_wakeup", timers[0]["thread"])
        armed = [x for x in into(timers[0]["id"], "timer") if x["thread"] == "hog"]
        self.assertEqual(len(armed), 1, "the timer was armed by hog")
        self.assertLess(armed[0]["end"], n["begin"])
        # the sleep that the timer ended is the 300 ms one
        self.assertGreater(hogs[0]["blocked"], 290_000_000)

    def test_trace_cmd_report_l(self):
        self.check("lockchain-anomaly.txt")

    def test_tracefs_raw(self):
        self.check("lockchain-anomaly-raw.trace")

    def test_trace_cmd_report_plain(self):
        self.check("lockchain-anomaly-report.txt")

    def test_normal_run_has_no_long_wait(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        n = self.json("find nodes where thread = \"ui-main\" order by blocked desc limit 1")["nodes"][0]
        self.assertLess(n["blocked"], 100_000_000)


class Queries(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")

    def test_second_process_reads_what_first_ingested(self):
        t = self.json("traces")["traces"]
        self.assertEqual([x["name"] for x in t], ["anomaly"])
        self.assertEqual(t[0]["events"], count_event_lines(trace("lockchain-anomaly.txt")))

    def test_latest_trace_is_default(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        a = self.json("find nodes where thread = \"ui-main\" order by blocked desc limit 1")["nodes"][0]
        b = self.json("--trace", "anomaly", "find nodes where thread = \"ui-main\" order by blocked desc limit 1")["nodes"][0]
        self.assertLess(a["blocked"], 100_000_000)
        self.assertGreater(b["blocked"], 250_000_000)

    def test_find_event_by_thread_and_time(self):
        # the wakeup of hog inside the timer interrupt, from the raw file
        ev = self.json("find events where tid = 0 and ts = 1088969362000")["events"]
        wake = [e for e in ev if e["type"] == "wakeup"]
        self.assertEqual(len(wake), 1)
        self.assertEqual(wake[0]["target"], 4124)
        self.assertEqual(wake[0]["event"], "sched_wakeup")
        self.assertGreater(wake[0]["node"], 0)

    def test_event_attributes_are_kept(self):
        ev = self.json("find events where event = \"sched_waking\" limit 3")["events"]
        self.assertEqual(len(ev), 3)
        self.assertEqual(ev[0]["type"], "raw")
        ev = self.json("find events where type = \"syscall\" and ret = -110")["events"]
        self.assertEqual(len(ev), 9)  # memfd's futex time-outs, NR 202
        for e in ev:
            self.assertEqual((e["ret"], e["name"], e["nr"], e["phase"]), (-110, "futex", 202, "end"))

    def test_find_nodes_duration_literal_and_order(self):
        nodes = self.json("find nodes where blocked > 250ms order by blocked desc")["nodes"]
        self.assertTrue(nodes)
        self.assertEqual(nodes, sorted(nodes, key=lambda x: -x["blocked"]))
        self.assertTrue(all(x["blocked"] > 250_000_000 for x in nodes))
        self.assertIn("ui-main", {x["thread"] for x in nodes})

    def test_all_nodes_without_where(self):
        n = self.json("traces")["traces"][0]["nodes"]
        self.assertEqual(len(self.json("find nodes")["nodes"]), n)

    def test_syntax_error_shows_column(self):
        p = self.run_argusq("find nodes where tid = = 3")
        self.assertEqual(p.returncode, 1)
        self.assertIn(":1:24:", p.stderr)
        lines = p.stderr.splitlines()
        caret = [l for l in lines if l.strip() == "^"]
        self.assertEqual(len(caret), 1)
        self.assertEqual(caret[0].index("^"), 2 + 23)

    def test_unknown_field_is_named(self):
        p = self.run_argusq("find nodes where thred = \"x\"")
        self.assertEqual(p.returncode, 1)
        self.assertIn("unknown field \"thred\"", p.stderr)
        self.assertIn(":1:18:", p.stderr)

    def test_missing_node(self):
        p = self.run_argusq("slice back from node 999999 depth 3")
        self.assertEqual(p.returncode, 1)
        self.assertIn("no node 999999", p.stderr)

    def test_unknown_trace(self):
        p = self.run_argusq("--trace", "nope", "traces")
        self.assertEqual(p.returncode, 0)  # `traces` reads no trace
        p = self.run_argusq("--trace", "nope", "find nodes limit 1")
        self.assertEqual(p.returncode, 1)
        self.assertIn("nope", p.stderr)

    def test_no_archive(self):
        p = self.run_argusq("-d", os.path.join(self.dir, "none.db"), "traces", db=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("none.db", p.stderr)

    def test_table_output_is_readable(self):
        out = self.ok("find nodes where thread = \"ui-main\" order by blocked desc limit 1").stdout
        self.assertIn("ui-main", out)
        self.assertRegex(out, r"\d+\.\dms")


class IpcDaemonSlice(ArchiveCase):
    """shared/traces/README.md: app-a's wait for the daemon's reply to its
    "save" request is caused by the daemon, whose own wait is ended by
    block-I/O completion (an interrupt or a kworker).  app-a's very longest
    block is its own 15 ms sleep between requests (woken by its timer), so
    the test takes its longest wait that another process ended."""

    def check(self, name):
        self.ingest(trace(name), name="ipc")
        waits = self.json('find nodes where thread = "app-a" and blocked > 1ms order by blocked desc')["nodes"]
        self.assertTrue(waits)
        for n in waits:
            ins = self.json(f"show node {n['id']}")["in"]
            wakers = [self.json(f"show node {e['from']}")["node"] for e in ins if e["kind"] == "wakeup"]
            if any(w["thread"] == "daemon" for w in wakers):
                break
        else:
            self.fail("no wait of app-a was ended by the daemon")
        # the save request: the daemon's reply came after file I/O
        self.assertGreater(n["blocked"], 2_000_000)
        sl = self.json(f"slice back from node {n['id']} depth 2")
        by_id = {x["id"]: x for x in sl["nodes"]}
        daemon = [by_id[e["from"]] for e in sl["edges"] if e["to"] == n["id"] and e["kind"] == "wakeup"]
        self.assertEqual([d["thread"] for d in daemon], ["daemon"])
        causes = [by_id[e["from"]] for e in sl["edges"] if e["to"] == daemon[0]["id"] and e["kind"] == "wakeup"]
        self.assertEqual(len(causes), 1)
        c = causes[0]
        self.assertTrue(c["kind"] in ("interrupt", "softirq") or c["thread"].startswith("kworker"), c)

    def test_trace_cmd_report_l(self):
        self.check("ipcdaemon.txt")

    def test_tracefs_raw(self):
        self.check("ipcdaemon-raw.trace")
