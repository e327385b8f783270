"""diagnose against many normal steps (query/normals.c,
query/stats.c; docs/QUERY.md `diagnose`, "Against many normal runs") on
small hand-written ftrace texts, one frame each, whose parts are known
from their lines:

  ui asks pipeline and waits; pipeline sleeps S on a timer it armed (S
  varies from run to run: 10 to 40 ms), then asks fetch and waits; fetch
  computes 0.3 ms and answers.  In the slow run pipeline sleeps 35 ms --
  inside what normal runs do -- and fetch first waits 8 ms on indexer,
  which runs holding what fetch needs: the injected cause, smaller than
  the sleep.

One normal run, picked as the best counterpart, may have slept 10 ms: the
sleep then looks 25 ms longer than normal and comes first.  Against the
distribution of six normal runs it is within their range (robust z < 1),
and indexer, on no normal run's critical path, comes first."""
import os

import test_partition as partition
from common import ArchiveCase
from test_partition import line, switch

US = 1000


def wake(comm, tid, cpu, us, target, ttid, tcpu, flags="d..2."):
    return partition.wake("sched_wakeup", comm, tid, cpu, us, target, ttid, tcpu, flags)


def sys(comm, tid, cpu, us, enter, nr=202):
    return partition.sys(comm, tid, cpu, us, enter, nr)


def frame(sleep_us, hold_us=0):
    """the frame's lines (ui 10 and fetch 30 on cpu 0; pipeline 20 and
    indexer 40 on cpu 1)"""
    timer = "hrtimer=00000000c0ffee00"
    t1 = 120 + sleep_us
    lines = [
        sys("ui", 10, 0, 90, True),
        wake("ui", 10, 0, 100, "pipeline", 20, 1),
        switch("ui", 10, "S", "swapper/0", 0, 0, 105),
        switch("swapper/1", 0, "R", "pipeline", 20, 1, 110),
        sys("pipeline", 20, 1, 115, False),
        line("pipeline", 20, 1, ".....", 120, "hrtimer_start",
             f"{timer} function=hrtimer_wakeup expires={(100_000_000 + t1) * US} "
             f"softexpires={(100_000_000 + t1) * US} mode=REL"),
        sys("pipeline", 20, 1, 125, True, 230),
        switch("pipeline", 20, "S", "swapper/1", 0, 1, 130),
        line("<idle>", 0, 1, "d.h2.", t1, "hrtimer_expire_entry",
             f"{timer} now={(100_000_000 + t1) * US} function=hrtimer_wakeup/0x0"),
        wake("<idle>", 0, 1, t1 + 1, "pipeline", 20, 1, flags="d.h3."),
        line("<idle>", 0, 1, "d.h2.", t1 + 2, "hrtimer_expire_exit", timer),
        switch("swapper/1", 0, "R", "pipeline", 20, 1, t1 + 20),
        sys("pipeline", 20, 1, t1 + 25, False, 230),
        wake("pipeline", 20, 1, t1 + 30, "fetch", 30, 0),
        sys("pipeline", 20, 1, t1 + 35, True),
        switch("pipeline", 20, "S", "swapper/1", 0, 1, t1 + 40),
        switch("swapper/0", 0, "R", "fetch", 30, 0, t1 + 50),
        sys("fetch", 30, 0, t1 + 55, False),
    ]
    t = t1 + 60
    if hold_us:
        lines += [
            switch("swapper/1", 0, "R", "indexer", 40, 1, t1 + 45),
            sys("indexer", 40, 1, t1 + 46, False),
            sys("fetch", 30, 0, t, True),
            switch("fetch", 30, "S", "swapper/0", 0, 0, t + 5),
            wake("indexer", 40, 1, t1 + 45 + hold_us, "fetch", 30, 0),
            sys("indexer", 40, 1, t1 + 50 + hold_us, True),
            switch("indexer", 40, "S", "swapper/1", 0, 1, t1 + 55 + hold_us),
            switch("swapper/0", 0, "R", "fetch", 30, 0, t1 + 65 + hold_us),
            sys("fetch", 30, 0, t1 + 70 + hold_us, False),
        ]
        t = t1 + 80 + hold_us
    f = t + 300  # fetch computes
    lines += [
        wake("fetch", 30, 0, f, "pipeline", 20, 1),
        sys("fetch", 30, 0, f + 5, True),
        switch("fetch", 30, "S", "swapper/0", 0, 0, f + 10),
        switch("swapper/1", 0, "R", "pipeline", 20, 1, f + 20),
        sys("pipeline", 20, 1, f + 25, False),
        wake("pipeline", 20, 1, f + 30, "ui", 10, 0),
        sys("pipeline", 20, 1, f + 35, True),
        switch("pipeline", 20, "S", "swapper/1", 0, 1, f + 40),
        switch("swapper/0", 0, "R", "ui", 10, 0, f + 50),
        sys("ui", 10, 0, f + 55, False),
        sys("ui", 10, 0, f + 60, True, 1),
        sys("ui", 10, 0, f + 65, False, 1),
    ]
    return lines


NORMAL_SLEEPS = [10_000, 25_000, 40_000, 15_000, 35_000, 20_000]


