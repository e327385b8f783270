"""`rebuild graph` writes a hidden copy of the trace in batches, as an
ingest does, and swaps it in whole at its commit (db_writer_rebuild): the
same graph as an ingest with the same rules, the trace keeps its name,
place and ingest time, the old copy's space is reused, a kill in the
middle leaves the old graph, and nothing of a hidden copy ever shows."""
import json
import os
import signal
import subprocess
import time

from common import ARGUSQ, ROOT, ArchiveCase, arch_of, trace

UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'
BIG = os.path.join(ROOT, "..", "shared", "traces", "pipeline.dat")


class Rebuild(ArchiveCase):
    def answers(self, name, names=True):
        """Every event, node and edge.  names=False leaves out a node's
        thread and process names: an ingest names a node with what the
        trace had said by the node's end (a thread renamed later, a thread
        seen before its process leader), a rebuild with all of it."""
        out = []
        for what in ("events", "nodes", "edges"):
            rows = json.loads(self.run_argusq("--json", f'find {what} in trace "{name}"').stdout)[what]
            out.append([{k: v for k, v in r.items() if names or k not in ("proc", "thread")} for r in rows])
        return out

    def test_the_rebuilt_graph_is_the_ingested_one(self):
        self.ingest(trace("lockchain-normal.txt"), name="first")
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.ingest(trace("markers.trace"), name="last")
        before = self.answers("lc", names=False)
        named = {n["id"]: n["thread"] for n in self.answers("lc")[1]}
        ui = self.json(UI + ' in trace "lc"')["nodes"]
        listed = self.json("traces")["traces"]
        default = self.json(UI)["nodes"]  # no `in trace`: the latest, "last" has no ui-main
        rb = self.json('rebuild graph in trace "lc"', env={"ARGUSQ_BATCH_OPS": "700"})
        self.assertEqual(rb["trace"], "lc")
        self.assertEqual(self.answers("lc", names=False), before)
        # the threads' names reach the graph of the copy (its writer has a
        # thread of its own, and the names were copied on it); a name can
        # be longer (what the trace said later), never missing
        renamed = {n["id"]: n["thread"] for n in self.answers("lc")[1]}
        self.assertEqual(renamed.keys(), named.keys())
        for i, name in named.items():
            self.assertTrue(renamed[i] if name else True, (i, name, renamed[i]))
        self.assertGreater(sum(renamed[i] == name for i, name in named.items()), len(named) * 0.9)
        self.assertEqual(self.json(UI + ' in trace "lc"')["nodes"], ui)
        self.assertTrue(ui)
        # and again: in one batch, the same to the last name
        once = self.answers("lc")
        self.json('rebuild graph in trace "lc"')
        self.assertEqual(self.answers("lc"), once)
        # same names, same order, same ingest times, same counts
        self.assertEqual(self.json("traces")["traces"], listed)
        self.assertEqual(self.json(UI)["nodes"], default)

    def test_the_writer_thread_changes_nothing(self):
        """A rebuild's copy written on a thread of its own (the old copy read
        on the caller's) is the copy written unthreaded."""
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.ingest(trace("eventloop-anomaly.trace"), name="el")
        self.json('rebuild graph in trace "lc"', env={"ARGUSQ_WRITER_THREAD": "0"})
        self.json('rebuild graph in trace "el"', env={"ARGUSQ_WRITER_THREAD": "0", "ARGUSQ_BATCH_OPS": "500"})
        plain = [self.answers("lc"), self.answers("el")]
        self.json('rebuild graph in trace "lc"')
        self.json('rebuild graph in trace "el"', env={"ARGUSQ_BATCH_OPS": "500"})
        self.assertEqual([self.answers("lc"), self.answers("el")], plain)

    def test_the_latest_trace_stays_the_default(self):
        self.ingest(trace("lockchain-normal.txt"), name="old")
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        n = self.json(UI)["nodes"][0]
        self.json("rebuild graph")
        self.assertEqual(self.json(UI)["nodes"][0], n)
        self.assertEqual([t["name"] for t in self.json("traces")["traces"]], ["old", "lc"])

    def test_an_out_of_order_trace_is_rebuilt_from_its_time_order(self):
        with open(trace("markers.trace")) as f:
            lines = f.read().splitlines()
        head = [x for x in lines if not x[:1].isdigit()]
        events = [x for x in lines if x[:1].isdigit()]
        path = os.path.join(self.dir, "reversed.trace")
        with open(path, "w") as f:  # each half in time order, the halves swapped
            f.write("\n".join(head + events[len(events) // 2:] + events[:len(events) // 2]) + "\n")
        self.ingest(path, name="rev")
        before = self.answers("rev", names=False)
        self.json("rebuild graph", env={"ARGUSQ_BATCH_OPS": "300"})
        self.assertEqual(self.answers("rev", names=False), before)

    def test_the_old_copy_is_deleted_and_its_space_reused(self):
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.json("rebuild graph")
        size = os.path.getsize(self.db)
        for _ in range(4):  # a copy left behind per rebuild would pass 2x
            self.json("rebuild graph", env={"ARGUSQ_BATCH_OPS": "2000"})
        self.assertLessEqual(os.path.getsize(self.db), size * 1.5)

    def test_a_killed_rebuild_leaves_the_old_graph(self):
        if not os.path.exists(BIG):
            self.skipTest("../shared/traces/pipeline.dat is not here")
        self.ingest(BIG, name="big")
        self.ingest(trace("lockchain-anomaly.txt"), name="lc")
        self.json('rebuild graph in trace "big"')  # names as a rebuild gives them
        before = self.answers("big")
        listed = self.json("traces")["traces"]
        killed = 0
        for delay in (0.03, 0.08, 0.15, 0.3):
            p = subprocess.Popen([ARGUSQ, "-d", self.db, 'rebuild graph in trace "big"'],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                 env=dict(os.environ, ARGUSQ_BATCH_OPS="20000"))
            time.sleep(delay)
            if p.poll() is None:
                p.send_signal(signal.SIGKILL)
                killed += 1
            p.wait()
            # whatever the kill left: the trace, whole, as it was
            self.assertEqual(self.json("traces")["traces"], listed)
            self.assertEqual(self.answers("big"), before)
            # a node's counterparts come from committed traces only
            n = self.json('find nodes where thread = "ui-main" limit 1 in trace "lc"')["nodes"][0]
            m = self.json(f'match node {n["id"]} in trace "lc"')
            self.assertTrue(m["nodes"])
            self.assertTrue(all(x["trace"] in ("big", "lc") for x in m["nodes"]), m)
        self.assertGreater(killed, 0, "the rebuild always finished before the kill")
        # the next writer deletes what the killed ones left, and the file
        # stops growing: a copy left behind per rebuild (some 40% of this
        # file) would pass 1.5x in three.  (LMDB keeps its high-water mark,
        # and free pages too scattered for an event block's run of pages
        # can still raise it a little.)
        self.json('rebuild graph in trace "big"')
        self.assertEqual(self.answers("big"), before)
        size = os.path.getsize(self.db)
        for _ in range(3):
            self.json('rebuild graph in trace "big"')
        self.assertLessEqual(os.path.getsize(self.db), size * 1.5)
