"""Crash states of an ingest (tests/crash, the short run of `make
crashtest`): a power cut at any point of an ingest must leave an archive
whose older trace answers as before, whose new trace is absent or whole,
and which takes the next ingest.

The recorded ingest runs the optimized build/argusq under the write logger
(build/crash/wlog.so, made by `make test`): the writes it logs are
liblmdb's, the same under either build, and the sanitizer runtime refuses
to come after a preloaded library.  The sanitizer build ($ARGUSQ, as for
every e2e test) checks a sample of the crash states."""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import ARGUSQ, ROOT, trace

sys.path.insert(0, os.path.join(ROOT, "tests", "crash"))
import crashgen as cg  # noqa: E402  (the log reader)

CRASHGEN = os.path.join(ROOT, "tests", "crash", "crashgen.py")
WLOG = os.path.join(ROOT, "build", "crash", "wlog.so")
OPTIMIZED = os.path.join(ROOT, "build", "argusq")
SUMMARY = re.compile(r"^crashgen: (\d+) states checked .*: (\d+) corrupt", re.M)


def crashgen(*extra):
    """A few dozen states of a 1,105-event ingest made in batches of 200
    puts (17 commits): a few seconds."""
    cmd = [sys.executable, CRASHGEN, "--argusq", OPTIMIZED, "--wlog", WLOG,
           "--trace", trace("lockchain-anomaly.txt"), "--batch-ops", "200", "--states", "60", "--seed", "1"]
    if os.path.abspath(ARGUSQ) != os.path.abspath(OPTIMIZED):
        cmd += ["--san", ARGUSQ, "--san-every", "8"]
    env = {k: v for k, v in os.environ.items() if k != "ARGUSQ_BATCH_SYNC"}
    return subprocess.run(cmd + list(extra), capture_output=True, text=True, timeout=600, env=env)


class CrashStates(unittest.TestCase):
    def setUp(self):
        for f in (WLOG, OPTIMIZED):
            self.assertTrue(os.path.exists(f), f"{f} is missing: make test builds it")

    def test_no_crash_state_loses_or_damages_a_trace(self):
        p = crashgen()
        out = p.stdout + p.stderr
        self.assertIn("the log replays to the archive exactly", out)
        m = SUMMARY.search(p.stdout)
        self.assertTrue(m, out)
        self.assertGreaterEqual(int(m.group(1)), 30, out)
        self.assertEqual(int(m.group(2)), 0, out)
        self.assertEqual(p.returncode, 0, out)

    def test_no_crash_state_of_a_rule_and_rebuild_damages_the_trace(self):
        # a rule statement and `rebuild graph` rewrite a committed trace's
        # graph: every state answers as before or as after, never a mix
        # that fails, never a lost trace
        p = crashgen("--op", "rules")
        out = p.stdout + p.stderr
        self.assertIn("rebuild graph", out)
        self.assertIn("the log replays to the archive exactly", out)
        m = SUMMARY.search(p.stdout)
        self.assertTrue(m, out)
        self.assertGreaterEqual(int(m.group(1)), 20, out)
        self.assertEqual(int(m.group(2)), 0, out)
        self.assertEqual(p.returncode, 0, out)

    def test_the_harness_sees_the_damage_of_batches_without_sync(self):
        # the same log with each batch commit's fdatasync left out -- what
        # MDB_NOSYNC batches do: states in which a meta page reached the
        # disk before its pages, or a reused page of the durable snapshot
        # was overwritten, must be found
        p = crashgen("--drop-batch-syncs")
        out = p.stdout + p.stderr
        m = SUMMARY.search(p.stdout)
        self.assertTrue(m, out)
        self.assertGreater(int(m.group(2)), 0, out)
        self.assertEqual(p.returncode, 1, out)


class NewArchive(unittest.TestCase):
    """A new archive's name is in its directory, which fsync of the file
    does not write: the directory must be synced before the first trace
    is committed, or a crash right after a successful ingest can leave no
    archive at all.  The logger records the directory's syncs ('Y')."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="argusq-newarchive-")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def logged_ingest(self, db, name):
        logp = os.path.join(self.dir, name + ".wlog")
        env = dict(os.environ, LD_PRELOAD=WLOG, ARGUSQ_WLOG_FILE=db, ARGUSQ_WLOG_OUT=logp)
        p = subprocess.run([OPTIMIZED, "-d", db, "ingest", trace("lockchain-normal.txt"), "--name", name],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        return cg.Log(logp).recs

    def test_the_directory_is_synced_before_the_first_commit(self):
        db = os.path.join(self.dir, "argus.db")
        recs = self.logged_ingest(db, "first")
        ops = [r[0] for r in recs]
        self.assertIn("Y", ops)
        # the trace is committed by its final meta write, on LMDB's O_DSYNC fd
        final = max(i for i, r in enumerate(recs) if r[0] == "W" and r[1] & cg.WL_DSYNC)
        self.assertLess(ops.index("Y"), final)
        # an archive that exists already needs no directory sync
        recs = self.logged_ingest(db, "second")
        self.assertNotIn("Y", [r[0] for r in recs])


if __name__ == "__main__":
    unittest.main()
