"""The Python bindings (python/argusq) on the real traces of tests/traces:
the same answers as `argusq --json` for the same statements, ingests with
their options, errors with their positions, rows streamed, and threads
sharing one Archive (and two Archives of one file)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import argusq  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACES = os.path.join(ROOT, "tests", "traces")
CLI = os.environ.get("ARGUSQ_CLI", os.path.join(ROOT, "build", "argusq"))
ANOMALY = os.path.join(TRACES, "lockchain-anomaly.txt")
NORMAL = os.path.join(TRACES, "lockchain-normal.txt")
UI = 'find nodes where thread = "ui-main" order by blocked desc limit 3'


def cli(db, *args):
    env = dict(os.environ)
    env.pop("ARGUSQ_DB", None)
    p = subprocess.run([CLI, "-d", db] + list(args), capture_output=True, text=True, env=env, timeout=120)
    return p


class ArchiveCase(unittest.TestCase):
    """An archive with "anomaly" and "normal", ingested through the
    bindings; the argusq command answers from the same file."""

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="argusq-py-")
        cls.db = os.path.join(cls.dir, "argus.db")
        cls.a = argusq.Archive(cls.db, create=True)
        cls.a.ingest(ANOMALY, name="anomaly", arch="x86_64", labels={"run": "slow"})
        cls.a.ingest(NORMAL, name="normal", arch="x86_64", labels={"run": "normal"})

    @classmethod
    def tearDownClass(cls):
        cls.a.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def cli_json(self, *args):
        p = cli(self.db, "--json", *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines()]


class Queries(ArchiveCase):
    STATEMENTS = [
        "traces",
        UI,
        "slice back from node 79 depth 6",
        'diagnose thread "ui-main" against trace "normal"',
        "match node 79",
        'critical path of thread "ui-main"',
        'traces where label.run = "slow"',
        "find events where tid = 4111 limit 20",
    ]

    def test_same_answers_as_the_cli(self):
        for trace in ("anomaly", "normal"):
            for st in self.STATEMENTS:
                with self.subTest(trace=trace, statement=st):
                    self.assertEqual(self.a.query(st, trace=trace), self.cli_json("--trace", trace, st)[0])

    def test_a_script_gives_a_list_and_which_trace_each_read(self):
        script = f'traces; {UI}; slice back from node 79 depth 2 in trace "normal"'
        docs = self.a.query(script, trace="anomaly")
        self.assertEqual(docs, self.cli_json("--trace", "anomaly", script))
        res = self.a.results(script, trace="anomaly")
        self.assertEqual([r.index for r in res], [0, 1, 2])
        self.assertEqual([r.trace for r in res], ["", "anomaly", "normal"])
        self.assertEqual([r.doc for r in res], docs)
        self.assertEqual(self.a.query(";"), [])

    def test_text_in_every_format_is_the_clis(self):
        for fmt, st in (("table", UI), ("csv", UI), ("dot", "slice back from node 79 depth 3"),
                        ("perfetto", "slice back from node 79 depth 3"), ("svg", "slice back from node 79 depth 2")):
            with self.subTest(format=fmt):
                p = cli(self.db, "--trace", "normal", "--format", fmt, st)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(self.a.text(st, trace="normal", format=fmt), p.stdout)
        with self.assertRaises(ValueError):
            self.a.text("traces", format="xml")

    def test_errors_say_where(self):
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.query("find nodes wher tid = 1")
        e = c.exception
        self.assertEqual((e.code, e.line, e.col, e.offset), ("statement", 1, 12, 11))
        self.assertEqual(e.message, 'syntax error near "wher"')
        p = cli(self.db, "find nodes wher tid = 1")
        self.assertIn(f"query:{e.line}:{e.col}: {e.message}", p.stderr)
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.query('traces;\nuse trace "nope"; traces')
        e = c.exception
        self.assertEqual((e.line, e.col, e.statement, e.statements, e.statement_line), (2, 11, 1, 3, 2))
        self.assertIn('no trace named "nope"', e.message)
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.query("slice back from node 999999 in trace \"normal\"")
        self.assertEqual(c.exception.col, 22)

    def test_a_session_keeps_use_trace(self):
        with self.a.session() as s:
            self.assertEqual(s.trace, "")
            self.assertEqual(s.query('use trace "normal"'), {"trace": "normal"})
            self.assertEqual(s.trace, "normal")
            self.assertEqual(s.query(UI), self.cli_json("--trace", "normal", UI)[0])
            self.assertEqual(s.results(UI)[0].trace, "normal")


class Normals(unittest.TestCase):
    """Session.normals (argusq_session_normals): a diagnosis against normal
    steps given from elsewhere, as argusq.fleet gives every archive's."""

    STMT = 'diagnose thread "ui-main" against traces where label.run = "normal"'

    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="argusq-py-")
        cls.a = argusq.Archive(os.path.join(cls.dir, "argus.db"), create=True)
        dist = os.path.join(TRACES, "dist")
        for i in range(1, 7):
            cls.a.ingest(os.path.join(dist, "jitterpipe-normal-%02d.trace" % i), name="n%d" % i, arch="x86_64",
                         labels={"run": "normal"})
        cls.a.ingest(os.path.join(dist, "jitterpipe-anomaly-1.trace"), name="slow", arch="x86_64")

    @classmethod
    def tearDownClass(cls):
        cls.a.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_its_own_steps_given_back_are_the_same_answer(self):
        d = self.a.query(self.STMT, trace="slow")
        self.assertGreaterEqual(d["normal_steps"], 5)
        self.assertEqual(len(d["normal_sample"]), d["normal_steps"])
        self.assertEqual(self.a.query(self.STMT, trace="slow", normals=d["normal_sample"]), d)
        # another archive's steps: named by it, and counted as its traces
        other = [dict(st, archive="/elsewhere.db") for st in d["normal_sample"]]
        e = self.a.query(self.STMT, trace="slow", normals=d["normal_sample"] + other)
        self.assertEqual(e["normal_traces"], 2 * d["normal_traces"])
        self.assertEqual({st.get("archive") for st in e["normal_sample"]}, {None, "/elsewhere.db"})

    def test_a_sample_where_the_culprit_is_normal_judges_it_so(self):
        """The same anomaly against a pool in which the anomaly's first
        suspect took as long in every normal step: it is within normal then."""
        d = self.a.query(self.STMT, trace="slow")
        first = d["suspects"][0]
        self.assertTrue(first["effect"]["outside"], first)
        ns = first["ns"]
        self.assertGreater(ns, 0)
        pool = [dict(st, parts=st["parts"] + [{"thread": first["thread"], "state": first["state"], "ns": ns}])
                for st in d["normal_sample"]]
        e = self.a.query(self.STMT, trace="slow", normals=pool)
        again = [x for x in e["suspects"] if (x["thread"], x["state"]) == (first["thread"], first["state"])]
        self.assertTrue(again and not again[0]["effect"]["outside"], again)
        self.assertNotEqual(e["suspects"][0]["thread"], first["thread"])

    def test_too_few_and_bad_steps(self):
        d = self.a.query(self.STMT, trace="slow")
        few = self.a.query(self.STMT, trace="slow", normals=d["normal_sample"][:3])
        self.assertEqual(few["normal_steps"], 3)
        self.assertIsNone(few["outside_paths"])
        bad = dict(d["normal_sample"][0], parts=[{"thread": "x", "state": "asleep", "ns": 1}])
        with self.assertRaises(argusq.ArgusqError) as e:
            self.a.query(self.STMT, trace="slow", normals=[bad])
        self.assertIn('no state named "asleep"', str(e.exception))


