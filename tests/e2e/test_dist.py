"""diagnose against many normal runs on real recordings:
tests/traces/dist/ holds two workloads whose normal runs vary a lot,
each recorded 12 times normal and 4 times slow (tests/traces/dist/README.md
gives the truth, read from the trace text).  In every slow run the
injected cause is smaller than a part every normal run has:

  jitterpipe: indexer computes 8 ms holding the lock fetch needs, while
              pipeline's own sleep (10-40 ms in every run) is larger;
  jitterpool: compactor computes 6 ms holding the lock the job needs,
              while the job's sleep (5-25 ms in every run) is larger.

Against the twelve normal runs the injected thread comes first, outside
the normal distribution, and the larger sleep within it; against one
normal run alone, the sleep comes first -- the wrong answer that
diagnosing against many normal runs corrects.  The step diagnosed is
frame 3's: ui-main's node that begins when its frame-3 wait ended (the
README's "ui-main's wait" column)."""
import os

from common import ArchiveCase, ROOT

DIST = os.path.join(ROOT, "tests", "traces", "dist")

# anomaly file: (culprit, the sleep every run has, frame 3's wait end, ns)
SLOW = {
    "jitterpipe-anomaly-1": ("indexer", "pipeline", 2123763410000),
    "jitterpipe-anomaly-2": ("indexer", "pipeline", 2125307627000),
    "jitterpipe-anomaly-3": ("indexer", "pipeline", 2126815576000),
    "jitterpipe-anomaly-4": ("indexer", "pipeline", 2304439777000),
    "jitterpool-anomaly-1": ("compactor", "poolw", 2014565521000),
    "jitterpool-anomaly-2": ("compactor", "poolw", 2032206593000),
    "jitterpool-anomaly-3": ("compactor", "poolw", 2128358287000),
    "jitterpool-anomaly-4": ("compactor", "poolw", 2055304669000),
}


class Dist(ArchiveCase):
    def setUp(self):
        super().setUp()
        for w in ("jitterpipe", "jitterpool"):
            for i in range(1, 13):
                self.ok("ingest", os.path.join(DIST, "%s-normal-%02d.trace" % (w, i)), "--name", "%s-n%02d" % (w, i),
                        "--label", "run=normal", "--label", "w=" + w, "--arch", "x86_64")
        for name in SLOW:
            self.ok("ingest", os.path.join(DIST, name + ".trace"), "--name", name, "--label", "run=slow",
                    "--arch", "x86_64")

    def frame3(self, name, woke):
        nodes = self.json("--trace", name, 'find nodes where thread = "ui-main" and begin >= %d order by begin limit 1'
                          % (woke - 1000))["nodes"]
        self.assertTrue(nodes and nodes[0]["begin"] - woke < 1_000_000, nodes)
        return nodes[0]["id"]

    def test_the_injected_cause_first_against_the_normal_runs(self):
        for name, (culprit, sleeper, woke) in SLOW.items():
            with self.subTest(trace=name):
                w = name.split("-")[0]
                n = self.frame3(name, woke)
                d = self.json("--trace", name,
                              f'diagnose node {n} against traces where label.run = "normal" and label.w = "{w}"')
                self.assertGreaterEqual(d["normal_steps"], 5)
                first = d["suspects"][0]
                self.assertEqual((first["thread"], first["state"]), (culprit, "running"), d["suspects"][:3])
                self.assertTrue(first["effect"]["outside"], first)
                sleep = [s for s in d["suspects"] if s["thread"] == sleeper and s["state"] == "timer"]
                self.assertTrue(sleep, d["suspects"])
                # larger than the injected part, and less far outside what normal runs do
                self.assertGreater(sleep[0]["ns"], first["ns"] * 0.8)
                self.assertLess(sleep[0]["effect"]["z"], first["effect"]["z"] / 2, sleep[0])

    def test_one_normal_run_alone_names_the_sleep(self):
        """the counterfactual the statistics correct: against one normal
        run, the sleep (longer than that run's) comes first"""
        wrong = 0
        for name, (culprit, sleeper, woke) in SLOW.items():
            w = name.split("-")[0]
            n = self.frame3(name, woke)
            d = self.json("--trace", name, f'diagnose node {n} against trace "{w}-n01"')
            wrong += d["suspects"][0]["thread"] == sleeper
        self.assertGreaterEqual(wrong, 6)


    def test_compare_two_groups_of_runs(self):
        """compare thread: the slow runs' worst steps against the normal
        runs', per (thread, state): indexer's running is outside the
        normal runs' range (0 in all of them), pipeline's sleep within"""
        stmt = ('compare thread "ui-main" in traces where label.run = "slow" and name < "jitterpool" '
                'against traces where label.run = "normal" and label.w = "jitterpipe"')
        d = self.json(stmt)
        self.assertEqual((d["runs"], d["too_few"]), ([4, 12], False))
        first = d["rows"][0]
        self.assertEqual((first["thread"], first["state"]), ("indexer", "running"), d["rows"][:3])
        self.assertTrue(first["effect"]["outside"])
        self.assertEqual((first["b"]["runs"], first["b"]["median"]), (12, 0))
        sleep = [r for r in d["rows"] if (r["thread"], r["state"]) == ("pipeline", "timer")][0]
        self.assertFalse(sleep["effect"]["outside"], sleep)
        self.assertGreater(sleep["a"]["median"], first["a"]["median"])
        self.assertEqual(set(first), {"thread", "state", "a", "b", "effect"})
        text = self.ok(stmt).stdout
        self.assertIn("ui-main's worst step: 4 runs, median", text)
        self.assertRegex(text.splitlines()[2], r"^indexer +running .* yes$")
        csv = self.ok("--format", "csv", stmt).stdout.splitlines()
        self.assertEqual(csv[0], "thread,state,median,5-95%,against median,5-95%,z,outside")
        self.assertTrue(csv[1].startswith("indexer,running,"), csv[1])
        svg = self.ok("--format", "svg", stmt).stdout
        self.assertTrue(svg.startswith("<svg") and svg.rstrip().endswith("</svg>"), svg[:80])
        self.assertIn(">indexer running *</text>", svg)
        self.assertEqual(svg.count("<rect"), 2 * len(d["rows"]))

    def test_compare_groups_says_when_too_few(self):
        d = self.json('compare thread "ui-main" in traces where label.run = "slow" '
                      'against traces where name in ("jitterpipe-n01", "jitterpipe-n02")')
        self.assertEqual((d["runs"], d["too_few"]), ([8, 2], True))
        text = self.ok('compare thread "ui-main" in traces where label.run = "slow" '
                       'against traces where name in ("jitterpipe-n01", "jitterpipe-n02")').stdout
        self.assertIn("Only 2 runs in the second group: too few to judge what they do (5 at least).", text)

    def test_compare_groups_errors(self):
        p = self.run_argusq('compare thread "nosuch" in traces where label.run = "slow" against traces')
        self.assertEqual(p.returncode, 1)
        self.assertIn('no trace of that group has a thread "nosuch"', p.stderr)
        self.assertIn("query:1:", p.stderr)
        p = self.run_argusq('compare thread "ui-main" in traces where label.run = "none" against traces')
        self.assertEqual(p.returncode, 1)
        self.assertIn("query:1:", p.stderr)
        p = self.run_argusq("--format", "dot", 'compare thread "ui-main" in traces against traces')
        self.assertEqual(p.returncode, 1)
        self.assertIn("compare thread draws as svg, not dot", p.stderr)

if __name__ == "__main__":
    import unittest
    unittest.main()
