#!/usr/bin/env python3
"""bench/run.py -- `make bench`: argusq at the paper's scale, beside
trace-cmd report and SQLite.  Standard library only.

Inputs (built when missing, in bench/data/, which git ignores):
  argus-N-HASH.trace      bench/gen_argus, N events (and N/10 for the RSS check)
  pipeline.txt            ../shared/traces/pipeline.txt.xz, decompressed
  pipeline-xK-HASH.txt    bench/scale_ftrace: pipeline.txt K times, shifted in time

Measures (medians over --runs runs, each ingest into a fresh archive):
  ingest of the ftrace text and of the Argus traces: wall, cpu, events/s,
  MB/s, peak RSS (ru_maxrss of the child; anonymous and file-backed peaks
  sampled from /proc), archive size on disk (allocated blocks);
  trace-cmd report -l of pipeline.dat against argusq ingest of the same
  trace; `rebuild graph` on the big archive (the graph's share of ingest);
  slice back depth 20, whole process (p50/p99 over random start nodes, their
  first slice and again) and in-process (one -f script of many slices);
  find, match, diagnose;
  SQLite: the same events, nodes and edges loaded with indexes (the load
  timed), and the backward slice as a recursive CTE from the same nodes;
  the fleet (bench/fleet_bench.py, under Debian's /usr/bin/python3 and its
  python3-distributed): statements over 20 archives on a LocalCluster of 2
  Dask workers, against the same statements run one by one with argusq
  (skipped, saying why, when Dask is not importable).

Prints a table and writes bench/results.json.  `--only fleet` measures the
fleet alone and puts it into the results file there is.  Targets set
against a peer of the same run, ratios and sizes pass or miss; targets in
events/s or ms are shown and not counted (they measure the machine as
much).  Each row is set beside the last run on this machine
(bench/data/baseline-MACHINE.json), which the run then replaces.
"""
import argparse
import csv
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

# The bench's jobs are modules beside this file (bench/ is not a package):
# bench_harness (paths, timed child processes, argusq, SLOW), bench_inputs
# (the traces built in bench/data/), bench_peers (SQLite, DuckDB) and
# bench_report (the table).  This file parses the arguments and runs the
# parts, in the order the docstring gives.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import bench_harness  # noqa: E402  (its SLOW is set from --slow)
import bench_inputs  # noqa: E402
from bench_harness import (BENCH, DATA, ROOT, WORK, MiB, Argusq, build_file, log, med,  # noqa: E402
                           pct, rm_archive, run, settle, src_hash)
from bench_inputs import inputs, perfetto_copies  # noqa: E402
from bench_peers import db_peers_part  # noqa: E402
from bench_report import fleet_rows, perfetto_rows, report  # noqa: E402


# ---------------------------------------------------------------- main

def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--argusq", default=os.path.join(ROOT, "build", "argusq"))
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "bench"), help="gen_argus and scale_ftrace")
    ap.add_argument("--shared", default=os.path.join(os.path.dirname(ROOT), "shared"))
    ap.add_argument("--events", type=int, default=19000000)
    ap.add_argument("--ftrace-copies", type=int, default=18)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--slices", type=int, default=50, help="start nodes for whole-process slices")
    ap.add_argument("--script-slices", type=int, default=500, help="slices in the in-process script")
    ap.add_argument("--slow", type=float, default=bench_harness.SLOW,
                    help="seconds: a run longer than this is not repeated (keeps the bench under 30 minutes)")
    ap.add_argument("--no-sqlite", action="store_true")
    ap.add_argument("--no-duckdb", action="store_true")
    ap.add_argument("--out", default=os.path.join(BENCH, "results.json"))
    ap.add_argument("--no-fleet", action="store_true")
    ap.add_argument("--normals", type=int, default=100,
                    help="normal traces of the bench workload in one archive for diagnose against them (0: skip)")
    ap.add_argument("--normals-events", type=int, default=200000, help="events of each of them")
    ap.add_argument("--fleet-python", default="/usr/bin/python3", help="a python3 with Dask (python3-distributed)")
    ap.add_argument("--only", choices=("fleet", "perfetto"),
                    help="measure this part alone (fleet: into the results file there is; perfetto: printed)")
    ap.add_argument("--perfetto-copies", type=int, default=80, help="copies of the Android 11 Perfetto trace")
    ap.add_argument("--perfetto-compact-copies", type=int, default=40,
                    help="copies of the Android 13 Perfetto trace (compact_sched)")
    return ap.parse_args()