class Frames(ArchiveCase):
    """df(): the rows of an answer as a pandas DataFrame."""

    def test_rows_as_a_frame(self):
        import pandas  # the Makefile installs python3-pandas
        df = self.a.df(UI, trace="anomaly")
        self.assertIsInstance(df, pandas.DataFrame)
        rows = self.a.query(UI, trace="anomaly")["nodes"]
        self.assertEqual(list(df["id"]), [n["id"] for n in rows])
        self.assertEqual(list(df["blocked"]), [n["blocked"] for n in rows])
        g = self.a.df("find nodes where blocked > 10ms group by thread compute sum(blocked)", trace="anomaly")
        doc = self.a.query("find nodes where blocked > 10ms group by thread compute sum(blocked)", trace="anomaly")
        self.assertEqual(g.to_dict("records"), doc["groups"])
        # nested objects as dotted columns; a session's df reads its trace
        with self.a.session("anomaly") as s:
            cp = s.df('critical path of thread "ui-main"')
        self.assertIn("for.thread", cp.columns)
        self.assertTrue(self.a.df("find nodes where tid = 999999", trace="anomaly").empty)


class Rows(ArchiveCase):
    def test_rows_are_the_documents_list(self):
        st = "find events where tid = 4122"  # ui-main's
        rows = self.a.rows(st, trace="anomaly")
        got = list(rows)
        self.assertEqual(got, self.a.query(st, trace="anomaly")["events"])
        self.assertGreater(len(got), 100)
        self.assertEqual((rows.key, rows.trace), ("events", "anomaly"))

    def test_the_rest_of_the_document(self):
        rows = self.a.rows("slice back from node 79 depth 4", trace="normal")
        doc = self.a.query("slice back from node 79 depth 4", trace="normal")
        self.assertEqual(list(rows), doc["nodes"])
        self.assertEqual(rows.extra, {"edges": doc["edges"], "truncated": False})
        rows = self.a.rows("show node 79", trace="normal")  # a list that is not first
        doc = self.a.query("show node 79", trace="normal")
        self.assertEqual(list(rows), doc["in"])
        self.assertEqual(rows.extra["node"], doc["node"])

    def test_closing_early_stops_the_statement(self):
        rows = self.a.rows("find events", trace="anomaly")
        first = [next(rows) for _ in range(3)]
        self.assertEqual([r["id"] for r in first], [1, 2, 3])
        rows.close()
        self.assertEqual(list(rows), [])
        for r in self.a.rows("find events", trace="anomaly"):
            break  # leaving the loop: the iterator is dropped, the archive still serves
        self.assertEqual(self.a.query("traces")["traces"][0]["name"], "anomaly")

    def test_an_error_is_raised_by_the_iterator(self):
        with self.assertRaises(argusq.ArgusqError) as c:
            list(self.a.rows("find nodes where nosuch = 1", trace="anomaly"))
        self.assertEqual(c.exception.code, "statement")


