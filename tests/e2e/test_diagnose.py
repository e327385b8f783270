"""`diagnose` and `match` end to end on real traces (tests/traces/README.md):
for each workload a thread "ui-main" waits, once, about 250-300 ms for a
result that arrives through a chain of threads and processes (futexes,
pipes, file locks, Unix sockets, timers); the root cause is a thread a few
hops away.  A correct analysis names that thread among the first suspects
of ui-main's longest wait, alone and against the workload's normal run, and
the graph itself (the backward slice) reaches it.

    diagnose node N [against trace "T"]
    diagnose thread "NAME" [against trace "T"]
      -> {"anomaly": NODE, "kind": "wait"|"busy"|"yield", "baseline": NODE|null,
          "suspects": [{"node","thread","proc","reason","evidence"}],
          "normal_path": [NODE...], "anomaly_path": [NODE...]}
    match node N [in trace "T"]  -> {"nodes": [NODE + "score" + "trace"]}, best first
"""
import subprocess
import unittest

from common import ARGUSQ, ArchiveCase, trace

NODE_KEYS = {"id", "tid", "pid", "proc", "thread", "begin", "end", "duration", "blocked", "events", "kind"}
SUSPECT_KEYS = {"node", "thread", "proc", "reason", "evidence"}
MS = 1_000_000
ANOMALY, NORMAL = "A", "NORMAL"


