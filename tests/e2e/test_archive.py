"""Keeping an archive (db/manage.c, cli/admin.c): `drop trace`, `rename
trace`, `argusq compact`, `argusq backup`, `argusq info`."""
import json
import os
import subprocess
import time

from common import ARGUSQ, ArchiveCase, Repl, trace

# the largest trace of the repo's own, written in many small batches (so
# that a test sees many commits, as a big trace's ingest makes)
BIG = trace("diskio-anomaly.trace")
SMALL_BATCHES = {"ARGUSQ_BATCH_OPS": "300"}


class Archive(ArchiveCase):
    def answers(self, name):
        """Every event, node and edge of a trace, and a match of a busy node."""
        out = [self.json(f'find {what} in trace "{name}"')[what] for what in ("events", "nodes", "edges")]
        n = self.json(f'find nodes where thread = "ui-main" order by blocked desc limit 1 in trace "{name}"')
        if n["nodes"]:  # the node's counterparts in its own trace (named apart)
            m = self.json("--trace", name, f'match node {n["nodes"][0]["id"]} in trace "{name}"')
            out.append([{k: v for k, v in x.items() if k != "trace"} for x in m["nodes"]])
        return out

    def three(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ingest(trace("eventloop-anomaly.trace"), name="loop")

    def names(self):
        return [t["name"] for t in self.json("traces")["traces"]]

    def test_drop_leaves_the_others_as_they_were(self):
        self.three()
        before = {n: self.answers(n) for n in ("normal", "anomaly")}
        info = self.json("info")
        out = self.json('drop trace "anomaly"')
        self.assertEqual(out["dropped"], "anomaly")
        self.assertEqual(out["events"], 1105)
        self.assertEqual(self.names(), ["normal", "loop"])
        self.assertEqual(self.answers("normal"), before["normal"])
        # its events, nodes and signatures are gone: nothing matches in it,
        # and the space is free at once
        self.assertEqual(self.run_argusq('find nodes in trace "anomaly"').returncode, 1)
        after = self.json("info")
        self.assertEqual(after["traces"], 2)
        self.assertEqual(after["events"], info["events"] - 1105)
        self.assertGreater(after["free_pages"], info["free_pages"])
        m = self.json("--trace", "normal", f'match node {before["normal"][1][5]["id"]}')
        self.assertTrue(m["nodes"])
        self.assertTrue(all(x["trace"] != "anomaly" for x in m["nodes"]))
        # ingested again, under its name: the same answers
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.assertEqual(self.answers("anomaly"), before["anomaly"])

    def big(self, name):
        return self.json("ingest", BIG, "--name", name, "--arch", "x86_64", env=SMALL_BATCHES)

    def test_a_dropped_traces_space_is_reused(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        self.big("big")
        size = os.path.getsize(self.db)
        self.json('drop trace "big"')
        self.assertGreater(self.json("info")["free_pages"] * 4096, size / 2)
        # in the pages freed (LMDB reuses a page two commits after the one
        # that freed it: a big ingest's batches do)
        self.big("big again")
        self.assertLess(os.path.getsize(self.db), size * 1.15)

    def test_dropping_the_latest_makes_the_one_before_the_default(self):
        self.three()
        self.json('drop trace "loop"')
        self.assertEqual(self.json('find nodes where thread = "ui-main" limit 1')["nodes"][0]["proc"], "ui-main")
        self.json('drop trace "anomaly"')
        self.json('drop trace "normal"')
        self.assertEqual(self.names(), [])
        self.assertEqual(self.json("info")["events"], 0)

    def test_drop_and_rename_errors(self):
        self.three()
        p = self.run_argusq('drop trace "nope"')
        self.assertEqual(p.returncode, 1)
        self.assertIn('query:1:12: no trace named "nope"', p.stderr)
        p = self.run_argusq('rename trace "normal" to "loop"')
        self.assertEqual(p.returncode, 1)
        self.assertIn('query:1:26: trace "loop" already exists', p.stderr)
        p = self.run_argusq('rename trace "normal" to "a\\"b\\\\c"')
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('a"b\\c', self.names())
        self.assertEqual(self.names(), ["a\"b\\c", "anomaly", "loop"])

    def test_rename_keeps_place_default_and_answers(self):
        self.three()
        before = self.answers("anomaly")
        out = self.json('rename trace "anomaly" to "slow run"')
        self.assertEqual(out, {"renamed": "anomaly", "to": "slow run"})
        self.assertEqual(self.names(), ["normal", "slow run", "loop"])
        self.assertEqual(self.answers("slow run"), before)
        self.assertEqual(self.run_argusq("--trace", "anomaly", "find nodes limit 1").returncode, 1)
        # the latest stays the default under its new name
        self.json('rename trace "loop" to "loop2"')
        self.assertEqual(self.json("find nodes limit 1")["nodes"], self.json('find nodes limit 1 in trace "loop2"')["nodes"])
        # and a script's session follows the trace it uses
        p = self.ok("-f", "-", stdin='use trace "normal"; rename trace "normal" to "fast"; find nodes limit 1')
        self.assertIn("renamed trace", p.stdout)
        self.assertEqual(self.names(), ["fast", "slow run", "loop2"])

    def test_compact_shrinks_and_keeps_every_answer(self):
        self.three()
        self.big("big")
        self.json('drop trace "big"')
        keep = {n: self.answers(n) for n in ("normal", "anomaly", "loop")}
        size = os.path.getsize(self.db)
        out = self.json("compact")
        self.assertEqual(out["before"], size)
        self.assertEqual(out["after"], os.path.getsize(self.db))
        self.assertLess(out["after"], size / 2)
        self.assertEqual(out["saved"], out["before"] - out["after"])
        self.assertEqual(self.json("info")["free_pages"], 0)
        self.assertEqual({n: self.answers(n) for n in keep}, keep)
        self.assertEqual(self.names(), ["normal", "anomaly", "loop"])
        # still an archive to write to
        self.ingest(trace("lockchain-normal.txt"), name="again")
        self.assertEqual(self.answers("again"), keep["normal"])
        self.assertFalse([f for f in os.listdir(self.dir) if "compact" in f])

    def test_compact_after_a_killed_ingest(self):
        self.three()
        keep = {n: self.answers(n) for n in ("normal", "anomaly", "loop")}
        # the ingest takes a few tenths of a second: a kill can come after
        # its commit, and then the trace is whole and is dropped, and the
        # next try kills one earlier (in small batches, after the first
        # has grown the file)
        for attempt in range(20):
            name = f"killed{attempt}"
            p = subprocess.Popen([ARGUSQ, "-d", self.db, "ingest", BIG, "--name", name],
                                 env=dict(os.environ, ARGUSQ_BATCH_OPS="100"), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            size = os.path.getsize(self.db)
            end = time.time() + 60
            while os.path.getsize(self.db) < size + (64 << 10) and time.time() < end and p.poll() is None:
                time.sleep(0.002)
            p.kill()
            p.wait()
            if name not in self.names():
                break
            self.json(f'drop trace "{name}"')
        else:
            self.fail("every ingest finished before its kill")
        out = self.json("compact")
        self.assertLess(out["after"], out["before"])
        self.assertEqual(self.names(), ["normal", "anomaly", "loop"])
        self.assertEqual({n: self.answers(n) for n in keep}, keep)

    def test_backup_during_an_ingest_holds_what_was_committed(self):
        self.three()
        keep = {n: self.answers(n) for n in ("normal", "anomaly", "loop")}
        copy = os.path.join(self.dir, "copy.db")
        # a backup while batches of the new trace are being committed; the
        # ingest takes a few tenths of a second, so a backup can come after
        # its commit (the copy then holds it whole): that try is dropped
        for attempt in range(20):
            name = f"big{attempt}"
            size = os.path.getsize(self.db)
            p = subprocess.Popen([ARGUSQ, "-d", self.db, "ingest", BIG, "--name", name],
                                 env=dict(os.environ, ARGUSQ_BATCH_OPS="100"), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE)
            end = time.time() + 60
            while os.path.getsize(self.db) < size + (64 << 10) and time.time() < end and p.poll() is None:
                time.sleep(0.002)
            out = self.json("backup", copy)
            self.assertEqual(out, {"backup": copy, "of": self.db})
            self.assertEqual(p.wait(), 0, p.stderr.read())
            self.assertIn(name, self.names())
            names = [t["name"] for t in json_of(copy, "traces")["traces"]]
            if name not in names:
                break
            os.unlink(copy)
        else:
            self.fail("every ingest finished before its backup")
        self.assertEqual(names, [n for n in self.names() if n != name])
        self.assertEqual(names[:3], ["normal", "anomaly", "loop"])
        for n in keep:
            self.assertEqual(json_of(copy, f'find nodes in trace "{n}"')["nodes"], keep[n][1])
        # a writer on the copy deletes what the ingest had committed of "big"
        before = json_of(copy, "info")
        json_of(copy, "ingest", trace("markers.trace"), "--name", "m")
        after = json_of(copy, "info")
        self.assertEqual(after["traces"], len(names) + 1)
        self.assertGreater(after["free_pages"], before["free_pages"])
        self.assertEqual(self.run_argusq("backup", copy).returncode, 1)  # never over a file

    def test_info(self):
        self.three()
        i = self.json("info")
        self.assertEqual(i["format"], 8)
        self.assertEqual(i["traces"], 3)
        ts = self.json("traces")["traces"]
        self.assertEqual(i["events"], sum(t["events"] for t in ts))
        self.assertEqual(i["nodes"], sum(t["nodes"] for t in ts))
        self.assertEqual(i["edges"], sum(t["edges"] for t in ts))
        self.assertEqual(i["file_bytes"], os.path.getsize(self.db))
        self.assertEqual(i["file_bytes"], i["pages"] * i["page_size"])
        self.assertLessEqual(i["used_bytes"], i["file_bytes"])
        p = self.ok("info")
        self.assertIn("format       8", p.stdout)
        self.assertEqual(self.run_argusq("info", db=False, env={"ARGUSQ_DB": os.path.join(self.dir, "none.db")}).returncode, 2)

    def test_a_writer_opened_before_a_compact_is_refused(self):
        self.three()
        repl = Repl(self.db, {"TERM": "dumb", "HOME": self.dir})
        try:
            self.assertTrue(repl.read_until(b"argusq> "))
            self.json("compact")
            repl.write(b'drop trace "loop";\n')
            self.assertTrue(repl.read_until(b"compacted"), repl.out)
            self.assertIn(b"open it again", repl.out)
        finally:
            repl.kill()
        self.assertEqual(self.names(), ["normal", "anomaly", "loop"])

    def test_opening_after_a_compact_while_another_process_has_it_open(self):
        """LMDB's lock file remembers the last transaction of the file it
        was made for; a process opening the compacted file while another
        still holds the old one must not read it through that (it chose
        an empty meta page when the number was even).  Twice: one of the
        two runs has an even number, the other an odd one."""
        self.three()
        for i in range(2):
            repl = Repl(self.db, {"TERM": "dumb", "HOME": self.dir})
            try:
                self.assertTrue(repl.read_until(b"argusq> "))
                self.json("compact")
                self.assertEqual(self.names(), ["normal", "anomaly", "loop"][: 3 - i] + ["extra"] * i)
                self.ingest(trace("lockchain-normal.txt"), name="again")
                self.assertEqual(self.names()[-1], "again")
                self.json('rename trace "again" to "extra"' if i == 0 else 'drop trace "extra"')
            finally:
                repl.kill()
            if i == 0:  # one commit more: the other parity next time
                self.json('drop trace "loop"')

    def labels(self, name, arch=False):
        """A trace's labels; without arch, which every test ingest has (arch_of)."""
        got = [t for t in self.json("traces")["traces"] if t["name"] == name][0]["labels"]
        return got if arch else {k: v for k, v in got.items() if k != "arch"}

    def test_labels_set_unset_and_traces_where(self):
        self.three()
        self.ok('label trace "normal" set run = "normal"')
        out = self.json('label trace "anomaly" set run = "slow"')
        self.assertEqual(out, {"trace": "anomaly", "set": "run", "value": "slow"})
        self.ok('label trace "anomaly" set ticket = 4821')
        self.assertEqual(self.labels("anomaly"), {"run": "slow", "ticket": "4821"})
        self.assertEqual(self.labels("loop"), {})
        pick = lambda e: [t["name"] for t in self.json(f"traces where {e}")["traces"]]
        self.assertEqual(pick('label.run = "normal"'), ["normal"])
        self.assertEqual(pick('label.run in ("normal", "slow")'), ["normal", "anomaly"])
        self.assertEqual(pick("label.ticket > 4000 and events > 1000"), ["anomaly"])
        self.assertEqual(pick('not label.run = "slow"'), ["normal", "loop"])
        self.assertEqual(pick('format = "argus" or span > 400ms'), ["anomaly"])
        # a label set again is replaced; unset removes it
        self.ok('label trace "anomaly" set run = "fixed"')
        self.json('label trace "anomaly" unset ticket')
        self.assertEqual(self.labels("anomaly"), {"run": "fixed"})
        # the table has a labels column once a trace has one
        self.assertIn("run=fixed", self.ok("traces").stdout)
        # labels follow their trace: renamed, rebuilt, dropped with it
        self.ok('rename trace "anomaly" to "a2"')
        self.ok('rebuild graph in trace "a2"')
        self.assertEqual(self.labels("a2"), {"run": "fixed"})
        self.ok('drop trace "a2"')
        self.ingest(trace("lockchain-anomaly.txt"), name="a2")
        self.assertEqual(self.labels("a2", arch=True), {"arch": "x86_64"})  # from --arch

    def test_traces_where_ingested_dates(self):
        """ingested_at counts unix seconds; a string beside it is a date or an age."""
        self.three()
        at = {t["name"]: t["ingested_at"] for t in self.json("traces")["traces"]}
        pick = lambda e: [t["name"] for t in self.json(f"traces where {e}")["traces"]]
        everyone = ["normal", "anomaly", "loop"]
        self.assertEqual(pick('ingested_at > "1h ago"'), everyone)
        self.assertEqual(pick('ingested_at < "1h ago"'), [])
        self.assertEqual(pick('"2020-01-01" < ingested_at'), everyone)
        day = time.strftime("%Y-%m-%d", time.gmtime(at["anomaly"]))
        self.assertEqual(pick(f'ingested_at >= "{day}" and ingested_at < "{day}T23:59:59Z"'),
                         [n for n in everyone if at[n] < at["anomaly"] // 86400 * 86400 + 86399])
        self.assertEqual(pick(f'ingested_at < "{day}"'), [])
        second = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at["loop"]))
        self.assertEqual(pick(f'ingested_at = "{second}"'), [n for n in everyone if at[n] == at["loop"]])
        self.assertEqual(pick(f'ingested_at in ("2001-01-01", "{second}")'),
                         [n for n in everyone if at[n] == at["loop"]])
        for e, col in (('ingested_at > "last week"', 28), ('ingested_at = "2026-02-30"', 28),
                       ('"7 days ago" < ingested_at', 14)):
            p = self.run_argusq(f"traces where {e}")
            self.assertEqual(p.returncode, 1, e)
            self.assertIn(f"query:1:{col}:", p.stderr)
            self.assertIn("is no date: ingested_at takes unix seconds", p.stderr)

    def test_label_errors(self):
        self.three()
        for stmt, want in (('label trace "nope" set a = "b"', "no trace named"),
                           ('label trace "loop" unset run', 'trace "loop" has no label run'),
                           ('label trace "loop" set 9a = 1', "bad number"),
                           ('label trace "loop" set a..b_c = 1', None),
                           ('label trace "loop" set a-b = 1', "a-b is not a field"),
                           ("traces where lable.run = 1", 'unknown field "lable.run"')):
            p = self.run_argusq(stmt)
            if want is None:
                self.assertEqual(p.returncode, 0, p.stderr)
                continue
            self.assertNotEqual(p.returncode, 0, stmt)
            self.assertIn(want, p.stderr)
        p = self.run_argusq("ingest", trace("markers.txt"), "--label", "-x=1")
        self.assertEqual(p.returncode, 2)
        self.assertIn("a label is a letter", p.stderr)
        self.assertEqual(self.names(), ["normal", "anomaly", "loop"])

    def test_ingest_labels_and_what_a_trace_dat_says(self):
        """A trace.dat's header says its host, kernel, machine, CPUs, clock
        and recorder; --label adds the user's, and wins over the header."""
        out = self.json("ingest", trace("lockchain-anomaly.dat"), "--name", "dat", "--label", "run=slow",
                        "--label", "host=builder-7")
        self.assertEqual(out["trace"], "dat")
        got = self.labels("dat", arch=True)
        self.assertEqual(got["run"], "slow")
        self.assertEqual(got["host"], "builder-7")
        self.assertEqual(got["arch"], "x86_64")
        self.assertEqual(got["cpus"], "2")
        self.assertEqual(got["clock"], "mono")
        self.assertTrue(got["kernel"][0].isdigit(), got)
        self.assertTrue(got["recorder"], got)
        # the same file ingested in one thread: the same labels
        self.json("ingest", trace("lockchain-anomaly.dat"), "--name", "one", "--label", "run=slow",
                  "--label", "host=builder-7", env={"ARGUSQ_THREADS": "1"})
        self.assertEqual(self.labels("one", arch=True), got)
        names = [t["name"] for t in self.json('traces where label.kernel = "%s"' % got["kernel"])["traces"]]
        self.assertEqual(names, ["dat", "one"])


def json_of(db, *args):
    """argusq --json on another archive than the test's."""
    p = subprocess.run([ARGUSQ, "-d", db, "--json"] + list(args), capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout.strip().splitlines()[-1])