class Normals(ArchiveCase):
    def load(self, name, lines, label):
        path = os.path.join(self.dir, name + ".txt")
        with open(path, "w") as f:
            f.write("# tracer: nop\n#\n" + "\n".join(sorted(lines, key=lambda l: float(l.split()[3][:-1]))) + "\n")
        self.ok("ingest", path, "--name", name, "--label", "run=" + label)

    def runs(self, normals):
        for i, s in enumerate(normals):
            self.load(f"n{i}", frame(s), "normal")
        self.load("slow", frame(35_000, hold_us=8_000), "slow")

    def diagnose(self, where='label.run = "normal"'):
        return self.json("--trace", "slow", f'diagnose thread "ui" against traces where {where}')

    def test_the_injected_cause_first_though_the_sleep_is_larger(self):
        self.runs(NORMAL_SLEEPS)
        d = self.diagnose()
        self.assertEqual((d["normal_steps"], d["normal_traces"]), (6, 6))
        first = d["suspects"][0]
        self.assertEqual((first["thread"], first["state"]), ("indexer", "running"), d["suspects"][:3])
        self.assertEqual(first["normal"], {"steps": 6, "median": 0, "p5": 0, "p95": 0, "mad": 0})
        self.assertTrue(first["effect"]["outside"])
        self.assertGreater(first["effect"]["excess"], 7_900 * US)
        sleep = [s for s in d["suspects"] if s["thread"] == "pipeline" and s["state"] == "timer"]
        self.assertTrue(sleep, d["suspects"])
        # pipeline's 35 ms: inside the normal 10-40 ms (its timer part runs
        # from its switch-out at 130 to the wakeup at S + 121: S - 9 us)
        self.assertEqual(sleep[0]["normal"]["median"], (22_500 - 9) * US)
        self.assertEqual((sleep[0]["normal"]["p5"], sleep[0]["normal"]["p95"]), (11_241 * US, 38_741 * US))
        self.assertFalse(sleep[0]["effect"]["outside"])
        self.assertLess(sleep[0]["effect"]["z"], 1.0)
        self.assertGreater(d["suspects"].index(sleep[0]), 0)
        self.assertEqual(d["outside_paths"]["new_threads"], ["indexer"])
        self.assertEqual(d["outside_paths"]["missing_threads"], [])
        self.assertFalse(d["outside_paths"]["timeout"])
        text = self.ok("--trace", "slow", 'diagnose thread "ui" against traces where label.run = "normal"').stdout
        self.assertIn("Against 6 normal steps like it (in 6 traces): on no normal critical path: indexer.", text)
        self.assertIn("outside the 6 normal steps: median 0ns", text)

    def test_one_lucky_baseline_alone_would_blame_the_sleep(self):
        """the counterfactual: against the one run that slept 10 ms, the
        sleep's 25 ms more than that run comes first"""
        self.runs([10_000])
        d = self.json("--trace", "slow", 'diagnose thread "ui" against trace "n0"')
        self.assertEqual((d["suspects"][0]["thread"], d["suspects"][0]["state"]), ("pipeline", "timer"))
        self.assertEqual(d["normal_steps"], 0)
        self.assertIsNone(d["suspects"][0]["normal"])

    def test_too_few_normal_steps_fall_back_to_the_best_one(self):
        self.runs(NORMAL_SLEEPS[:3])
        d = self.diagnose()
        self.assertEqual(d["normal_steps"], 3)
        self.assertIsNone(d["outside_paths"])
        self.assertTrue(all(s["normal"] is None and s["effect"] is None for s in d["suspects"]))
        self.assertIsNotNone(d["baseline"])
        text = self.ok("--trace", "slow", 'diagnose thread "ui" against traces where label.run = "normal"').stdout
        self.assertIn("Only 3 normal steps like it in those traces: too few to judge what normal runs do (5 at least); "
                      "compared with the best one alone.", text)


    def fix_runs(self, hold_us):
        for i, sl in enumerate(NORMAL_SLEEPS[:5]):
            self.load(f"b{i}", frame(sl, hold_us=hold_us), "broken")
        for i, sl in enumerate(NORMAL_SLEEPS):
            self.load(f"f{i}", frame(sl), "fixed")
        stmt = ('check fix of thread "ui" in traces where label.run = "broken" '
                'after traces where label.run = "fixed"')
        return self.json(stmt), self.ok(stmt).stdout

    def test_check_fix_over_groups_of_runs(self):
        """broken runs wait 30 ms more than the fixed ones (40-70 ms against
        10-40): the typical fixed run is below every broken one"""
        d, text = self.fix_runs(30_000)
        self.assertTrue(d["shrank"])
        self.assertEqual((d["before_runs"]["runs"], d["after_runs"]["runs"], d["too_few"]), (5, 6, False))
        self.assertLess(d["after_runs"]["median"], d["before_runs"]["p5"])
        self.assertLess(d["effect"]["z"], -1.0)
        self.assertEqual(d["by"], d["before_runs"]["median"] - d["after_runs"]["median"])
        for k in ("thread", "before", "after", "shrank", "by", "ratio"):  # the one-run form's keys, kept
            self.assertIn(k, d)
        self.assertIn("the wait shrank by", text)

    def test_check_fix_within_what_broken_runs_do(self):
        """8 ms less, against a sleep that varies by 30 ms: not shown fixed"""
        d, text = self.fix_runs(8_000)
        self.assertFalse(d["shrank"])
        self.assertGreater(d["by"], 0)
        self.assertIn("the fix is within what broken runs do", text)

if __name__ == "__main__":
    import unittest
    unittest.main()