class DiagnoseCase:
    """One workload: ANOMALY_FILE and NORMAL_FILE in tests/traces/, ROOT the
    root-cause thread, CHAIN the threads the slice back from ui-main's
    longest wait must pass through (ROOT included)."""

    ANOMALY_FILE = NORMAL_FILE = ROOT = None
    STATE = "timer"
    CHAIN = ()
    MAIN = "ui-main"

    def setUp(self):
        super().setUp()
        # the normal run first, so the anomaly trace is the current one; statements name it anyway
        self.ingest(trace(self.NORMAL_FILE), name=NORMAL)
        self.ingest(trace(self.ANOMALY_FILE), name=ANOMALY)

    def q(self, stmt):
        return self.json("--trace", ANOMALY, stmt)

    def longest_wait(self):
        nodes = self.q(f'find nodes where thread = "{self.MAIN}" order by blocked desc limit 1')["nodes"]
        self.assertEqual(len(nodes), 1)
        n = nodes[0]
        self.assertEqual(n["thread"], self.MAIN)
        self.assertGreater(n["blocked"], 200 * MS, "the recording has no long wait of ui-main")
        return n

    def check_shape(self, d):
        self.assertTrue({"anomaly", "kind", "baseline", "suspects", "normal_path", "anomaly_path"} <= set(d),
                        f"keys: {sorted(d)}")
        self.assertTrue(NODE_KEYS <= set(d["anomaly"]), f"anomaly keys: {sorted(d['anomaly'])}")
        self.assertIn(d["kind"], ("wait", "busy", "yield"))
        if d["baseline"] is not None:
            self.assertTrue(NODE_KEYS <= set(d["baseline"]))
        self.assertIsInstance(d["suspects"], list)
        for s in d["suspects"]:
            self.assertTrue(SUSPECT_KEYS <= set(s), f"suspect keys: {sorted(s)}")
        for path in ("normal_path", "anomaly_path"):
            self.assertIsInstance(d[path], list)
            for x in d[path]:
                self.assertTrue(NODE_KEYS <= set(x), f"{path} node keys: {sorted(x)}")

    def check_anomaly(self, d, longest):
        self.check_shape(d)
        a = d["anomaly"]
        self.assertEqual(a["thread"], self.MAIN)
        self.assertGreater(a["blocked"], 200 * MS)
        self.assertEqual(a["id"], longest["id"], "not ui-main's longest wait")
        self.assertEqual(d["kind"], "wait")
        top = [s["thread"] for s in d["suspects"][:3]]
        self.assertIn(self.ROOT, top, f"root cause {self.ROOT!r} not among the first three suspects: "
                      f"{[(s['thread'], s['reason']) for s in d['suspects'][:5]]}")
        # ranked by the time it took of the wait: first, and for its timer
        first = d["suspects"][0]
        self.assertEqual((first["thread"], first["state"]), (self.ROOT, self.STATE),
                         [(s["thread"], s["state"], s["reason"]) for s in d["suspects"][:3]])
        self.assertGreater(first["ns"], 0.9 * d["period"]["ns"])
        self.check_breakdown(d)

    def check_breakdown(self, d):
        """The parts of the breakdown partition the period."""
        per = d["period"]
        at = per["begin"]
        for p in d["breakdown"]:
            self.assertEqual(p["begin"], at)
            at += p["ns"]
        self.assertEqual(at, per["end"])
        self.assertEqual(per["end"], d["anomaly"]["end"])

    def check_baseline_from_normal(self, d):
        b = d["baseline"]
        self.assertIsNotNone(b, "against trace: no baseline")
        self.assertEqual(b["thread"], self.MAIN)
        self.assertLess(b["blocked"], 100 * MS)
        # the baseline is a node of the normal trace: the same node there
        same = self.json(f'find nodes where id = {b["id"]} in trace "{NORMAL}"')["nodes"]
        self.assertEqual(len(same), 1)
        self.assertEqual((same[0]["tid"], same[0]["begin"], same[0]["thread"]), (b["tid"], b["begin"], b["thread"]))

    # ---- the tests ----

    def test_diagnose_thread_alone(self):
        longest = self.longest_wait()
        d = self.q(f'diagnose thread "{self.MAIN}"')
        self.check_anomaly(d, longest)
        if d["baseline"] is not None:      # a baseline from the same trace: a short wait of ui-main
            self.assertEqual(d["baseline"]["thread"], self.MAIN)
            self.assertLess(d["baseline"]["blocked"], 100 * MS)

    def test_diagnose_thread_against_normal(self):
        longest = self.longest_wait()
        d = self.q(f'diagnose thread "{self.MAIN}" against trace "{NORMAL}"')
        self.check_anomaly(d, longest)
        self.check_baseline_from_normal(d)

    def test_diagnose_node(self):
        longest = self.longest_wait()
        d = self.q(f'diagnose node {longest["id"]}')
        self.check_anomaly(d, longest)
        self.assertEqual(d["anomaly"], self.q(f'diagnose thread "{self.MAIN}"')["anomaly"])

    def test_diagnose_node_against_normal(self):
        longest = self.longest_wait()
        d = self.q(f'diagnose node {longest["id"]} against trace "{NORMAL}"')
        self.check_anomaly(d, longest)
        self.check_baseline_from_normal(d)

    def test_match_node_in_normal(self):
        longest = self.longest_wait()
        m = self.q(f'match node {longest["id"]} in trace "{NORMAL}"')["nodes"]
        self.assertTrue(m, "no match")
        for x in m:
            self.assertTrue(NODE_KEYS | {"score", "trace"} <= set(x), f"keys: {sorted(x)}")
            self.assertEqual(x["trace"], NORMAL)
        scores = [x["score"] for x in m]
        self.assertEqual(scores, sorted(scores, reverse=True), "not best first")
        self.assertIn(self.MAIN, [x["thread"] for x in m])

    def test_match_node_every_trace(self):
        longest = self.longest_wait()
        m = self.q(f'match node {longest["id"]}')["nodes"]
        self.assertTrue(m, "no match")
        self.assertTrue({x["trace"] for x in m} <= {ANOMALY, NORMAL})
        scores = [x["score"] for x in m]
        self.assertEqual(scores, sorted(scores, reverse=True), "not best first")
        self.assertIn(NORMAL, {x["trace"] for x in m if x["thread"] == self.MAIN})

    def test_slice_reaches_root_cause(self):
        longest = self.longest_wait()
        sl = self.q(f'slice back from node {longest["id"]} depth 10')
        self.assertEqual(sl["nodes"][0]["id"], longest["id"])
        threads = [x["thread"] for x in sl["nodes"]]
        for t in self.CHAIN:
            self.assertIn(t, threads, f"slice back from ui-main#{longest['id']} does not reach {t!r}: "
                          f"{[(x['id'], x['thread']) for x in sl['nodes']]}")