def main():
    args = parse_args()
    bench_harness.SLOW = args.slow
    if args.only == "fleet":
        return fleet_only(args)
    if args.only == "perfetto":
        return perfetto_only(args)
    t_start = time.perf_counter()
    load0 = list(os.getloadavg())  # other work on the machine makes wall times noisy; cpu times less so

    ins = inputs(args)
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    # a copy of the binary: a rebuild during the run must not change it
    exe = os.path.join(WORK, "argusq")
    shutil.copy2(args.argusq, exe)
    aq = Argusq(exe)
    res = {"config": {"events": args.events, "ftrace_copies": args.ftrace_copies, "runs": args.runs,
                      "slices": args.slices, "script_slices": args.script_slices,
                      "cpus": os.cpu_count(), "argusq": os.path.relpath(os.path.abspath(args.argusq), ROOT)}}
    try:
        res["config"]["commit"] = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                                 capture_output=True, text=True).stdout.strip()
    except OSError:
        pass

    # -- ingest: ftrace text at scale
    log("ingest: ftrace text, %d copies of pipeline.txt" % args.ftrace_copies)
    res["ftrace_ingest"] = aq.ingest(os.path.join(WORK, "ftrace.db"), ins["ftrace"], "ftrace", args.runs)

    # -- beside trace-cmd report, on pipeline.dat
    res["trace_cmd"] = trace_cmd_part(args, aq, ins)

    # -- every .dat beside us: read whole, with the records' nanoseconds
    res["dat_files"] = dat_files_part(args, aq)

    # -- CTF: ingest of LTTng's many-threads trace beside babeltrace2 printing it
    res["ctf"] = ctf_part(args, aq)

    # -- Perfetto: ingest of the Android 11 trace of ../shared
    # (full FtraceEvents), its ftrace bundles repeated to about 2.9M events
    # (the file itself, 36k events, is read in 0.04 s: the archive's
    # set-up, not the reader), and of the Android 13 one (compact_sched,
    # what Android records by default now) repeated to 2.4M
    res["perfetto"] = perfetto_part(args, aq)
    res["perfetto_compact"] = perfetto_compact_part(args, aq)

    # -- ingest: Argus format, two sizes (RSS flat as the trace grows)
    S, A = argus_ingest_part(args, aq, ins, res)
    nnodes = res["argus_ingest"]["nodes"]

    # -- the price of crash safety: batches synced (MDB_NOMETASYNC, the
    # policy) against unsynced batches (ARGUSQ_BATCH_SYNC=0, as before),
    # one run each, alternated with the runs above
    res["argus_ingest_nosync"] = nosync_part(args, aq, ins)

    # -- graph construction: rebuild graph on the big archive
    res["graph_rebuild"] = graph_part(args, aq, A, res)

    # -- slices
    res["slice"], starts, many, aq_sets = slice_part(args, aq, A, nnodes)

    # -- find, match, diagnose
    res["queries"] = queries_part(args, aq, A)

    # -- memory flat with the trace: the statements above and
    # rebuild graph on the small archive too, their peak RSS beside the big
    # one's (the same node choice: ws.main's longest wait)
    log("memory: rebuild graph, compare path, match, diagnose, critical path on the small archive")
    res["flat"] = {"small": flat_part(aq, S, args.runs), "big": flat_part(aq, A, args.runs, rebuild=False)}
    res["flat"]["big"]["rebuild graph"] = res["graph_rebuild"]["peak_rss_bytes"]

    # -- SQLite, then DuckDB, the second database peer
    if not args.no_sqlite:
        db_peers_part(args, aq, A, nnodes, starts, many, aq_sets, res)

    # -- diagnose against many normal runs
    if args.normals:
        res["normals"] = normals_part(args, aq, ins["argus_normal"])

    # -- the fleet: 20 archives on two Dask workers, against the CLI
    if not args.no_fleet:
        res["fleet"] = fleet_part(args, exe)

    res["total_bench_s"] = time.perf_counter() - t_start
    res["config"]["loadavg_start"] = load0
    res["config"]["loadavg_end"] = list(os.getloadavg())
    report(res)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=2)
    log("wrote %s (%.0f s in all)" % (os.path.relpath(args.out, ROOT), res["total_bench_s"]))
    shutil.rmtree(WORK, ignore_errors=True)