class Ingest(ArchiveCase):
    def test_summary_is_the_clis(self):
        other = os.path.join(self.dir, "cli.db")
        p = cli(other, "--json", "ingest", ANOMALY, "--name", "anomaly", "--arch", "x86_64")
        self.assertEqual(p.returncode, 0, p.stderr)
        want = json.loads(p.stdout)
        seen = []
        with argusq.Archive(os.path.join(self.dir, "py.db"), create=True) as a:
            got = a.ingest(ANOMALY, name="anomaly", arch="x86_64", progress=lambda *x: seen.append(x))
            self.assertEqual({k: got[k] for k in want}, want)
            self.assertEqual(got["format"], "trace-cmd-report")
            self.assertEqual(got["warnings"], [])
            self.assertEqual(a.query("find nodes limit 5"), json.loads(cli(other, "--json", "find nodes limit 5").stdout))
        self.assertEqual([x[3] for x in seen if x[3]], ["building the graph", "writing the archive"])
        self.assertEqual(seen[-1][2], want["events"])
        self.assertEqual(seen[0][1], os.path.getsize(ANOMALY))

    def test_labels_and_warnings(self):
        raw = os.path.join(TRACES, "lockchain-anomaly-raw.trace")
        info = self.a.ingest(raw, name="raw", labels={"run": "raw", "box": "ci 7"})
        self.assertEqual(info["unnamed"], 414)
        self.assertEqual(len(info["warnings"]), 1)
        self.assertIn("414 syscall events keep their number without a name", info["warnings"][0])
        t = self.a.query('traces where label.box = "ci 7"')["traces"]
        self.assertEqual([x["name"] for x in t], ["raw"])
        self.assertEqual(t[0]["labels"], {"box": "ci 7", "run": "raw"})

    def test_failures(self):
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.ingest(os.path.join(self.dir, "nope.txt"))
        self.assertEqual(c.exception.code, "io")
        rules = os.path.join(self.dir, "bad.rules")
        with open(rules, "w") as f:
            f.write("rule ignore wakeup where tid = 4124;\nrule boundray x;\n")
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.ingest(ANOMALY, name="ruled", rules=rules)
        e = c.exception
        self.assertEqual((e.code, e.source, e.line, e.col, e.text), ("statement", rules, 2, 6, "rule boundray x;"))
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.ingest(ANOMALY, name="anomaly")  # taken
        self.assertEqual(c.exception.code, "ingest")
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.ingest(ANOMALY, name="x", labels={"1bad": "v"})
        self.assertEqual(c.exception.code, "usage")
        names = [t["name"] for t in self.a.query("traces")["traces"]]
        self.assertNotIn("ruled", names)
        self.assertNotIn("x", names)