class Lockchain(DiagnoseCase, ArchiveCase):
    """shared/traces/workloads/lockchain.c: ui-main <-futex- worker <-futex (mutex)- hog <-timer- hog."""
    ANOMALY_FILE, NORMAL_FILE, ROOT = "lockchain-anomaly.txt", "lockchain-normal.txt", "hog"
    CHAIN = ("worker", "hog")


class Pipechain(DiagnoseCase, ArchiveCase):
    """tests/workloads/pipechain.c: ui-main <-pipe- relay <-pipe- backend <-timer (nanosleep 250 ms)- backend."""
    ANOMALY_FILE, NORMAL_FILE, ROOT = "pipechain-anomaly.txt", "pipechain-normal.txt", "backend"
    CHAIN = ("relay", "backend")


class Flockchain(DiagnoseCase, ArchiveCase):
    """tests/workloads/flockchain.c: ui-main <-futex- worker <-flock- locker (process) <-timer (300 ms)- locker."""
    ANOMALY_FILE, NORMAL_FILE, ROOT = "flockchain-anomaly.txt", "flockchain-normal.txt", "locker"
    CHAIN = ("worker", "locker")


class Timerchain(DiagnoseCase, ArchiveCase):
    """tests/workloads/timerchain.c: ui-main <-unix socket- gateway <-unix socket- ticker <-timerfd (250 ms)- ticker."""
    ANOMALY_FILE, NORMAL_FILE, ROOT = "timerchain-anomaly.txt", "timerchain-normal.txt", "ticker"
    CHAIN = ("gateway", "ticker")


class TimerchainRaw(Timerchain):
    """The same workload, a second run recorded as tracefs text (RAW=1)."""
    ANOMALY_FILE = "timerchain-anomaly-raw.trace"


class Mixchain(DiagnoseCase, ArchiveCase):
    """tests/workloads/mixchain.c: ui-main <-pipe- srv-io <-futex- srv-db <-fcntl lock- compactor <-timer (300 ms)- compactor."""
    ANOMALY_FILE, NORMAL_FILE, ROOT = "mixchain-anomaly.txt", "mixchain-normal.txt", "compactor"
    CHAIN = ("srv-io", "srv-db", "compactor")


class ShapeCase:
    """A shape of root cause other than a sleeper in a chain of wakeups:
    ANOMALY recorded with `argusq record` (.dat) and as tracefs text
    (.trace), NORMAL as tracefs text.  diagnose names ROOT first, in
    STATE, with a reason matching REASON, with and without the normal run,
    from either recording of the anomaly."""
    NAME = ROOT = STATE = REASON = None
    KIND = "wait"

    def run_diagnose(self, anomaly_file, against):
        self.ingest(trace(f"{self.NAME}-normal.trace"), name=NORMAL)
        self.ingest(trace(anomaly_file), name=ANOMALY)
        stmt = 'diagnose thread "ui-main"' + (f' against trace "{NORMAL}"' if against else "")
        d = self.json("--trace", ANOMALY, stmt)
        self.assertEqual(d["kind"], self.KIND)
        first = d["suspects"][0]
        self.assertEqual((first["thread"], first["state"]), (self.ROOT, self.STATE),
                         [(s["thread"], s["state"], s["reason"]) for s in d["suspects"][:3]])
        self.assertGreater(first["ns"], 0.8 * d["period"]["ns"])
        self.assertRegex(first["reason"], self.REASON)
        DiagnoseCase.check_breakdown(self, d)
        return d

    def test_dat_alone(self):
        self.run_diagnose(f"{self.NAME}-anomaly.dat", False)

    def test_dat_against_normal(self):
        self.run_diagnose(f"{self.NAME}-anomaly.dat", True)

    def test_text_alone(self):
        self.run_diagnose(f"{self.NAME}-anomaly.trace", False)

    def test_text_against_normal(self):
        self.run_diagnose(f"{self.NAME}-anomaly.trace", True)