# ---------------------------------------------------------------- the parts, in main's order

def trace_cmd_part(args, aq, ins):
    """pipeline.dat: trace-cmd report -l against argusq ingest of the same
    trace (of pipeline.txt when this argusq reads no .dat), alternated."""
    log("peer: trace-cmd report -l of pipeline.dat")
    peer = {"dat": os.path.relpath(ins["pipeline_dat"], ROOT)}
    probe = os.path.join(WORK, "probe.db")
    rm_archive(probe)
    pr = run([aq.exe, "-d", probe, "ingest", ins["pipeline_dat"], "--name", "probe", "--json"], check=False)
    rm_archive(probe)
    same = ins["pipeline_dat"] if pr.rc == 0 else ins["pipeline_txt"]
    peer["argusq_input"] = "pipeline.dat" if pr.rc == 0 else "pipeline.txt (trace-cmd report -l text; no .dat ingest)"
    # alternate the two, so that other load on the machine weighs on both alike
    tr, igs = [], []
    have_tc = shutil.which("trace-cmd") and os.path.exists(ins["pipeline_dat"])
    for i in range(args.runs):
        if have_tc:
            tr.append(run(["trace-cmd", "report", "-l", "-i", ins["pipeline_dat"]], stdout=subprocess.DEVNULL))
        igs.append(aq.ingest(os.path.join(WORK, "pipeline.db"), same, "pipeline", 1, first=i + 1))
    ig = dict(igs[-1])
    for k in ("wall_s", "cpu_s", "archive_bytes"):
        ig[k] = med([x[k] for x in igs])
    for k in ("peak_rss_bytes", "peak_rss_anon_bytes", "peak_rss_file_bytes"):
        ig[k] = max(x[k] for x in igs)
    ig["runs"] = [x["runs"][0] for x in igs]
    ig["events_per_s"] = ig["events"] / ig["wall_s"]
    ig["events_per_cpu_s"] = ig["events"] / ig["cpu_s"] if ig["cpu_s"] else None
    ig["mb_per_s"] = ig["input_bytes"] / 1e6 / ig["wall_s"]
    peer["argusq_ingest"] = ig
    peer["events"] = ig["events"]
    if tr:
        peer["trace_cmd_wall_s"] = med([r.wall for r in tr])
        peer["trace_cmd_cpu_s"] = med([r.cpu for r in tr])
        peer["trace_cmd_runs"] = [round(r.wall, 3) for r in tr]
        peer["trace_cmd_peak_rss_bytes"] = max(r.maxrss for r in tr)
        peer["trace_cmd_events_per_s"] = ig["events"] / peer["trace_cmd_wall_s"]
        peer["ratio_argusq_over_trace_cmd"] = ig["wall_s"] / peer["trace_cmd_wall_s"]
        peer["ratio_argusq_over_trace_cmd_cpu"] = ig["cpu_s"] / peer["trace_cmd_cpu_s"]
    return peer


