"""Baselines from a set of traces: the normal counterpart of an
anomaly taken from every trace a `where` picks, not from one named trace.

    diagnose thread "NAME" | node N against traces where EXPR [in trace "T"]
    match node N in traces where EXPR

One archive holds the anomaly and the normal run of each of the ten
workloads of tests/traces (each with a thread "ui-main" whose short waits
look alike in every workload), labelled run=normal|anomaly and
workload=NAME, ingested anomalies first and the normal runs in reverse, so
that no answer can come from the order of the catalog.  Against all ten
normal runs, each anomaly must find the normal run of its own workload --
the same baseline as `against trace` naming it, and the root cause
first, now ranked against every normal step like the anomaly's."""
import unittest

from common import ArchiveCase, arch_of, trace

WORKLOADS = {  # workload: (anomaly file, normal file, root cause)
    "busyhold": ("busyhold-anomaly.trace", "busyhold-normal.trace", "holder"),
    "cpucontend": ("cpucontend-anomaly.txt", "cpucontend-normal.txt", "hog1"),
    "diskio": ("diskio-anomaly.trace", "diskio-normal.trace", "backend"),
    "eventloop": ("eventloop-anomaly.trace", "eventloop-normal.trace", "slowclient"),
    "flockchain": ("flockchain-anomaly.txt", "flockchain-normal.txt", "locker"),
    "lockchain": ("lockchain-anomaly.txt", "lockchain-normal.txt", "hog"),
    "mixchain": ("mixchain-anomaly.txt", "mixchain-normal.txt", "compactor"),
    "pipechain": ("pipechain-anomaly.txt", "pipechain-normal.txt", "backend"),
    "threadpool": ("threadpool-anomaly.trace", "threadpool-normal.trace", "producer"),
    "timerchain": ("timerchain-anomaly.txt", "timerchain-normal.txt", "ticker"),
}


def one_baseline(d):
    """a diagnosis without what rests on every normal step of a list
    (normal_steps, outside_paths, the suspects ranked by them,
    the steps themselves)"""
    return {k: v for k, v in d.items()
            if k not in ("normal_steps", "normal_traces", "outside_paths", "normal_sample", "suspects")}


class Baselines(ArchiveCase):
    def setUp(self):
        super().setUp()
        order = [(w, "anomaly", f[0]) for w, f in WORKLOADS.items()]
        order += [(w, "normal", f[1]) for w, f in reversed(list(WORKLOADS.items()))]
        for w, run, f in order:
            path = trace(f)
            self.ok("ingest", path, "--name", f"{w}-{run}", "--label", f"run={run}", "--label", f"workload={w}",
                    *arch_of(path))

    def diagnose(self, w, against):
        return self.json("--trace", f"{w}-anomaly", f'diagnose thread "ui-main" against {against}')

    def test_each_anomaly_finds_its_own_normal_run_among_all(self):
        for w, (_, _, root) in WORKLOADS.items():
            with self.subTest(workload=w):
                got = self.diagnose(w, 'traces where label.run = "normal"')
                want = self.diagnose(w, f'trace "{w}-normal"')
                self.assertIsNotNone(got["baseline"])
                self.assertEqual(got["baseline"]["trace"], f"{w}-normal")
                # the same best counterpart; the suspects ranked against
                # every normal step like it, the root first
                self.assertEqual(one_baseline(got), one_baseline(want))
                self.assertGreaterEqual(got["normal_steps"], 5)
                self.assertEqual(got["suspects"][0]["thread"], root, got["suspects"][:3])
                self.assertTrue(got["suspects"][0]["effect"]["outside"], got["suspects"][0])
                self.assertIsNone(want["suspects"][0]["effect"])

    def test_a_set_with_the_anomalys_own_trace(self):
        """Its own trace's steps count when they ended before the anomaly."""
        d = self.json('diagnose thread "ui-main" against traces where label.workload = "lockchain"'
                      ' in trace "lockchain-anomaly"')
        b = d["baseline"]
        self.assertIn(b["trace"], ("lockchain-anomaly", "lockchain-normal"))
        if b["trace"] == "lockchain-anomaly":
            self.assertLessEqual(b["end"], d["anomaly"]["begin"])
        self.assertEqual(d["suspects"][0]["thread"], "hog")
        # the anomaly runs alone: none of them is another workload's
        d = self.diagnose("cpucontend", 'traces where label.run = "anomaly" and label.workload = "cpucontend"')
        self.assertIn(d["baseline"]["trace"] if d["baseline"] else "cpucontend-anomaly", ("cpucontend-anomaly",))

    def test_diagnose_node_against_a_set(self):
        n = self.diagnose("timerchain", 'traces where label.run = "normal"')["anomaly"]["id"]
        got = self.json("--trace", "timerchain-anomaly",
                        f'diagnose node {n} against traces where label.run = "normal" and events < 100000')
        want = self.json("--trace", "timerchain-anomaly", f'diagnose node {n} against trace "timerchain-normal"')
        self.assertEqual(one_baseline(got), one_baseline(want))
        self.assertEqual(got["suspects"][0]["thread"], want["suspects"][0]["thread"])

    def test_match_in_traces_where(self):
        n = self.diagnose("lockchain", 'trace "lockchain-normal"')["anomaly"]["id"]
        got = self.json("--trace", "lockchain-anomaly", f'match node {n} in traces where label.run = "normal"')["nodes"]
        self.assertEqual(len(got), 20)
        normal = {f"{w}-normal" for w in WORKLOADS}
        # the 20 best of all the normal runs' counterparts, each as its own trace gives it
        every = []
        for t in normal:
            every += self.json("--trace", "lockchain-anomaly", f'match node {n} in trace "{t}"')["nodes"]
        key = lambda x: (x["trace"], x["id"])
        by_key = {key(x): x for x in every}
        for x in got:
            self.assertIn(x["trace"], normal)
            self.assertEqual(by_key[key(x)], x)
        self.assertEqual([x["score"] for x in got], sorted((x["score"] for x in every), reverse=True)[:20])
        # a set of one trace answers as `in trace`
        one = self.json("--trace", "lockchain-anomaly", f'match node {n} in traces where name = "pipechain-normal"')
        self.assertEqual(one, self.json("--trace", "lockchain-anomaly", f'match node {n} in trace "pipechain-normal"'))

    def test_errors(self):
        for stmt, want, col in (
                ('diagnose thread "ui-main" against traces where label.run = "nope"', "no trace satisfies", 35),
                ('match node 3 in traces where lable.run = "x"', 'unknown field "lable.run"', 30),
                ('diagnose thread "ui-main" against traces where', "unexpected end of input", 47)):
            p = self.run_argusq("--trace", "lockchain-anomaly", stmt)
            self.assertEqual(p.returncode, 1, stmt)
            self.assertIn(want, p.stderr)
            if col:
                self.assertIn(f"query:1:{col}:", p.stderr)


if __name__ == "__main__":
    unittest.main()