class BusyHolder(ShapeCase, ArchiveCase):
    """tests/workloads/busyhold.c: ui-main <- helper <- mutex held by holder,
    which computes 300 ms under it (no system calls, nobody sleeps)."""
    NAME, ROOT, STATE = "busyhold", "holder", "running"
    REASON = r"ran \d+\.\dms \(node \d+\) while ui-main waited on it through helper"


class ThreadPool(ShapeCase, ArchiveCase):
    """tests/workloads/threadpool.c: ui-main's job waits behind producer's
    300 ms job in a one-worker pool (pool-1); the process's main thread
    waits in pthread_join throughout."""
    NAME, ROOT, STATE = "threadpool", "producer", "running"
    REASON = r"its request \(node \d+\) kept pool-1 running \d+\.\dms"


class EventLoop(ShapeCase, ArchiveCase):
    """tests/workloads/eventloop.c: one epoll server thread serves
    slowclient's 300 ms request just before ui-main's."""
    NAME, ROOT, STATE = "eventloop", "slowclient", "running"
    REASON = r"its request \(node \d+\) kept server running \d+\.\dms"


class DiskIO(ShapeCase, ArchiveCase):
    """tests/workloads/diskio.c: ui-main waits on a pipe for process
    backend, which reads 3000 (the .trace: 1000) random blocks with
    O_DIRECT; each read's completion is joined to backend's request."""
    NAME, ROOT, STATE, KIND = "diskio", "backend", "io", "io"
    REASON = r"waited \d+\.\dms for \d{3,} device requests it issued \(node \d+\)"


class CpuContention(ArchiveCase):
    """tests/workloads/cpucontend.c: no wakeup chain; ui-main's frame 3 is
    stretched by hog1 and hog2 spinning on its cpu.  diagnose finds the
    worst step by the time not running (waits and preemption alike), calls
    it cpu contention, and names the hogs first, with and without the
    normal run (whose ui-main frames run 40 ms with no contention)."""

    def setUp(self):
        super().setUp()
        self.ingest(trace("cpucontend-normal.txt"), name=NORMAL)
        self.ingest(trace("cpucontend-anomaly.txt"), name=ANOMALY)

    def check(self, d):
        self.assertEqual(d["kind"], "runnable")
        self.assertEqual(d["anomaly"]["thread"], "ui-main")
        self.assertGreater(d["anomaly"]["runnable"], 50 * MS)
        first = [(s["thread"], s["state"]) for s in d["suspects"][:2]]
        self.assertEqual(sorted(first), [("hog1", "runnable"), ("hog2", "runnable")],
                         [(s["thread"], s["state"], s["reason"]) for s in d["suspects"][:4]])
        for s in d["suspects"][:2]:
            self.assertIn("ui-main's cpu", s["reason"])
            self.assertGreater(s["ns"], 20 * MS)
        DiagnoseCase.check_breakdown(self, d)

    def test_alone(self):
        self.check(self.json("--trace", ANOMALY, 'diagnose thread "ui-main"'))

    def test_against_normal(self):
        d = self.json("--trace", ANOMALY, f'diagnose thread "ui-main" against trace "{NORMAL}"')
        self.check(d)
        self.assertEqual(d["baseline"]["thread"], "ui-main")
        self.assertLess(d["baseline"]["runnable"], 10 * MS)

    def test_argusq_record_against_normal(self):
        """A second run of the anomaly, recorded with `argusq record`."""
        self.ingest(trace("cpucontend-anomaly.dat"), name="dat")
        self.check(self.json("--trace", "dat", f'diagnose thread "ui-main" against trace "{NORMAL}"'))

    def test_text(self):
        out = self.json_text = subprocess.run([ARGUSQ, "-d", self.db, "--trace", ANOMALY, 'diagnose thread "ui-main"'],
                                              capture_output=True, text=True).stdout
        self.assertIn("cpu contention", out)
        self.assertRegex(out, r"1\. hog[12] .*ran \d+\.\dms on ui-main's cpu while ui-main was runnable")


if __name__ == "__main__":
    unittest.main()