def dat_files_part(args, aq):
    """Each .dat of ../shared/traces and ../shared/foreign read whole:
    its events, and how many have a timestamp finer than a microsecond."""
    log("trace.dat files of ../shared: events and nanosecond timestamps")
    dats = []
    for sub in ("traces", "foreign"):
        d = os.path.join(args.shared, sub)
        for f in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            if not f.endswith(".dat"):
                continue
            db = os.path.join(WORK, "dat.db")
            rm_archive(db)
            r = run([aq.exe, "-d", db, "ingest", os.path.join(d, f), "--name", "d", "--json"], check=False)
            row = {"file": sub + "/" + f, "ok": r.rc == 0}
            if r.rc == 0:
                # through a file, a row at a time: the whole CSV in this process
                # would swell it, and the children it forks next would report
                # its size as theirs (ru_maxrss counts a child from the fork)
                with tempfile.TemporaryFile("w+") as tf:
                    run([aq.exe, "-d", db, "--format", "csv", "find events"], stdout=tf)
                    tf.seek(0)
                    rows = csv.reader(tf)  # a value may hold line breaks (a stack trace)
                    next(rows, None)
                    ts = [int(row[1]) for row in rows if row]
                row["events"] = len(ts)
                row["sub_microsecond"] = sum(t % 1000 != 0 for t in ts)
            rm_archive(db)
            dats.append(row)
    return dats


def ctf_part(args, aq):
    """argusq ingest of LTTng's many-threads CTF trace against babeltrace2
    printing it, alternated (skipped, saying why, without the trace or
    babeltrace2)."""
    ctf = os.path.join(args.shared, "foreign-lttng", "tracecompass-test-traces-many-threads")
    if os.path.isdir(ctf) and shutil.which("babeltrace2"):
        log("peer: babeltrace2 of the many-threads CTF trace")
        bt, igs = [], []
        for i in range(args.runs):  # alternated, as with trace-cmd above
            bt.append(run(["babeltrace2", ctf], stdout=subprocess.DEVNULL))
            igs.append(aq.ingest(os.path.join(WORK, "ctf.db"), ctf, "ctf", 1, first=i + 1))
        c = {"trace": "foreign-lttng/" + os.path.basename(ctf), "events": igs[-1]["events"],
             "argusq_wall_s": med([x["wall_s"] for x in igs]), "argusq_cpu_s": med([x["cpu_s"] for x in igs]),
             "argusq_runs": [x["runs"][0] for x in igs], "babeltrace2_wall_s": med([r.wall for r in bt]),
             "babeltrace2_cpu_s": med([r.cpu for r in bt]), "babeltrace2_runs": [round(r.wall, 3) for r in bt]}
        c["ratio_argusq_over_babeltrace2"] = c["argusq_wall_s"] / c["babeltrace2_wall_s"]
        return c
    else:
        return {"skipped": "no %s or no babeltrace2 (make bench installs it)" % ctf}


def perfetto_part(args, aq):
    return perfetto_ingest(args, aq, "ms-perftools-linux-android-test_trace.perfetto-trace", args.perfetto_copies,
                           "the Android 11 trace (full FtraceEvents)", "perfetto")


def perfetto_compact_part(args, aq):
    """The form Android 12 and later record by default: compact_sched
    switches and wakings, with sched_blocked_reason and atrace (the Android
    13 startup trace of ../shared)."""
    return perfetto_ingest(args, aq, "Perfetto-Skills-api32_startup_warm.perfetto-trace",
                           args.perfetto_compact_copies, "the Android 13 trace (compact_sched)", "perfetto-compact")


def perfetto_ingest(args, aq, name, copies, what, label):
    src = os.path.join(args.shared, "foreign-perfetto", name)
    if not os.path.exists(src):
        return {"skipped": "no %s" % src}
    os.makedirs(DATA, exist_ok=True)
    # the file's name carries the hash of the generator's source (bench_inputs.py)
    gh = src_hash(bench_inputs.__file__)
    big = build_file(os.path.join(DATA, "%s-x%d-%s.perfetto-trace" % (label, copies, gh)),
                     lambda tmp: perfetto_copies(src, tmp, copies), "%d copies of %s" % (copies, name))
    log("ingest: Perfetto, %d copies of %s" % (copies, what))
    return aq.ingest(os.path.join(WORK, label + ".db"), big, label, args.runs)