class Dump(ArchiveCase):
    def test_a_dump_is_the_trace_in_another_archive(self):
        """Archive.dump, ingested elsewhere, answers as the trace did; a
        diagnose against it there (`in archive`) is the one against the
        trace here, naming the other archive."""
        path = os.path.join(self.dir, "normal.argus")
        info = self.a.dump(path, trace="normal")
        self.assertEqual(info["trace"], "normal")
        self.assertEqual(info["events"], [t for t in self.a.query("traces")["traces"]
                                          if t["name"] == "normal"][0]["events"])
        other = os.path.join(self.dir, "other.db")
        with argusq.Archive(other, create=True) as b:
            self.assertEqual(b.ingest(path)["trace"], "normal")
            self.assertEqual(b.query("find nodes", trace="normal"), self.a.query("find nodes", trace="normal"))
        got = self.a.query(f'diagnose thread "ui-main" against trace "normal" in archive "{other}"', trace="anomaly")
        want = self.a.query('diagnose thread "ui-main" against trace "normal"', trace="anomaly")
        self.assertEqual(got["baseline"].pop("archive"), other)
        self.assertEqual(got, want)
        with self.assertRaises(argusq.ArgusqError) as c:
            self.a.dump(path, trace="nope")
        self.assertEqual(c.exception.code, "usage")


class Threads(ArchiveCase):
    STATEMENTS = Queries.STATEMENTS[1:]

    def check_threads(self, archives):
        want = {st: self.a.query(st, trace="normal") for st in self.STATEMENTS}
        errors = []

        def work(i):
            try:
                for r in range(6):
                    for k, st in enumerate(self.STATEMENTS):
                        st = self.STATEMENTS[(k + i) % len(self.STATEMENTS)]
                        a = archives[(r + i) % len(archives)]
                        if a.query(st, trace="normal") != want[st]:
                            errors.append((i, st))
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append((i, repr(e)))

        threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])

    def test_four_threads_one_archive(self):
        self.check_threads([self.a])

    def test_four_threads_two_archives_of_one_file(self):
        with argusq.Archive(os.path.join(self.dir, ".", "argus.db"), "r") as b:
            self.check_threads([self.a, b])
            # b shares the writable environment, and is read-only itself
            with self.assertRaises(argusq.ArgusqError) as c:
                b.query('label trace "normal" set k = "v"')
            self.assertIn("read-only", c.exception.message)

    def test_close_waits_for_no_one_and_frees_after_the_last(self):
        b = argusq.Archive(self.db)
        rows = b.rows("find events", trace="anomaly")
        next(rows)
        b.close()  # the iterator still holds the handle
        self.assertEqual(len(list(rows)), 1104)
        with self.assertRaises(ValueError):
            b.query("traces")


