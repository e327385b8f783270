#!/usr/bin/python3
"""bench/fleet_bench.py -- the fleet line of `make bench`: one
statement over 20 archives as Dask tasks on two worker processes (a
LocalCluster on this machine), against the same statements run one by one
with the argusq command over the same archives.

The 20 archives are built as python/tests/test_fleet.py builds them: every
trace of tests/traces, ../shared/traces and ../shared/foreign the reader
takes, dealt out in turn.  Each statement is answered once untimed (the
workers import the bindings, the page cache fills), then timed --runs
times, each way:

  fleet     argusq.fleet.query (or fleet.diagnose) on the running cluster,
            from submitting the tasks to the merged answer
  cli       what a shell loop does: `argusq -d ARCHIVE --json --trace T
            STATEMENT` for every trace of every archive (the statements the
            fleet runs per trace), or once per archive for the fleet-wide
            baseline (`... in archive "ARCHIVE"` from the anomaly's archive)

Run by Debian's /usr/bin/python3 (its python3-distributed); bench/run.py
starts it and puts its JSON (on stdout) into bench/results.json.  Standard
library and Dask only."""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))

STATEMENTS = [
    ("find, order by, limit", "find nodes where blocked > 1ms order by blocked desc limit 25"),
    ("diagnose thread", 'diagnose thread "ui-main"'),
]


def log(msg):
    print("bench: fleet: " + msg, file=sys.stderr, flush=True)


def trace_files(shared):
    """The traces the fleet holds, as test_fleet.py lists them."""
    t = os.path.join(ROOT, "tests", "traces")
    files = sorted(glob.glob(os.path.join(t, "*.txt")) + glob.glob(os.path.join(t, "*.trace")) +
                   glob.glob(os.path.join(t, "*.dat")))
    files += sorted(f for f in glob.glob(os.path.join(shared, "traces", "*")) if f.endswith((".txt", ".dat", ".trace")))
    files += sorted(glob.glob(os.path.join(shared, "foreign", "*.txt")) +
                    glob.glob(os.path.join(shared, "foreign", "*.dat")))
    return files


def build(exe, shared, work, n):
    """n archives in work/, the traces dealt out in turn: [(archive, [traces])]."""
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    archives = [os.path.join(work, "a%02d.db" % i) for i in range(n)]
    held = {a: [] for a in archives}
    i = 0
    for f in trace_files(shared):
        name = "%02d-%s" % (i, os.path.basename(f))
        db = archives[i % n]
        p = subprocess.run([exe, "-d", db, "ingest", f, "--name", name, "--arch", "x86_64"], capture_output=True)
        if p.returncode != 0:
            continue  # a foreign file the readers refuse
        held[db].append(name)
        i += 1
    return [(a, held[a]) for a in archives if held[a]]


def cli_loop(exe, jobs):
    """Every (archive, trace, statement) as its own argusq process, one
    after another: the wall time of the loop and how many answered."""
    t0 = time.perf_counter()
    ok = 0
    for db, trace, stmt in jobs:
        args = [exe, "-d", db, "--json"] + (["--trace", trace] if trace else []) + [stmt]
        ok += subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
    return time.perf_counter() - t0, ok


def timed(fn, runs):
    fn()  # untimed: imports on the workers, page cache
    walls = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        walls.append(time.perf_counter() - t0)
    return walls


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--argusq", default=os.path.join(ROOT, "build", "argusq"))
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--work", default=os.path.join(ROOT, "bench", "data", "work", "fleet"))
    ap.add_argument("--archives", type=int, default=20)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    try:
        from argusq import fleet
        import distributed  # noqa: F401
    except ImportError as e:
        print(json.dumps({"skipped": "Dask is not importable by %s (%s): python3-distributed" % (sys.executable, e)}))
        return 0
    log("building %d archives" % args.archives)
    t0 = time.perf_counter()
    fl = build(args.argusq, args.shared, args.work, args.archives)
    build_s = time.perf_counter() - t0
    archives = [a for a, _ in fl]
    ntraces = sum(len(t) for _, t in fl)
    res = {"archives": len(archives), "traces": ntraces, "workers": args.workers, "runs": args.runs,
           "build_s": build_s, "python": sys.executable, "dask": distributed.__version__, "statements": {}}
    log("%d traces in %d archives (%.1f s); starting a LocalCluster of %d workers"
        % (ntraces, len(archives), build_s, args.workers))
    t0 = time.perf_counter()
    client = fleet.local_client(args.workers)
    res["cluster_start_s"] = time.perf_counter() - t0
    try:
        for label, stmt in STATEMENTS:
            log(label)
            answer = {}

            def go(stmt=stmt):
                answer["r"] = fleet.query(archives, stmt, client)

            walls = timed(go, args.runs)
            r = answer["r"]
            jobs = [(db, t, stmt) for db, names in fl for t in names]
            cli = [cli_loop(args.argusq, jobs) for _ in range(args.runs)]
            key = "nodes" if "nodes" in r else "diagnoses"
            res["statements"][label] = {
                "statement": stmt, "fleet_runs": [round(w, 4) for w in walls], "fleet_s": statistics.median(walls),
                "cli_runs": [round(c[0], 4) for c in cli], "cli_s": statistics.median(c[0] for c in cli),
                "cli_processes": len(jobs), "cli_answered": cli[0][1], "rows": len(r[key]),
                "missing": len(r["missing"]), "errors": len(r["errors"])}
        # the fleet-wide baseline: one anomaly against every archive's traces
        anomaly = next(((db, t) for db, names in fl for t in names if t.endswith("-lockchain-anomaly.txt")), None)
        if anomaly:
            label = "fleet-wide baseline (diagnose)"
            log(label)
            stmt = 'diagnose thread "ui-main"'
            answer = {}

            def base():
                answer["r"] = fleet.diagnose(archives, stmt, anomaly=anomaly[0], trace=anomaly[1], client=client)

            walls = timed(base, args.runs)
            r = answer["r"]
            jobs = [(anomaly[0], anomaly[1], stmt + " against traces" +
                     ("" if db == anomaly[0] else ' in archive "%s"' % db)) for db in archives]
            cli = [cli_loop(args.argusq, jobs) for _ in range(args.runs)]
            bl = r["diagnosis"]["baseline"] if r["diagnosis"] else None
            res["statements"][label] = {
                "statement": stmt + " against traces (every archive)", "fleet_runs": [round(w, 4) for w in walls],
                "fleet_s": statistics.median(walls), "cli_runs": [round(c[0], 4) for c in cli],
                "cli_s": statistics.median(c[0] for c in cli), "cli_processes": len(jobs),
                "cli_answered": cli[0][1], "rows": 1 if r["diagnosis"] else 0, "missing": len(r["missing"]),
                "errors": len(r["errors"]),
                "baseline": "%s of %s" % (bl["trace"], os.path.basename(bl["archive"])) if bl else None}
        for v in res["statements"].values():
            v["ratio_fleet_over_cli"] = v["fleet_s"] / v["cli_s"] if v["cli_s"] else None
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()
        shutil.rmtree(args.work, ignore_errors=True)
    print(json.dumps(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