def argus_ingest_part(args, aq, ins, res):
    """The Argus traces, small and big, ingested into archives that are
    kept for the parts after: res["argus_ingest_small"] and
    res["argus_ingest"]; the archives' paths."""
    log("ingest: Argus trace, %s events (small)" % os.path.basename(ins["argus_small"]).split("-")[1])
    S = os.path.join(WORK, "small.db")
    res["argus_ingest_small"] = aq.ingest(S, ins["argus_small"], "argus-small", args.runs, keep=True)
    log("ingest: Argus trace, %d events" % args.events)
    A = os.path.join(WORK, "argus.db")
    res["argus_ingest"] = aq.ingest(A, ins["argus"], "argus", args.runs, keep=True)
    return S, A


def nosync_part(args, aq, ins):
    """The big Argus trace ingested once with batches unsynced."""
    log("ingest: Argus trace, %d events, batches unsynced (ARGUSQ_BATCH_SYNC=0)" % args.events)
    U = os.path.join(WORK, "argus-nosync.db")
    os.environ["ARGUSQ_BATCH_SYNC"] = "0"
    try:
        return aq.ingest(U, ins["argus"], "argus", 1)
    finally:
        del os.environ["ARGUSQ_BATCH_SYNC"]


def graph_part(args, aq, A, res):
    """rebuild graph on the big archive A, timed (its share of
    res["argus_ingest"])."""
    log("graph: rebuild graph")
    rb = []
    for i in range(args.runs):
        settle()
        rb.append(run([aq.exe, "-d", A, "rebuild graph"], stdout=subprocess.DEVNULL))
        log("  rebuild graph run %d: %.2f s, %.0f MiB peak RSS" % (i + 1, rb[-1].wall, rb[-1].maxrss / MiB))
        if rb[-1].wall > bench_harness.SLOW:
            break
    return {"wall_s": med([r.wall for r in rb]), "runs": [round(r.wall, 3) for r in rb],
            "peak_rss_bytes": max(r.maxrss for r in rb),
            "peak_rss_anon_bytes": max(r.anon for r in rb),
            "peak_rss_file_bytes": max(r.file for r in rb),
            "share_of_ingest": med([r.wall for r in rb]) / res["argus_ingest"]["wall_s"]}


def slice_part(args, aq, A, nnodes):
    """slice back depth 20 from random start nodes of A: each in a process
    (first touch, then again), and a script of many in one process.  The
    results, the start nodes, the script's nodes and the start nodes'
    slices (node id sets), which the database peers are set against."""
    rng = random.Random(20240601)
    starts = rng.sample(range(1, nnodes + 1), min(args.slices, nnodes))
    many = [rng.randint(1, nnodes) for _ in range(args.script_slices)]
    log("slice: %d whole-process slices, one script of %d" % (len(starts), len(many)))
    stmt = "slice back from node %d depth 20"
    run([aq.exe, "-d", A, stmt % starts[0]], stdout=subprocess.DEVNULL, sample=False)  # page cache
    # first the start nodes once each (their pages touched for the first time
    # since the archive was written), then all again (warm)
    first = [aq.q(A, stmt % n, stdout=subprocess.DEVNULL).wall for n in starts]
    whole = [aq.q(A, stmt % n, stdout=subprocess.DEVNULL).wall for n in starts]
    spawn = [run(["true"], stdout=subprocess.DEVNULL, sample=False).wall for _ in range(20)]
    script = os.path.join(WORK, "slices.q")
    with open(script, "w") as f:
        f.writelines((stmt % n) + ";\n" for n in many)
    inproc = [aq.script(A, script).wall / len(many) for _ in range(args.runs)]
    # what the slices hold (one untimed --json script over the same start nodes)
    sizes_script = os.path.join(WORK, "sizes.q")
    with open(sizes_script, "w") as f:
        f.writelines((stmt % n) + ";\n" for n in starts)
    sz = aq.script(A, sizes_script, fmt="json", stdout=None)
    aq_sets = []
    for line in sz.out.splitlines():
        d = json.loads(line)
        aq_sets.append({n["id"] for n in d["nodes"]})
    sl = {
        "start_nodes": starts,
        "whole_process_p50_s": pct(whole, 50), "whole_process_p99_s": pct(whole, 99),
        "whole_process_max_s": max(whole), "spawn_true_p50_s": pct(spawn, 50),
        "first_touch_p50_s": pct(first, 50), "first_touch_p99_s": pct(first, 99),
        "in_process_mean_s": med(inproc), "in_process_statements": len(many),
        "nodes_mean": statistics.mean(len(s) for s in aq_sets), "nodes_max": max(len(s) for s in aq_sets),
    }
    return sl, starts, many, aq_sets


