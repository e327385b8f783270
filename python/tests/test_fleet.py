"""argusq.fleet on a real Dask scheduler: a LocalCluster of two worker
processes on 127.0.0.1 and 20 archives made from the traces in
tests/traces, ../shared/traces and ../shared/foreign.  Every fleet answer
is checked against one archive holding every trace; a dead worker, a
missing archive and a bad file cost only their own answers.

Needs Debian's python3-distributed (the Makefile installs it) and runs
under /usr/bin/python3, whose path has it."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
ARGUSQ = os.path.join(ROOT, "build", "argusq")
sys.path.insert(0, os.path.join(ROOT, "python"))

try:
    import distributed  # noqa: F401
    HAVE_DASK = True
except ImportError:
    HAVE_DASK = False

from argusq import fleet  # noqa: E402


def trace_files():
    """The traces the fleet holds: this repository's, the shared
    recordings, and the foreign ones the reader takes (with --arch for
    text traces that do not name their machine)."""
    files = sorted(glob.glob(os.path.join(ROOT, "tests", "traces", "*.txt")) +
                   glob.glob(os.path.join(ROOT, "tests", "traces", "*.trace")) +
                   glob.glob(os.path.join(ROOT, "tests", "traces", "*.dat")))
    files += sorted(f for f in glob.glob(os.path.join(SHARED, "traces", "*"))
                    if f.endswith((".txt", ".dat", ".trace")))
    files += sorted(glob.glob(os.path.join(SHARED, "foreign", "*.txt")) +
                    glob.glob(os.path.join(SHARED, "foreign", "*.dat")))
    return files


def ingest(db, path, name):
    return subprocess.run([ARGUSQ, "-d", db, "ingest", path, "--name", name, "--arch", "x86_64"],
                          capture_output=True, text=True).returncode == 0


@unittest.skipUnless(HAVE_DASK, "python3-distributed is not installed (make installs it)")
class Fleet(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp(prefix="argusq-fleet-")
        cls.all = os.path.join(cls.dir, "all.db")
        cls.archives = [os.path.join(cls.dir, "a%02d.db" % i) for i in range(20)]
        cls.names = []  # (archive, trace), in the order of `all`'s catalog
        cls.files = {}  # trace: its file
        i = 0
        for f in trace_files():
            name = "%02d-%s" % (i, os.path.basename(f))
            db = cls.archives[i % 20]
            if not ingest(db, f, name):
                continue  # a foreign file the readers refuse: not the fleet's business
            assert ingest(cls.all, f, name), f
            cls.names.append((db, name))
            cls.files[name] = f
            i += 1
        assert all(os.path.exists(a) for a in cls.archives), "fewer than 20 traces ingested"
        # every trace once more, archive by archive: one archive whose
        # catalog order is the fleet's (archives as given, then each one's
        # catalog), where equal candidates of two archives tie as the fleet
        # breaks their ties
        cls.fleet_order = os.path.join(cls.dir, "fleet-order.db")
        for db in cls.archives:
            for d, name in cls.names:
                if d == db:
                    assert ingest(cls.fleet_order, cls.files[name], name), name
        cls.client = fleet.local_client(2)

    @classmethod
    def tearDownClass(cls):
        cluster = cls.client.cluster
        cls.client.close()
        cluster.close()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def one_archive(self, statement):
        """What one archive holding every trace answers, trace by trace (as
        the CLI prints it), in catalog order."""
        out = []
        for _, name in self.names:
            p = subprocess.run([ARGUSQ, "-d", self.all, "--json", "--trace", name, statement],
                               capture_output=True, text=True)
            out.append((name, json.loads(p.stdout) if p.returncode == 0 else None))
        return out

    def test_traces_are_every_archives(self):
        r = fleet.query(self.archives, "traces", self.client)
        self.assertEqual(r["missing"], [])
        got = sorted((t["archive"], t["name"], t["events"], t["nodes"], t["edges"]) for t in r["traces"])
        whole = {t["name"]: t for t in json.loads(subprocess.run(
            [ARGUSQ, "-d", self.all, "--json", "traces"], capture_output=True, text=True).stdout)["traces"]}
        want = sorted((db, n, whole[n]["events"], whole[n]["nodes"], whole[n]["edges"]) for db, n in self.names)
        self.assertEqual(got, want)
        self.assertGreaterEqual(len(got), 20)

    def test_find_with_order_and_limit_is_a_merge(self):
        stmt = "find nodes where blocked > 1ms order by blocked desc limit 25"
        r = fleet.query(self.archives, stmt, self.client)
        self.assertEqual(r["missing"], [])
        # one archive: every trace's rows, sorted by blocked (ties: the
        # fleet's order -- archives as given, then each archive's catalog
        # order, then the trace's own order), cut at 25
        home = {n: self.archives.index(db) for db, n in self.names}
        rows = []
        for ti, (name, doc) in enumerate(self.one_archive(stmt)):
            for pos, n in enumerate(doc["nodes"] if doc else []):
                rows.append((-n["blocked"], home[name], ti, pos, name, n["id"]))
        want = [(name, nid, -b) for b, _, _, _, name, nid in sorted(rows)[:25]]
        got = [(n["trace"], n["id"], n["blocked"]) for n in r["nodes"]]
        self.assertEqual(got, want)
        self.assertEqual(len(got), 25)
        where = dict((n, db) for db, n in self.names)
        for n in r["nodes"]:
            self.assertEqual(n["archive"], where[n["trace"]])

    def test_find_without_order_is_the_union(self):
        stmt = 'find nodes where kind = "timer"'
        r = fleet.query(self.archives, stmt, self.client)
        got = sorted((n["trace"], n["id"]) for n in r["nodes"])
        want = sorted((name, n["id"]) for name, doc in self.one_archive(stmt) if doc for n in doc["nodes"])
        self.assertEqual(got, want)
        self.assertGreater(len(got), 0)

    def test_diagnoses_ranked_together(self):
        stmt = 'diagnose thread "ui-main"'
        r = fleet.query(self.archives, stmt, self.client)
        want = {name: doc for name, doc in self.one_archive(stmt) if doc}
        self.assertGreaterEqual(len(want), 2)
        got = {d["trace"]: d for d in r["diagnoses"]}
        self.assertEqual(sorted(got), sorted(want))
        for name, d in got.items():
            self.assertEqual(d["anomaly"], want[name]["anomaly"])
            self.assertEqual(d["suspects"], want[name]["suspects"])
        worst = [d["anomaly"]["blocked"] + d["anomaly"]["duration"] for d in r["diagnoses"]]
        self.assertEqual(worst, sorted(worst, reverse=True))
        # the traces without a ui-main are errors of their own, not missing archives
        self.assertEqual(len(r["errors"]), len(self.names) - len(want))
        self.assertTrue(all("ui-main" in e["error"] or "thread" in e["error"] for e in r["errors"]), r["errors"])

    def test_unreadable_archives_are_named_and_the_rest_answer(self):
        bad = os.path.join(self.dir, "bad.db")
        with open(bad, "w") as f:
            f.write("not an archive\n" * 100)
        gone = os.path.join(self.dir, "gone.db")
        r = fleet.query(self.archives[:5] + [bad, gone], "traces", self.client)
        self.assertEqual(sorted(m["archive"] for m in r["missing"]), sorted([bad, gone]))
        self.assertEqual(sorted({t["archive"] for t in r["traces"]}), sorted(self.archives[:5]))

    def test_statements_about_one_node_are_refused(self):
        for stmt in ("slice back from node 3", "match node 3", "drop trace \"x\"", "show node 1"):
            with self.assertRaises(ValueError):
                fleet.query(self.archives, stmt, self.client)

    def test_a_worker_killed_mid_query(self):
        # archives live on a worker's disk: pinned to it.  One worker is
        # stopped, the query starts, and the worker is killed under it
        info = self.client.scheduler_info()["workers"]
        addrs = sorted(info)
        self.assertEqual(len(addrs), 2)
        pids = self.client.run(os.getpid)
        victim, keeper = addrs
        where = {a: (victim if i % 2 else keeper) for i, a in enumerate(self.archives)}
        os.kill(pids[victim], signal.SIGSTOP)
        box = {}
        t = threading.Thread(target=lambda: box.setdefault("r", fleet.query(
            self.archives, "traces", self.client, where=where)))
        t.start()
        time.sleep(1.0)
        self.assertTrue(t.is_alive(), "the query ended while a worker holding archives was stopped")
        os.kill(pids[victim], signal.SIGKILL)
        t.join(120)
        self.assertFalse(t.is_alive())
        r = box["r"]
        lost = sorted(a for a in self.archives if where[a] == victim)
        self.assertEqual(sorted(m["archive"] for m in r["missing"]), lost)
        self.assertEqual(sorted({t["archive"] for t in r["traces"]}),
                         sorted(a for a in self.archives if where[a] == keeper))
        # the nanny restarts the worker: wait for two, for the other tests
        self.client.wait_for_workers(2, timeout=60)

    def test_ingest_where_the_traces_are(self):
        out = os.path.join(self.dir, "ingested")
        files = [f for f in trace_files() if f.endswith(".txt")][:6]
        res = fleet.ingest(files, out, self.client, arch="x86_64", labels={"day": "2026-11-24"})
        self.assertEqual([r["file"] for r in res], files)
        self.assertEqual([r["error"] for r in res], [None] * len(files))
        dbs = sorted({r["archive"] for r in res})
        self.assertTrue(all(os.path.dirname(d) == out for d in dbs))
        r = fleet.query(dbs, "traces", self.client)
        self.assertEqual(sorted(t["name"] for t in r["traces"]), sorted(os.path.basename(f) for f in files))
        self.assertTrue(all(t["labels"]["day"] == "2026-11-24" for t in r["traces"]))
        for x in res:
            self.assertEqual(x["info"]["events"], [t for t in r["traces"] if t["name"] == x["trace"]][0]["events"])

    # ---- a fleet-wide baseline (fleet.diagnose, fleet.match) ----

    def cli(self, db, statement, trace):
        p = subprocess.run([ARGUSQ, "-d", db, "--json", "--trace", trace, statement], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        return json.loads(p.stdout)

    def home(self, trace):
        return dict((n, db) for db, n in self.names)[trace]

    def anomalies(self):
        """The traces with a ui-main whose worst step has a normal counterpart somewhere."""
        return [n for _, n in self.names if "-anomaly" in n and "raw" not in n]

    def plain(self, doc):
        """A fleet's diagnosis as one archive prints it: without the keys
        that say which archives (the baseline's, the normal steps')."""
        doc = {k: v for k, v in doc.items() if k not in ("archive", "trace")}
        if doc.get("baseline"):
            doc["baseline"] = {k: v for k, v in doc["baseline"].items() if k != "archive"}
        if doc.get("normal_sample"):
            doc["normal_sample"] = [{k: v for k, v in st.items() if k != "archive"} for st in doc["normal_sample"]]
        return doc

    def normals_elsewhere(self, anomaly):
        """The against clause of every normal run not in the anomaly's archive."""
        normals = [n for db, n in self.names if "-normal" in n and db != self.home(anomaly)]
        self.assertGreaterEqual(len(normals), 5)
        return "traces where name in (%s)" % ", ".join('"%s"' % n for n in normals)

    def test_a_fleet_wide_baseline_is_one_archives(self):
        """Against every trace of the fleet, each anomaly's diagnosis is the
        one of one archive holding every trace `against traces`: the same
        baseline (of equal ones, the fleet's first) and the same suspects;
        the baseline names the archive its trace lives in."""
        names = self.anomalies()
        self.assertGreaterEqual(len(names), 8)
        for name in names:
            with self.subTest(anomaly=name):
                r = fleet.diagnose(self.archives, 'diagnose thread "ui-main"', anomaly=self.home(name), trace=name,
                                   client=self.client)
                want = self.cli(self.fleet_order, 'diagnose thread "ui-main" against traces', name)
                self.assertEqual(r["missing"], [])
                d = r["diagnosis"]
                self.assertEqual((d["archive"], d["trace"]), (self.home(name), name))
                self.assertEqual(self.plain(d), self.plain(want))
                self.assertIsNotNone(d["baseline"])
                self.assertEqual(d["baseline"]["archive"], self.home(d["baseline"]["trace"]))
                self.assertEqual(r["baselines"][0]["trace"], d["baseline"]["trace"])

    def test_the_normal_steps_of_every_archive_pooled(self):
        """Against the normal runs of the whole fleet, spread over archives:
        the winning archive alone has a few of the normal steps like the
        anomaly, the fleet pools every archive's -- each named
        by its archive -- and judges by them as one archive holding every
        trace does."""
        anomaly = [n for n in self.anomalies() if n.endswith("-lockchain-anomaly.txt")][0]
        against = self.normals_elsewhere(anomaly)
        r = fleet.diagnose(self.archives, 'diagnose thread "ui-main"', anomaly=self.home(anomaly), trace=anomaly,
                           against=against, client=self.client)
        self.assertEqual((r["missing"], r["errors"]), ([], []))
        d = r["diagnosis"]
        won = d["baseline"]["archive"]
        alone = self.cli(self.home(anomaly), 'diagnose thread "ui-main" against %s in archive "%s"' % (against, won),
                         anomaly)
        self.assertGreater(d["normal_steps"], alone["normal_steps"])
        self.assertIsNotNone(d["outside_paths"])
        archives = {st["archive"] for st in d["normal_sample"]}
        self.assertGreater(len(archives), 1)
        self.assertTrue(archives <= set(self.archives) - {self.home(anomaly)}, archives)
        self.assertEqual(d["normal_traces"], len({(st["archive"], st["trace"]) for st in d["normal_sample"]}))
        self.assertTrue(any("normal steps" in x["evidence"] for x in d["suspects"]), d["suspects"])
        self.assertEqual(self.plain(d),
                         self.plain(self.cli(self.fleet_order, 'diagnose thread "ui-main" against ' + against, anomaly)))

    def test_the_normal_run_in_another_archive(self):
        """The anomaly in one archive, its normal run in another among many:
        against the normal runs of the whole fleet the fleet picks that run,
        and says what `against trace "normal"` says in one archive holding
        the two -- with the archives on local disks too (copy="always": the
        other archives compared with a copy of the anomaly's trace)."""
        anomaly = [n for n in self.anomalies() if n.endswith("-lockchain-anomaly.txt")][0]
        against = self.normals_elsewhere(anomaly)
        got = {}
        for copy in ("auto", "always"):
            r = fleet.diagnose(self.archives, 'diagnose thread "ui-main"', anomaly=self.home(anomaly), trace=anomaly,
                               against=against, client=self.client, copy=copy)
            self.assertEqual(r["missing"], [])
            got[copy] = r
            others = {a: v for a, v in r["via"].items() if a != self.home(anomaly)}
            self.assertEqual(set(others.values()), {"archive" if copy == "auto" else "copy"})
        self.assertEqual(got["auto"]["diagnosis"], got["always"]["diagnosis"])
        d = got["always"]["diagnosis"]
        base = d["baseline"]
        self.assertTrue(base["trace"].endswith("lockchain-normal.txt") or base["trace"].endswith("lockchain-normal.dat"),
                        base["trace"])
        self.assertNotEqual(base["archive"], self.home(anomaly))
        self.assertEqual(base["archive"], self.home(base["trace"]))
        self.assertEqual(self.plain(d),
                         self.plain(self.cli(self.fleet_order, 'diagnose thread "ui-main" against ' + against, anomaly)))
        # one archive holding the two runs
        two = os.path.join(self.dir, "two.db")
        self.assertTrue(ingest(two, self.files[anomaly], "anomaly"))
        self.assertTrue(ingest(two, self.files[base["trace"]], "normal"))
        want = self.cli(two, 'diagnose thread "ui-main" against trace "normal"', "anomaly")
        self.assertEqual(d["suspects"][0]["thread"], want["suspects"][0]["thread"])
        self.assertEqual(d["suspects"][0]["thread"], "hog")
        self.assertEqual((d["anomaly"], d["normal_path"], d["breakdown"]),
                         (want["anomaly"], want["normal_path"], want["breakdown"]))
        self.assertEqual({k: v for k, v in base.items() if k not in ("archive", "trace")},
                         {k: v for k, v in want["baseline"].items() if k != "trace"})

    def test_match_across_archives(self):
        """The union of every archive's counterparts, best first, as one
        archive holding every trace gives them, each row naming its archive."""
        anomaly = [n for n in self.anomalies() if n.endswith("-lockchain-anomaly.txt")][0]
        n = self.cli(self.all, 'diagnose thread "ui-main"', anomaly)["anomaly"]["id"]
        for stmt in ("match node %d" % n, 'match node %d in traces where name != "%s"' % (n, anomaly),
                     "match node %d limit 45" % n):
            with self.subTest(statement=stmt):
                r = fleet.match(self.archives, stmt, anomaly=self.home(anomaly), trace=anomaly, client=self.client,
                                copy="always")
                self.assertEqual(r["missing"], [])
                one = self.cli(self.fleet_order, stmt, anomaly)
                want = one["nodes"]
                self.assertEqual(r["candidates"], one["candidates"])
                self.assertEqual(len(r["nodes"]), len(want))
                self.assertEqual([(x["trace"], x["id"], x["score_exact"], x["contained"]) for x in r["nodes"]],
                                 [(x["trace"], x["id"], x["score_exact"], x["contained"]) for x in want])
                for x in r["nodes"]:
                    self.assertEqual(x["archive"], self.home(x["trace"]))
                self.assertGreater(len({x["archive"] for x in r["nodes"]}), 1)

    def test_a_fleet_wide_baseline_without_some_archives(self):
        """An archive that cannot be read is missing; the others still give
        the best of theirs.  An anomaly that is not there is an error."""
        anomaly = [n for n in self.anomalies() if n.endswith("-lockchain-anomaly.txt")][0]
        gone = os.path.join(self.dir, "gone.db")
        r = fleet.diagnose(self.archives + [gone], 'diagnose thread "ui-main"', anomaly=self.home(anomaly),
                           trace=anomaly, client=self.client)
        self.assertEqual([m["archive"] for m in r["missing"]], [gone])
        self.assertIsNotNone(r["diagnosis"]["baseline"])
        with self.assertRaises(fleet.FleetError):
            fleet.diagnose(self.archives, 'diagnose thread "no-such-thread"', anomaly=self.home(anomaly),
                           trace=anomaly, client=self.client)
        with self.assertRaises(ValueError):
            fleet.diagnose(self.archives, 'diagnose thread "ui-main" against trace "x"', anomaly=self.archives[0])
        # a trace no archive has: no baseline anywhere, said so
        r = fleet.diagnose(self.archives, 'diagnose thread "ui-main"', anomaly=self.home(anomaly), trace=anomaly,
                           against='trace "no such trace"', client=self.client)
        self.assertIsNone(r["diagnosis"])
        self.assertEqual(len(r["errors"]), 1)

    def test_the_command_with_an_anomaly(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        addr = self.client.scheduler.address
        anomaly = [n for n in self.anomalies() if n.endswith("-lockchain-anomaly.txt")][0]
        against = self.normals_elsewhere(anomaly)
        base = [sys.executable, "-m", "argusq.fleet", "--scheduler", addr, "--anomaly", self.home(anomaly),
                "--trace", anomaly, "--against", against, "--copy", "always"]
        p = subprocess.run(base + ["--json"] + self.archives + ['diagnose thread "ui-main"'],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(self.plain(doc["diagnosis"]),
                         self.plain(self.cli(self.fleet_order, 'diagnose thread "ui-main" against ' + against, anomaly)))
        p = subprocess.run(base + self.archives + ['diagnose thread "ui-main"'],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn('in archive "%s"' % doc["diagnosis"]["baseline"]["archive"], p.stdout)
        self.assertIn("1. hog", p.stdout)
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", "--scheduler", addr, "--anomaly", self.home(anomaly),
                            "--trace", anomaly, "--json"] + self.archives + ["match node %d" % doc["diagnosis"]["anomaly"]["id"]],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len(json.loads(p.stdout)["nodes"]), 20)

    def test_the_command(self):
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        addr = self.client.scheduler.address
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", "--scheduler", addr, "--json"] +
                           self.archives[:4] + ["find nodes order by duration desc limit 3"],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        doc = json.loads(p.stdout)
        self.assertEqual(len(doc["nodes"]), 3)
        d = [n["duration"] for n in doc["nodes"]]
        self.assertEqual(d, sorted(d, reverse=True))
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", "--scheduler", addr] +
                           self.archives[:2] + [os.path.join(self.dir, "nope.db"), "traces"],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 1)
        self.assertIn("nope.db: missing", p.stderr)
        head = p.stdout.splitlines()[0].split()
        self.assertEqual(head[:2], ["archive", "trace"])
        # the table reads as argusq's: times and durations, a diagnosis a row
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", "--scheduler", addr] + self.archives[:4] +
                           ["find nodes order by duration desc limit 3"],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr)
        lines = p.stdout.splitlines()
        cols = lines[0].split()
        for line, n in zip(lines[1:], doc["nodes"]):
            cell = dict(zip(cols, line.split()))
            self.assertEqual(cell["begin"], "%d.%06d" % (n["begin"] // 10**9, n["begin"] % 10**9 // 1000))
            self.assertRegex(cell["duration"], r"^[0-9.]+(ns|us|ms|s)$")
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", "--scheduler", addr] + self.archives[:2] +
                           ['diagnose thread "ui-main"'], capture_output=True, text=True, env=env, timeout=300)
        lines = p.stdout.splitlines()
        self.assertEqual(lines[0].split()[:4], ["archive", "trace", "node", "thread"])
        self.assertIn("suspect", lines[0].split())
        self.assertTrue(all(len(x) < 300 for x in lines), max(len(x) for x in lines))
        p = subprocess.run([sys.executable, "-m", "argusq.fleet", self.archives[0], "slice back from node 1"],
                           capture_output=True, text=True, env=env, timeout=120)
        self.assertEqual(p.returncode, 2)
        self.assertIn("one node of one trace", p.stderr)


if __name__ == "__main__":
    unittest.main()