class MissingArchive(unittest.TestCase):
    """A path where there is no archive, taken as the argusq command takes
    it: a statement says there is no such archive and makes nothing (a
    mistyped path is not a new, empty archive), an ingest too unless the
    Archive was made with create=True (or mode "c"): then its first
    ingest makes it."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="argusq-py-missing-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        self.path = os.path.join(self.dir, "typo.db")

    def test_a_statement_says_no_such_archive_and_makes_nothing(self):
        want = f"{self.path}: no such archive (ingest a trace first)"
        with argusq.Archive(self.path) as a:
            for call in (lambda: a.query("traces"), lambda: a.text("traces"), lambda: a.session(),
                         lambda: a.rows("traces"), lambda: a.dump(os.path.join(self.dir, "t.argus"))):
                with self.assertRaises(argusq.ArgusqError) as c:
                    call()
                self.assertEqual((c.exception.code, c.exception.message), ("archive", want))
        for mode in ("r", "w"):
            with self.assertRaises(argusq.ArgusqError) as c:
                argusq.Archive(self.path, mode)
            self.assertEqual(c.exception.message, want)
        self.assertEqual(os.listdir(self.dir), [])
        p = cli(self.path, "traces")
        self.assertEqual((p.returncode, p.stderr), (2, f"argusq: {want}\n"))
        self.assertEqual(os.listdir(self.dir), [])

    def test_an_ingest_without_create_makes_nothing(self):
        with argusq.Archive(self.path) as a:
            with self.assertRaises(argusq.ArgusqError) as c:
                a.ingest(NORMAL, name="normal", arch="x86_64")
            self.assertEqual(c.exception.code, "archive")
            self.assertIn(f"{self.path}: no such archive (Archive(path, create=True) makes one", c.exception.message)
        self.assertEqual(os.listdir(self.dir), [])

    def test_the_first_ingest_makes_it(self):
        with argusq.Archive(self.path, create=True) as a:
            with self.assertRaises(argusq.ArgusqError) as c:
                a.ingest(os.path.join(self.dir, "nope.txt"))
            self.assertEqual(c.exception.code, "io")
            self.assertEqual(os.listdir(self.dir), [])  # as `argusq ingest nope.txt`: no archive made
            self.assertEqual(a.ingest(NORMAL, name="normal", arch="x86_64")["trace"], "normal")
            self.assertEqual(sorted(os.listdir(self.dir)), ["typo.db", "typo.db-lock"])
            self.assertEqual([t["name"] for t in a.query("traces")["traces"]], ["normal"])
            a.ingest(ANOMALY, name="anomaly", arch="x86_64")  # into the handle opened for the query
            p = cli(self.path, "--json", "--trace", "anomaly", UI)
            self.assertEqual(a.query(UI, trace="anomaly"), json.loads(p.stdout))

    def test_one_made_meanwhile_is_read(self):
        with argusq.Archive(self.path) as a:
            p = cli(self.path, "ingest", NORMAL, "--name", "normal", "--arch", "x86_64")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual([t["name"] for t in a.query("traces")["traces"]], ["normal"])
        with self.assertRaises(ValueError):
            a.query("traces")


class OtherUser(unittest.TestCase):
    """An archive in a directory another user may not write (root's, 0555),
    opened by nobody through the bindings in the default mode: read without
    a lock file, and a change refused saying why, as the argusq command
    does -- also when nobody may write the file itself, but not make its
    lock file there."""

    SCRIPT = """if True:
        import json, sys, argusq
        a = argusq.Archive(sys.argv[1])
        out = {"mode": a.mode, "traces": [t["name"] for t in a.query("traces")["traces"]]}
        try:
            a.query('label trace "normal" set run = "slow"')
        except argusq.ArgusqError as e:
            out["error"] = e.message
        print(json.dumps(out))
    """

    def test_reads_a_read_only_directory(self):
        if os.geteuid() != 0 or not shutil.which("runuser"):
            self.skipTest("needs root and runuser to run as another user")
        # a python3 nobody may run (sys.executable may be in root's home)
        py = next((x for x in (sys.executable, "/usr/bin/python3") if subprocess.run(
            ["runuser", "-u", "nobody", "--", x, "-c", "pass"], capture_output=True, timeout=60).returncode == 0), None)
        if not py:
            self.skipTest("no python3 the user nobody may run")
        d = tempfile.mkdtemp(prefix="argusq-py-other-")
        self.addCleanup(shutil.rmtree, d, True)
        os.chmod(d, 0o755)
        # the package and the library where nobody can read them (the
        # checkout may be in a directory only root may enter)
        shutil.copytree(os.path.dirname(argusq.__file__), os.path.join(d, "py", "argusq"),
                        ignore=shutil.ignore_patterns("__pycache__", "_installed.py"))
        lib = os.path.join(d, "libargusq.so")
        shutil.copy(os.path.realpath(argusq._native.library_path()), lib)
        for root, dirs, files in os.walk(d):
            for n in dirs + files:
                os.chmod(os.path.join(root, n), 0o755)
        ro = os.path.join(d, "ro")
        os.mkdir(ro)
        with argusq.Archive(os.path.join(ro, "a.db"), create=True) as a:
            a.ingest(NORMAL, name="normal", arch="x86_64")
        os.unlink(os.path.join(ro, "a.db-lock"))
        os.chmod(ro, 0o555)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": os.path.join(d, "py"),
               "ARGUSQ_LIB": lib}
        why = {0o644: "this user may not write it (Permission denied)",
               0o666: "its lock file ro/a.db-lock cannot be made or written (Permission denied)"}
        for mode in (0o644, 0o666):
            os.chmod(os.path.join(ro, "a.db"), mode)
            p = subprocess.run(["runuser", "-u", "nobody", "--", py, "-c", self.SCRIPT, "ro/a.db"],
                               capture_output=True, text=True, env=env, cwd=d, timeout=120)
            self.assertEqual(p.returncode, 0, p.stderr)
            out = json.loads(p.stdout)
            self.assertEqual((out["mode"], out["traces"]), ("r", ["normal"]))
            self.assertIn(f"ro/a.db: the archive is read-only: {why[mode]}", out["error"])
            self.assertEqual(os.listdir(ro), ["a.db"])


if __name__ == "__main__":
    unittest.main()
