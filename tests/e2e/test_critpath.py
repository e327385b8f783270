"""`critical path of node N | of thread "NAME"` on real recordings: every
nanosecond of the node's period (the wait before it, and its run) goes to
one (thread, node, state), following what ended each wait back through the
threads that caused it, and giving preempted time to the threads that took
the CPU.

    {"node": NODE, "period": {"begin","end","ns"},
     "parts": [{"thread","tid","node","state","begin","ns"}]}
    state: running | runnable | blocked | timer | io | interrupt
"""
import subprocess
import unittest

from common import ARGUSQ, ArchiveCase, trace

MS = 1_000_000
STATES = {"running", "runnable", "blocked", "timer", "io", "interrupt"}


class CriticalPathCase:
    FILE = ROOT = STATE = None
    MAIN = "ui-main"
    ROOT_SHARE = 0.9

    def setUp(self):
        super().setUp()
        self.ingest(trace(self.FILE), name="t")

    def life(self):
        return self.json("--trace", "t", f'critical path of thread "{self.MAIN}"')

    def cp(self, what=None):
        """of the thread's worst step (the node a thread's life names)"""
        return self.json("--trace", "t", f'critical path of {what or "node %d" % self.life()["node"]["id"]}')

    def by_thread(self, d, state=None):
        out = {}
        for p in d["parts"]:
            if state is None or p["state"] == state:
                out[p["thread"]] = out.get(p["thread"], 0) + p["ns"]
        return out

    def test_parts_partition_the_period(self):
        d = self.cp()
        per = d["period"]
        self.assertEqual(per["ns"], per["end"] - per["begin"])
        self.assertEqual(d["node"]["thread"], self.MAIN)
        self.assertEqual(per["end"], d["node"]["end"])
        at = per["begin"]
        for p in d["parts"]:
            self.assertIn(p["state"], STATES)
            self.assertTrue({"thread", "tid", "node", "state", "begin", "ns"} <= set(p))
            self.assertEqual(p["begin"], at, p)  # contiguous, in time order
            self.assertGreater(p["ns"], 0)
            at += p["ns"]
        self.assertEqual(at, per["end"])

    def test_root_cause_takes_the_period(self):
        d = self.cp()
        mine = self.by_thread(d, self.STATE)
        total = sum(mine.get(r, 0) for r in self.ROOT) if isinstance(self.ROOT, tuple) else mine.get(self.ROOT, 0)
        self.assertGreater(total, self.ROOT_SHARE * d["period"]["ns"] if self.ROOT_SHARE else 0,
                           (self.by_thread(d), d["period"]))

    def test_a_threads_life_is_partitioned_whole(self):
        """of thread: every ns of its life, from its first wait (or its
        creation) to its last node's end; the worst step inside it, and the
        root cause's share of that step there as well"""
        d, step = self.life(), self.cp()
        self.assertTrue(d["life"])
        self.assertFalse(step["life"])
        per = d["period"]
        self.assertLessEqual(per["begin"], step["period"]["begin"])
        self.assertGreaterEqual(per["end"], step["period"]["end"])
        at = per["begin"]
        for p in d["parts"]:
            self.assertEqual(p["begin"], at, p)
            at += p["ns"]
        self.assertEqual(at, per["end"])
        self.assertEqual(sum(d["totals"].values()), per["ns"])
        self.assertEqual(set(d["totals"]), STATES)
        mine, in_step = self.by_thread(d, self.STATE), self.by_thread(step, self.STATE)
        roots = self.ROOT if isinstance(self.ROOT, tuple) else (self.ROOT,)
        self.assertGreaterEqual(sum(mine.get(r, 0) for r in roots), sum(in_step.get(r, 0) for r in roots))
        # a stretch of it: between T1 and T2, clipped to the life
        a, b = step["period"]["begin"], step["period"]["end"]
        part = self.json("--trace", "t", f'critical path of thread "{self.MAIN}" between {a} and {b}')
        self.assertEqual((part["period"]["begin"], part["period"]["end"]), (a, b))
        self.assertEqual(sum(p["ns"] for p in part["parts"]), b - a)

    def test_table_csv_and_views(self):
        out = self.q_text(["--trace", "t", f'critical path of thread "{self.MAIN}"'])
        self.assertIn(f"critical path of thread {self.MAIN} (tid", out)
        self.assertRegex(out, r"\nin all: .*running")
        out = self.q_text(["--trace", "t", f'critical path of node {self.cp()["node"]["id"]}'])
        self.assertIn("critical path of node", out)
        self.assertRegex(out, r"thread +tid +node +state +begin +ns +share +for")
        csv = self.q_text(["--trace", "t", "--format", "csv", f'critical path of thread "{self.MAIN}"'])
        self.assertEqual(csv.splitlines()[0], "thread,tid,node,state,begin,ns,share,for,device,for_tid,for_node")
        dot = self.q_text(["--trace", "t", "--format", "dot", f'critical path of thread "{self.MAIN}"'])
        self.assertIn("digraph", dot)

    def q_text(self, args):
        p = subprocess.run([ARGUSQ, "-d", self.db] + args, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return p.stdout


class Lockchain(CriticalPathCase, ArchiveCase):
    FILE, ROOT, STATE = "lockchain-anomaly.txt", "hog", "timer"


class Pipechain(CriticalPathCase, ArchiveCase):
    FILE, ROOT, STATE = "pipechain-anomaly.txt", "backend", "timer"


class Flockchain(CriticalPathCase, ArchiveCase):
    FILE, ROOT, STATE = "flockchain-anomaly.txt", "locker", "timer"


class Timerchain(CriticalPathCase, ArchiveCase):
    FILE, ROOT, STATE = "timerchain-anomaly.txt", "ticker", "timer"


class Mixchain(CriticalPathCase, ArchiveCase):
    FILE, ROOT, STATE = "mixchain-anomaly.txt", "compactor", "timer"


class CpuContention(CriticalPathCase, ArchiveCase):
    """No wakeup chain: ui-main's worst frame is mostly preempted time,
    given to hog1 and hog2 (about half each), beside its own 40 ms."""
    FILE, ROOT, STATE, ROOT_SHARE = "cpucontend-anomaly.txt", ("hog1", "hog2"), "runnable", 0.4

    def test_both_hogs_share_it(self):
        d = self.cp()
        runnable = self.by_thread(d, "runnable")
        self.assertGreater(runnable.get("hog1", 0), 20 * MS, runnable)
        self.assertGreater(runnable.get("hog2", 0), 20 * MS, runnable)
        running = self.by_thread(d, "running")
        self.assertAlmostEqual(running.get("ui-main", 0), 40 * MS, delta=6 * MS)

    def test_unknown_node_is_an_error(self):
        p = subprocess.run([ARGUSQ, "-d", self.db, "--trace", "t", "critical path of node 999999"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no node 999999", p.stderr)
        self.assertIn("1:", p.stderr)  # the position of the node number


if __name__ == "__main__":
    unittest.main()
