"""Counterparts from another archive file: `in archive "PATH"`.

    match node N [in trace "T" | in traces [where EXPR]] in archive "PATH"
    diagnose node N | thread "NAME" [against trace "T" | against traces [where EXPR]]
             in archive "PATH" [in trace "A"]

The anomalies of the ten workloads of tests/traces live in one archive
(anomalies.db), each workload's normal run in an archive of its own
(WORKLOAD.db), and all ten normal runs once more in normals.db; one archive
(all.db) holds every trace, as test_baselines.py has them.  What
the other archive answers must be what the one archive holding both
answers, each baseline and row naming the archive it came from."""
import json
import os
import unittest

from common import ArchiveCase, arch_of, trace
from test_baselines import WORKLOADS, one_baseline


def without_archive(doc):
    """A diagnosis with its baseline's "archive" key taken out."""
    doc = json.loads(json.dumps(doc))
    if doc.get("baseline"):
        doc["baseline"].pop("archive", None)
    return doc


class OtherArchive(ArchiveCase):
    @classmethod
    def setUpClass(cls):
        cls.shared = ArchiveCase("run")
        cls.shared.setUp()
        d = cls.shared.dir
        cls.d = d
        cls.anomalies = os.path.join(d, "anomalies.db")
        cls.normals = os.path.join(d, "normals.db")
        cls.all = os.path.join(d, "all.db")
        for w, (a, n, _) in WORKLOADS.items():
            for db, f, run in ((cls.anomalies, a, "anomaly"), (os.path.join(d, w + ".db"), n, "normal"),
                               (cls.normals, n, "normal"), (cls.all, a, "anomaly"), (cls.all, n, "normal")):
                cls.shared.ok("-d", db, "ingest", trace(f), "--name", f"{w}-{run}", "--label", f"run={run}",
                              "--label", f"workload={w}", *arch_of(trace(f)), db=False)

    @classmethod
    def tearDownClass(cls):
        cls.shared.tearDown()

    def setUp(self):
        # every test runs in the shared directory (relative paths name its files)
        self.dir = self.d
        self.db = self.all

    def tearDown(self):
        pass

    def q(self, db, *args):
        return self.json("-d", db, *args, db=False)

    def test_diagnose_against_a_trace_of_another_archive(self):
        for w, (_, _, root) in WORKLOADS.items():
            with self.subTest(workload=w):
                other = os.path.join(self.d, w + ".db")
                got = self.q(self.anomalies, f'diagnose thread "ui-main" against trace "{w}-normal" '
                                             f'in archive "{other}" in trace "{w}-anomaly"')
                want = self.q(self.all, "--trace", f"{w}-anomaly", f'diagnose thread "ui-main" against trace "{w}-normal"')
                self.assertIsNotNone(got["baseline"])
                self.assertEqual(got["baseline"]["archive"], other)
                self.assertEqual(got["baseline"]["trace"], f"{w}-normal")
                self.assertNotIn("archive", want["baseline"])
                self.assertEqual(without_archive(got), want)
                self.assertIn(root, [s["thread"] for s in got["suspects"][:2]])

    def test_diagnose_against_every_trace_of_another_archive(self):
        """`against traces` (and no against at all) in another archive: its
        every trace, ranked as one archive ranks a list -- the normal run
        of the anomaly's own workload."""
        for w in WORKLOADS:
            with self.subTest(workload=w):
                want = self.q(self.all, "--trace", f"{w}-anomaly",
                              'diagnose thread "ui-main" against traces where label.run = "normal"')
                for clause in ("against traces ", "", f'against traces where label.workload = "{w}" '):
                    got = self.q(self.anomalies, "--trace", f"{w}-anomaly",
                                 f'diagnose thread "ui-main" {clause}in archive "{self.normals}"')
                    self.assertEqual(got["baseline"]["trace"], f"{w}-normal")
                    self.assertEqual(got["baseline"]["archive"], self.normals)
                    # the one best counterpart as before; the statistics
                    # over every normal step depend on the list
                    self.assertEqual(one_baseline(without_archive(got)), one_baseline(want))
                    self.assertEqual(got["suspects"][0]["thread"], want["suspects"][0]["thread"])
                # the rank the fleet orders baselines of several archives by
                rank = got["baseline"]["rank"]
                self.assertAlmostEqual(rank["score"], got["baseline"]["score"], places=3)
                self.assertIsInstance(rank["similar"], bool)
                self.assertTrue(0 < rank["likeness"]["path"] <= 1 and 0 < rank["likeness"]["whole"] <= 1, rank)

    def test_the_session_archive_named_again_is_the_session_archive(self):
        got = self.q(self.all, "--trace", "lockchain-anomaly",
                     f'diagnose thread "ui-main" against trace "lockchain-normal" in archive "{self.all}"')
        want = self.q(self.all, "--trace", "lockchain-anomaly", 'diagnose thread "ui-main" against trace "lockchain-normal"')
        self.assertEqual(got, want)
        self.assertNotIn("archive", got["baseline"])

    def test_match_in_another_archive(self):
        n = self.q(self.all, "--trace", "lockchain-anomaly", 'diagnose thread "ui-main"')["anomaly"]["id"]
        for clause, within in (('in trace "lockchain-normal"', 'in trace "lockchain-normal"'),
                               ("", 'in traces where label.run = "normal"'),
                               ('in traces where label.workload = "pipechain"', 'in trace "pipechain-normal"')):
            with self.subTest(clause=clause):
                got = self.q(self.anomalies, "--trace", "lockchain-anomaly",
                             f'match node {n} {clause} in archive "{self.normals}"')["nodes"]
                want = self.q(self.all, "--trace", "lockchain-anomaly", f"match node {n} {within}")["nodes"]
                self.assertTrue(got)
                self.assertTrue(all(r["archive"] == self.normals for r in got))
                for r in got:
                    del r["archive"]
                self.assertEqual(got, want)
                # the score to the last bit, for merging archives' answers
                for r in want:
                    self.assertAlmostEqual(r["score_exact"], r["score"], places=3)
                    self.assertIsInstance(r["contained"], bool)
        table = self.ok("-d", self.anomalies, "--trace", "lockchain-anomaly",
                        f'match node {n} in archive "{self.normals}"', db=False).stdout.splitlines()
        self.assertEqual(table[0].split()[-1], "archive")
        self.assertEqual(table[1].split()[-1], self.normals)

    def test_relative_path_and_read_only_file(self):
        """A relative path is the process's; the other archive is only
        read, so a file this user may not write serves."""
        os.chmod(os.path.join(self.d, "lockchain.db"), 0o444)
        try:
            p = self.run_argusq("-d", "anomalies.db", "--json", "--trace", "lockchain-anomaly",
                                'diagnose thread "ui-main" against trace "lockchain-normal" in archive "lockchain.db"',
                                db=False)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(json.loads(p.stdout)["baseline"]["archive"], "lockchain.db")
        finally:
            os.chmod(os.path.join(self.d, "lockchain.db"), 0o644)

    def test_drawn_with_both_runs(self):
        """The normal run's trace id in its own archive is the anomaly's in
        its own (both 1): they are still two runs in the drawing."""
        out = self.ok("-d", self.anomalies, "--format", "dot", "--trace", "lockchain-anomaly",
                      'diagnose thread "ui-main" against trace "lockchain-normal" in archive "lockchain.db"',
                      db=False).stdout
        self.assertIn('label="anomaly: ui-main', out)
        self.assertIn('label="normal: ui-main', out)
        text = self.ok("-d", self.anomalies, "--trace", "lockchain-anomaly",
                       'diagnose thread "ui-main" against trace "lockchain-normal" in archive "lockchain.db"',
                       db=False).stdout
        self.assertIn('of trace "lockchain-normal" in archive "lockchain.db"', text)
        self.assertIn("1. hog", text)

    def test_errors_name_the_clause(self):
        cases = [
            ('match node 3 in archive "nope.db"', 'nope.db: no such archive', '"nope.db"'),
            ('match node 3 in trace "x" in archive "lockchain.db"', 'no trace named "x" in archive "lockchain.db"',
             '"x"'),
            ('diagnose thread "ui-main" against traces where label.run = "slow" in archive "lockchain.db"',
             'no trace of archive "lockchain.db" satisfies the where clause', "traces"),
            ('diagnose thread "ui-main" against trace "x" in archive "lockchain.db" in archive "y"',
             "`in archive` given twice", '"y"'),
        ]
        for stmt, msg, at in cases:
            with self.subTest(stmt=stmt):
                p = self.run_argusq("-d", "anomalies.db", "--trace", "lockchain-anomaly", stmt, db=False)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(msg, p.stderr)
                col = stmt.rindex(at) if at != "traces" else stmt.index(at)
                self.assertIn(f"query:1:{col + 1}:", p.stderr)
        bad = os.path.join(self.d, "bad.db")
        with open(bad, "w") as f:
            f.write("not an archive\n" * 100)
        p = self.run_argusq("-d", "anomalies.db", "--trace", "lockchain-anomaly", 'match node 3 in archive "bad.db"',
                            db=False)
        self.assertEqual(p.returncode, 1)
        self.assertNotIn("runtime error", p.stderr)


if __name__ == "__main__":
    unittest.main()
