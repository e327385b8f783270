"""Where a thread's time went between its events (the graph
records preemption), on real recordings of tests/workloads/cpucontend.c:
ui-main draws frames of 40 ms of CPU time on CPU 0; in the anomaly run two
threads pinned to the same CPU spin 300 ms from frame 3 on, so ui-main is
runnable but off the CPU for most of frames 3 and 4, with no wakeup chain
at all.  Nodes carry `running` and `runnable` (ns); a preemption is an edge
of kind `preempt` from the node that took the CPU.

    running   ns on a cpu from the switch-in before the node's first event
              to its last event, less the time it was preempted
    runnable  ns from its wakeup to its switch-in, and preempted inside it
"""
import unittest

from common import ArchiveCase, trace

MS = 1_000_000


class CpuContention(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("cpucontend-normal.txt"), name="normal")
        self.ingest(trace("cpucontend-anomaly.txt"), name="anomaly")

    def frames(self, name):
        """ui-main's frames: the nodes after its 30 ms sleeps, in time order."""
        nodes = self.json("--trace", name, 'find nodes where thread = "ui-main" and blocked > 25000000')["nodes"]
        return sorted(nodes, key=lambda n: n["begin"])

    def test_fields_are_queryable_and_in_json(self):
        n = self.json("--trace", "anomaly", 'find nodes where thread = "ui-main" order by runnable desc limit 1')
        n = n["nodes"][0]
        self.assertTrue({"running", "runnable"} <= set(n))
        again = self.json("--trace", "anomaly", f'find nodes where id = {n["id"]} and runnable = {n["runnable"]} '
                          f'and running = {n["running"]}')["nodes"]
        self.assertEqual([m["id"] for m in again], [n["id"]])

    def test_frames_run_40ms_and_the_contended_ones_wait_for_the_cpu(self):
        normal, anomaly = self.frames("normal"), self.frames("anomaly")
        self.assertEqual(len(normal), 6)
        self.assertEqual(len(anomaly), 6)
        for f in normal + anomaly:
            # every frame computes 40 ms of CPU time, however long it takes
            self.assertAlmostEqual(f["running"], 40 * MS, delta=6 * MS, msg=f)
            # running and runnable account for the frame's span; runnable
            # also holds the wait for the cpu after the 30 ms sleep's wakeup
            # (part of `blocked`, before the first event)
            over = f["running"] + f["runnable"] - f["duration"]
            self.assertGreaterEqual(over, -1 * MS, f)
            self.assertLessEqual(over, f["blocked"] - 30 * MS + 1 * MS, f)
        for f in normal:
            self.assertLess(f["runnable"], 8 * MS, f)
        worst = max(anomaly, key=lambda f: f["runnable"])
        self.assertEqual(worst, anomaly[3], "frame 3 is the one the hogs start on")
        self.assertGreater(worst["runnable"], 50 * MS)
        self.assertGreater(worst["runnable"], worst["running"])

    def test_preempt_edges_reach_the_hogs(self):
        worst = max(self.frames("anomaly"), key=lambda f: f["runnable"])
        s = self.json("--trace", "anomaly", f"slice back from node {worst['id']} depth 2")
        by_id = {n["id"]: n for n in s["nodes"]}
        preempters = {by_id[e["from"]]["thread"] for e in s["edges"]
                      if e["kind"] == "preempt" and e["to"] == worst["id"]}
        self.assertTrue(preempters & {"hog1", "hog2"}, preempters)
        hogs = {n["thread"] for n in s["nodes"]}
        self.assertTrue({"hog1", "hog2"} <= hogs, hogs)
        # the hog's node that took the cpu ran for about 300 ms
        hog = max((n for n in s["nodes"] if n["thread"] in ("hog1", "hog2")), key=lambda n: n["running"])
        self.assertGreater(hog["running"], 100 * MS)

    def test_no_preempt_edges_without_preemption(self):
        # lockchain's waits are all sleeps: edges of kind preempt, if any,
        # come from real R-state switches only
        self.ingest(trace("lockchain-anomaly.txt"), name="lock")
        edges = self.json("--trace", "lock", 'find edges where kind = "preempt"')["edges"]
        for e in edges:
            ev = self.json("--trace", "lock", f"find events where id = {e['to_event']}")["events"][0]
            self.assertEqual(ev["event"], "sched_switch")
            self.assertIn(ev["attrs"]["state"] if "attrs" in ev else ev["state"], ("R", "R+"))


if __name__ == "__main__":
    unittest.main()