def queries_part(args, aq, A):
    """find, match, diagnose and critical path on A, each in a process
    (on ws.main's longest wait)."""
    log("find, match, diagnose")
    fstmt = 'find nodes where thread = "ws.main" order by blocked desc limit 1'
    fr = [aq.q(A, fstmt, fmt="json") for _ in range(max(3, args.runs))]
    node = json.loads(fr[0].out)["nodes"][0]["id"]
    q = {"find": {"statement": fstmt, "runs": [r.wall for r in fr]}}
    for name, s in (("match", "match node %d" % node), ("diagnose", "diagnose node %d" % node),
                    ("critical path", "critical path of node %d" % node)):
        rs = [aq.q(A, s, stdout=subprocess.DEVNULL) for _ in range(max(3, args.runs))]
        q[name] = {"statement": s, "runs": [r.wall for r in rs], "peak_rss_bytes": max(r.maxrss for r in rs)}
    for v in q.values():
        v["p50_s"] = med(v["runs"])
        v["max_s"] = max(v["runs"])
        v["runs"] = [round(x, 5) for x in v["runs"]]
    return q


# ---------------------------------------------------------------- memory flat with the trace

def flat_part(aq, archive, runs, rebuild=True):
    """Peak RSS (bytes, the largest of the runs) of each statement whose
    memory must stay flat as the trace grows, on one archive."""
    fstmt = 'find nodes where thread = "ws.main" order by blocked desc limit 2'
    nodes = [n["id"] for n in json.loads(aq.q(archive, fstmt, fmt="json").out)["nodes"]]
    node, other = nodes[0], nodes[-1]
    stmts = {"compare path": "compare path (slice back from node %d depth 20) with (slice back from node %d depth 20)"
                             % (other, node),
             "match": "match node %d" % node, "diagnose": "diagnose node %d" % node,
             "critical path": "critical path of node %d" % node}
    out = {}
    for name, st in stmts.items():
        out[name] = max(aq.q(archive, st, stdout=subprocess.DEVNULL).maxrss for _ in range(max(2, runs)))
    if rebuild:
        rb = []
        for _ in range(runs):
            settle()
            rb.append(run([aq.exe, "-d", archive, "rebuild graph"], stdout=subprocess.DEVNULL))
        out["rebuild graph"] = max(r.maxrss for r in rb)
    return out


# ---------------------------------------------------------------- many normal runs

