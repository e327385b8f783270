"""Archives of earlier formats (db/migrate.c): each fixture in
tests/fixtures/formats was written by the argusq of the commit that last
wrote its format (make-fixtures.sh there), with what that argusq answered.
The current argusq migrates each in place on first open and answers the
same: the same traces, every event with every attribute it had."""
import gzip
import json
import os
import shutil
import signal
import subprocess
import time

from common import ARGUSQ, ROOT, ArchiveCase

FIXTURES = os.path.join(ROOT, "tests", "fixtures", "formats")
FORMATS = [2, 3, 4, 5, 6, 7]
CURRENT = 8


class Formats(ArchiveCase):
    def fixture(self, fmt, path=None):
        path = path or self.db
        with gzip.open(os.path.join(FIXTURES, f"format-{fmt}.db.gz")) as src, open(path, "wb") as dst:
            shutil.copyfileobj(src, dst)
        with gzip.open(os.path.join(FIXTURES, f"format-{fmt}.answers.json.gz")) as f:
            return json.load(f)

    def check_answers(self, old, fmt):
        traces = self.json("traces")["traces"]
        keys = ("name", "events", "threads", "processes", "format", "source", "first_ts", "last_ts")
        self.assertEqual([{k: t.get(k) for k in keys} for t in traces],
                         [{k: t.get(k) for k in keys} for t in old["traces"]["traces"]])
        for name, events in old["events"].items():
            now = self.json(f'find events in trace "{name}"')["events"]
            self.assertEqual(len(now), len(events), name)
            for a, b in zip(events, now):
                # every key the old argusq gave, but the node (the graph is
                # built again by today's rules) and an empty name (format 5
                # stopped printing one)
                want = {k: v for k, v in a.items() if k != "node" and not (k == "name" and v == "")}
                got = {k: b.get(k) for k in want}
                self.assertEqual(got, want, f"format {fmt}, trace {name}, event {a['id']}")
            # and the graph is there: nodes with their events
            nodes = self.json(f'find nodes in trace "{name}"')["nodes"]
            self.assertTrue(nodes)
            self.assertEqual(sum(n["events"] for n in nodes), len(events))

    def test_each_format_migrates_and_answers_as_before(self):
        for fmt in FORMATS:
            with self.subTest(format=fmt):
                for f in os.listdir(self.dir):
                    os.unlink(os.path.join(self.dir, f))
                old = self.fixture(fmt)
                self.assertEqual(old["format"], fmt)
                p = self.ok("info")
                # each is copied and its graphs rebuilt (6 to 7 was in place)
                self.assertIn(f"archive format {fmt} to {CURRENT}", p.stderr)
                self.assertNotIn("in place", p.stderr)
                self.assertNotIn("migrat", self.ok("info").stderr)  # once
                self.assertEqual(self.json("info")["format"], CURRENT)
                self.check_answers(old, fmt)
                # nothing left beside it but the archive and its lock file
                self.assertEqual(sorted(os.listdir(self.dir)), ["argus.db", "argus.db-lock"])
                # an archive to write to: a rebuild and an ingest work
                self.ok('rebuild graph in trace "lock"')
                self.check_answers(old, fmt)

    def test_a_stored_rule_is_kept_and_applied(self):
        """Each fixture's trace "lock" has a user rule (ignore the wakeups of
        tid 4124), stored by the old argusq: the migration keeps it and its
        rebuild applies it (the graph is today's rules' over the old events,
        so its edges are compared with the same graph without the rule)."""
        for fmt in FORMATS:
            with self.subTest(format=fmt):
                for f in os.listdir(self.dir):
                    os.unlink(os.path.join(self.dir, f))
                old = self.fixture(fmt)
                self.assertEqual(len(old["rules"]["rules"]), 1)
                self.assertEqual([r["text"] for r in self.json('--trace', 'lock', 'rules')["rules"]],
                                 [r["text"] for r in old["rules"]["rules"]])
                with_rule = self.json('find edges in trace "lock"')["edges"]
                self.ok("--trace", "lock", "drop rule 1")
                self.ok("--trace", "lock", "rebuild graph")
                without = self.json('find edges in trace "lock"')["edges"]
                # the rule took out wakeups (and the weak edges beside them)
                gone = [e for e in without if e not in with_rule]
                self.assertIn("wakeup", [e["kind"] for e in gone])
                self.assertTrue(all(e["kind"] in ("wakeup", "weak") for e in gone), gone[:3])

    def test_killed_migrations_leave_an_archive_that_opens(self):
        """kill -9 at many points of a migration: the archive opens after
        each (the old file, or the new one), and migrates or has migrated;
        the answers are the same in the end."""
        old = self.fixture(3)
        env = dict(os.environ, ARGUSQ_BATCH_OPS="50")
        env.pop("ARGUSQ_DB", None)
        for delay in (0.005, 0.02, 0.05, 0.1, 0.2):
            p = subprocess.Popen([ARGUSQ, "-d", self.db, "info"], env=env, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            p.wait()
            self.assertTrue(os.path.exists(self.db))
            if p.returncode == 0:
                break
        self.assertEqual(self.json("info")["format"], CURRENT)
        self.check_answers(old, 3)
        # what the killed ones left beside it went with the one that finished
        self.assertEqual(sorted(os.listdir(self.dir)), ["argus.db", "argus.db-lock"])

    def test_read_only_it_says_how_to_migrate(self):
        """A user who cannot write the archive: refused with what to do, the
        file as it was (run as nobody, a file root owns)."""
        if os.geteuid() != 0 or not shutil.which("setpriv"):
            self.skipTest("needs root and setpriv to run as another user")
        self.fixture(4)
        os.chmod(self.dir, 0o1777)  # nobody makes the LMDB lock file there
        os.chmod(self.db, 0o644)
        with open(self.db, "rb") as f:
            before = f.read()
        p = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", ARGUSQ, "-d", self.db,
                            "traces"], capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn(f"archive format 4, written by an older argusq; this one reads format {CURRENT}", p.stderr)
        self.assertIn("migrated in place, keeping every trace", p.stderr)
        with open(self.db, "rb") as f:
            self.assertEqual(f.read(), before)

    def test_a_newer_format_is_refused(self):
        """An archive of a format after this argusq's: refused, unchanged."""
        self.fixture(6)
        self.ok("info")  # now of the current format
        # the format record (meta "format") made 99 in place, in every page
        # that holds a copy (LMDB keeps older copies in free pages): the
        # small value is in the page of its key
        with open(self.db, "rb") as f:
            data = bytearray(f.read())
        want = CURRENT.to_bytes(4, "little")
        at, patched = data.find(b"format"), 0
        while at >= 0:
            v = data.find(want, at, at + 16)
            if v >= 0:
                data[v:v + 4] = (99).to_bytes(4, "little")
                patched += 1
            at = data.find(b"format", at + 1)
        self.assertGreater(patched, 0)
        with open(self.db, "wb") as f:
            f.write(data)
        p = self.run_argusq("traces")
        self.assertNotEqual(p.returncode, 0)
        self.assertIn(f"format 99, newer than this argusq's {CURRENT}", p.stderr)
        with open(self.db, "rb") as f:
            self.assertEqual(f.read(), bytes(data))