def normals_part(args, aq, trace):
    """args.normals copies of a small bench trace labelled run=normal and one
    more, "slow", in one archive: diagnose of the slow one's ws.main longest
    wait against all of them (every normal step like it)."""
    db = os.path.join(WORK, "normals.db")
    rm_archive(db)
    log("normals: %d traces of %d events in one archive" % (args.normals, args.normals_events))
    t0 = time.perf_counter()
    for i in range(args.normals):
        run([aq.exe, "-d", db, "ingest", trace, "--name", "n%03d" % i, "--label", "run=normal"],
            stdout=subprocess.DEVNULL)
    run([aq.exe, "-d", db, "ingest", trace, "--name", "slow", "--label", "run=slow"], stdout=subprocess.DEVNULL)
    log("  %.1f s" % (time.perf_counter() - t0))
    found = run([aq.exe, "-d", db, "--trace", "slow", "--json",
                 'find nodes where thread = "ws.main" order by blocked desc limit 1'])
    node = json.loads(found.out)["nodes"][0]["id"]
    stmt = 'diagnose node %d against traces where label.run = "normal"' % node
    rs = [run([aq.exe, "-d", db, "--trace", "slow", "--json", stmt]) for _ in range(max(3, args.runs))]
    d = json.loads(rs[0].out)
    out = {"statement": stmt, "traces": args.normals, "events_each": args.normals_events,
           "normal_steps": d.get("normal_steps"), "runs": [round(r.wall, 5) for r in rs],
           "p50_s": med([r.wall for r in rs]), "max_s": max(r.wall for r in rs),
           "peak_rss_bytes": max(r.maxrss for r in rs)}
    rm_archive(db)
    return out


# ---------------------------------------------------------------- the fleet

def fleet_part(args, exe):
    """bench/fleet_bench.py under a python3 with Dask: its JSON, or
    {"skipped": why}."""
    log("fleet: 20 archives, a LocalCluster of 2 Dask workers, against the CLI one by one")
    if not os.access(args.fleet_python, os.X_OK):
        why = "%s is not there (Debian's python3, with python3-distributed)" % args.fleet_python
        log("fleet: skipped: " + why)
        return {"skipped": why}
    env = dict(os.environ, ARGUSQ_LIB=os.environ.get("ARGUSQ_LIB") or os.path.join(ROOT, "build", "libargusq.so"))
    p = subprocess.run([args.fleet_python, os.path.join(BENCH, "fleet_bench.py"), "--argusq", exe,
                        "--shared", args.shared, "--runs", str(max(3, args.runs)),
                        "--work", os.path.join(WORK, "fleet")], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        why = "fleet_bench.py failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-500:])
        log("fleet: skipped: " + why)
        return {"skipped": why}
    try:
        out = json.loads(p.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"skipped": "fleet_bench.py said no JSON: %s" % p.stdout[-300:]}
    if "skipped" in out:
        log("fleet: skipped: " + out["skipped"])
    out["commit"] = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty"],
                                   capture_output=True, text=True).stdout.strip()
    return out


# ---------------------------------------------------------------- --only

def perfetto_only(args):
    """--only perfetto: the Perfetto ingest line alone, printed (no results file written)."""
    os.makedirs(WORK, exist_ok=True)
    aq = Argusq(args.argusq)
    res = {"perfetto": perfetto_part(args, aq), "perfetto_compact": perfetto_compact_part(args, aq)}
    rows = []
    perfetto_rows(res, lambda what, value, target="", ok=None, **kw: rows.append((what, value, target, ok)))
    for what, value, target, ok in rows:
        print("%s  %s  %s %s" % (what, value, target, "" if ok is None else ("ok" if ok else "MISSED")))
    return 0


def fleet_only(args):
    """--only fleet: the fleet part alone, printed, and put into the results
    file there is (made if there is none)."""
    os.makedirs(WORK, exist_ok=True)
    exe = os.path.join(WORK, "argusq-fleet-bench")
    shutil.copy2(args.argusq, exe)
    try:
        f = fleet_part(args, exe)
    finally:
        os.unlink(exe)
    res = {}
    if os.path.exists(args.out):
        with open(args.out) as fh:
            res = json.load(fh)
    res["fleet"] = f
    rows = []
    fleet_rows(res, lambda what, value, target="", ok=None, **kw: rows.append((what, value)))
    w = max(len(r[0]) for r in rows)
    print()
    for what, value in rows:
        print("%-*s  %s" % (w, what, value))
    with open(args.out, "w") as fh:
        json.dump(res, fh, indent=2)
    log("wrote the fleet into %s" % os.path.relpath(args.out, ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
