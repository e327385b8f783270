"""bench/bench_peers.py -- the database peers of `make bench`
(bench/run.py): SQLite (the sqlite3 shell and module) and DuckDB (its
Node API, bench/duckdb_peer.mjs), loaded with the same events, nodes and
edges exported from the argusq archive, and the same backward slices.
Standard library only (DuckDB through node and npm when installed).
"""
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import time

import bench_harness
from bench_harness import ROOT, WORK, disk_bytes, log, med, pct, rm_archive, run


# ---------------------------------------------------------------- SQLite

SQLITE_SLICE = """WITH RECURSIVE s(n, d) AS (
  SELECT {start}, 0
  UNION
  SELECT e.from_node, s.d + 1 FROM edges e JOIN s ON e.to_node = s.n
  WHERE s.d < {depth} AND e.kind <> 'weak')
SELECT n.*, min(s.d) AS depth FROM s JOIN nodes n ON n.id = s.n GROUP BY s.n ORDER BY depth, n.id"""


def csv_records(f):
    """Yields the records (as text with their newline) of an RFC 4180 file
    read line by line: a record continues while its quotes are unbalanced."""
    buf = ""
    for line in f:
        buf += line
        if buf.count('"') % 2 == 0:
            yield buf
            buf = ""
    if buf:
        yield buf


def export_for_sqlite(aq, archive, d, nnodes):
    """events.csv, nodes.csv, edges.csv of the archive's trace, from argusq
    itself; the events get the pid of their thread (from the thread nodes)
    when the CSV has none.  Returns the column lists and how edges came."""
    os.makedirs(d, exist_ok=True)
    nodes_csv = os.path.join(d, "nodes.csv")
    with open(nodes_csv, "wb") as f:
        aq.q(archive, "find nodes", fmt="csv", stdout=f)
    with open(nodes_csv) as f:
        ncols = f.readline().strip().split(",")
    ti, pi, ki = ncols.index("tid"), ncols.index("pid"), ncols.index("kind")
    pid_of = {}
    with open(nodes_csv) as f:
        f.readline()
        for rec in csv_records(f):
            c = rec.split(",")
            if len(c) == len(ncols) and c[ki] == "thread":
                pid_of.setdefault(c[ti], c[pi])

    raw = os.path.join(d, "events.raw.csv")
    with open(raw, "wb") as f:
        aq.q(archive, "find events", fmt="csv", stdout=f)
    events_csv = os.path.join(d, "events.csv")
    with open(raw) as f:
        ecols = f.readline().strip().split(",")
        if "pid" in ecols:
            f.close()
            os.replace(raw, events_csv)
        else:
            ti = ecols.index("tid")
            with open(events_csv, "w") as o:
                o.write(",".join(ecols + ["pid"]) + "\n")
                for rec in csv_records(f):
                    tid = rec.split(",", ti + 1)[ti]
                    o.write(rec.rstrip("\n") + "," + pid_of.get(tid, "") + "\n")
            ecols.append("pid")
    if os.path.exists(raw):
        os.unlink(raw)

    edges_csv = os.path.join(d, "edges.csv")
    with open(edges_csv, "wb") as f:
        r = aq.q(archive, "find edges", fmt="csv", stdout=f, check=False)
    how = "find edges"
    if r.rc != 0:  # older argusq: every node's in-edges from `show node`
        how = "show node (no find edges)"
        log("  `find edges` failed (%s); edges from `show node` of every node" % r.err.strip()[:80])
        script = os.path.join(d, "shownodes.q")
        with open(script, "w") as f:
            for i in range(1, nnodes + 1):
                f.write("show node %d;\n" % i)
        out = os.path.join(d, "shownodes.json")
        with open(out, "wb") as f:
            aq.script(archive, script, fmt="json", stdout=f)
        with open(out) as f, open(edges_csv, "w") as o:
            o.write("from,to,kind,from_event,to_event\n")
            for line in f:
                for e in json.loads(line).get("in", []):
                    o.write("%d,%d,%s,%d,%d\n" % (e["from"], e["to"], e["kind"], e["from_event"], e["to_event"]))
        os.unlink(script)
        os.unlink(out)
    with open(edges_csv) as f:
        gcols = f.readline().strip().split(",")
    return {"events": (events_csv, ecols), "nodes": (nodes_csv, ncols), "edges": (edges_csv, gcols)}, how


def sqlite_schema(cols):
    ecols, ncols, gcols = cols["events"][1], cols["nodes"][1], cols["edges"][1]
    ints = {"id", "ts", "tid", "pid", "node", "cpu", "begin", "end", "duration", "blocked", "events",
            "from", "to", "from_event", "to_event"}
    rename = {"from": "from_node", "to": "to_node"}

    def table(name, cs):
        defs = []
        for c in cs:
            col = rename.get(c, c) if name == "edges" else c
            t = "INTEGER" if c in ints else "TEXT"
            if c == "id":
                t = "INTEGER PRIMARY KEY"
            defs.append('"%s" %s' % (col, t))
        return 'CREATE TABLE %s(%s);' % (name, ", ".join(defs))

    return "\n".join([table("events", ecols), table("nodes", ncols), table("edges", gcols)])


def sqlite_load(cols, db, runs):
    """The timed load: the sqlite3 shell imports the three CSV files into a
    fresh database and builds the indexes (events by thread and time,
    edges by target)."""
    script = os.path.join(os.path.dirname(db), "load.sql")
    with open(script, "w") as f:
        f.write("PRAGMA cache_size=-262144;\n")  # a 256 MiB page cache
        f.write(sqlite_schema(cols) + "\n")
        for t in ("events", "nodes", "edges"):
            f.write(".import --csv --skip 1 '%s' %s\n" % (cols[t][0], t))
        f.write("CREATE INDEX events_tid_ts ON events(tid, ts);\n")
        f.write("CREATE INDEX edges_to ON edges(to_node);\n")
    rs = []
    for i in range(runs):
        rm_archive(db)
        r = run(["sqlite3", "-bail", db], stdin=script, stdout=subprocess.DEVNULL)
        if r.err.strip():
            raise SystemExit("bench: sqlite3 load: " + r.err[-2000:])
        r.size = disk_bytes(db)
        rs.append(r)
        log("  sqlite load run %d: %.2f s" % (i + 1, r.wall))
        if r.wall > bench_harness.SLOW:
            break
    return {
        "runs": [round(r.wall, 3) for r in rs],
        "wall_s": med([r.wall for r in rs]),
        "cpu_s": med([r.cpu for r in rs]),
        "peak_rss_bytes": max(r.maxrss for r in rs),
        "db_bytes": med([r.size for r in rs]),
        "settings": "sqlite3 shell .import of CSV, default journal and sync, 256 MiB page cache; "
                    "indexes events(tid, ts), edges(to_node); nodes and events by INTEGER PRIMARY KEY",
    }


# ---------------------------------------------------------------- DuckDB

DUCKDB_DIR = os.path.join(ROOT, "build", "bench-duckdb")


def duckdb_setup():
    """DuckDB's Node API from the npm registry, into build/bench-duckdb once;
    the peer script is copied beside it (an ES module resolves packages
    from its own folder).  The script's path, or None (said why)."""
    if not shutil.which("node") or not shutil.which("npm"):
        log("duckdb: skipped: node and npm are not installed")
        return None
    mod = os.path.join(DUCKDB_DIR, "node_modules", "@duckdb", "node-api")
    if not os.path.isdir(mod):
        os.makedirs(DUCKDB_DIR, exist_ok=True)
        log("duckdb: npm install @duckdb/node-api (once, into build/bench-duckdb)")
        r = subprocess.run(["npm", "install", "--prefix", DUCKDB_DIR, "--no-audit", "--no-fund", "@duckdb/node-api"],
                           capture_output=True, text=True, timeout=900)
        if r.returncode != 0 or not os.path.isdir(mod):
            log("duckdb: skipped: npm install failed: " + (r.stderr or r.stdout).strip()[-300:])
            return None
    script = os.path.join(DUCKDB_DIR, "duckdb_peer.mjs")
    shutil.copyfile(os.path.join(ROOT, "bench", "duckdb_peer.mjs"), script)
    return script


def duckdb_peer(script, cols, d, runs, starts, many, aq_sets):
    """The same load and slices as the SQLite peer's: a timed load of the
    three CSV files (runs times), a process per slice (first touch, then
    again), and every slice of the script in one process."""
    db = os.path.join(d, "bench.duckdb")
    loads = []
    for i in range(runs):
        rm_archive(db)
        if os.path.exists(db + ".wal"):
            os.unlink(db + ".wal")
        r = run(["node", script, "load", db, cols["events"][0], cols["nodes"][0], cols["edges"][0]])
        r.size = disk_bytes(db)
        loads.append(r)
        log("  duckdb load run %d: %.2f s" % (i + 1, r.wall))
        if r.wall > bench_harness.SLOW:
            break
    whole = []
    for _ in range(2):  # first touch, then again
        whole.append([run(["node", script, "slices", db, "20", str(n)], stdout=subprocess.DEVNULL,
                          sample=False).wall for n in starts])
    first, again = whole
    r = run(["node", script, "slices", db, "20"] + [str(n) for n in starts], sample=False)
    sets = json.loads(r.out)["sets"]
    agree = sum(set(s) == a for s, a in zip(sets, aq_sets))
    r = run(["node", script, "slices", db, "20"] + [str(n) for n in many], sample=False)
    ip = json.loads(r.out)["seconds"]
    spawn = [run(["node", "-e", "0"], sample=False).wall for _ in range(5)]
    return {
        "runs": [round(x.wall, 3) for x in loads], "wall_s": med([x.wall for x in loads]),
        "peak_rss_bytes": max(x.maxrss for x in loads), "db_bytes": med([x.size for x in loads]),
        "slice_first_touch_p50_s": pct(first, 50), "slice_whole_process_p50_s": pct(again, 50),
        "slice_whole_process_p99_s": pct(again, 99), "node_spawn_p50_s": pct(spawn, 50),
        "slice_in_process_mean_s": statistics.mean(ip), "slice_in_process_p50_s": pct(ip, 50),
        "slice_in_process_p99_s": pct(ip, 99), "slices_agreeing_with_argusq": "%d/%d" % (agree, len(starts)),
        "settings": "@duckdb/node-api, tables from read_csv of the same CSV files (no index); "
                    "a node process per slice, and one process for the script's slices",
    }


# ---------------------------------------------------------------- the part run.py calls

def db_peers_part(args, aq, A, nnodes, starts, many, aq_sets, res):
    """SQLite, then DuckDB (unless --no-duckdb): the archive A's events,
    nodes and edges exported by argusq and loaded (timed), and the slices
    from the same start nodes as argusq's (whole process, then in one
    process).  Puts res["sqlite"] and res["duckdb"] (a DuckDB that fails
    is logged and left out); reads res["argus_ingest"] and res["slice"]
    for the ratios."""
    log("sqlite: export events, nodes, edges from the archive")
    sd = os.path.join(WORK, "sqlite")
    t0 = time.perf_counter()
    cols, how = export_for_sqlite(aq, A, sd, nnodes)
    export_s = time.perf_counter() - t0
    log("  %.1f s" % export_s)
    db = os.path.join(sd, "bench.sqlite")
    log("sqlite: load (%d runs)" % args.runs)
    sq = sqlite_load(cols, db, args.runs)
    sq["export_s"] = export_s
    sq["edges_from"] = how
    sq["csv_bytes"] = sum(os.path.getsize(c[0]) for c in cols.values())
    log("sqlite: slices")
    sqlw = []
    for _ in range(2):  # as for argusq: first touch, then warm
        sqlw.append([run(["sqlite3", "-readonly", db, SQLITE_SLICE.format(start=n, depth=20)],
                         stdout=subprocess.DEVNULL, sample=False).wall for n in starts])
    sqlf, sqlw = sqlw
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    con.execute("PRAGMA cache_size=-262144")
    sets, agree = [], 0
    for n, aset in zip(starts, aq_sets):
        sset = {row[0] for row in con.execute(SQLITE_SLICE.format(start=n, depth=20))}
        agree += sset == aset
    ip = []
    for n in many:
        t0 = time.perf_counter()
        con.execute(SQLITE_SLICE.format(start=n, depth=20)).fetchall()
        ip.append(time.perf_counter() - t0)
    con.close()
    sq.update({"slice_whole_process_p50_s": pct(sqlw, 50), "slice_whole_process_p99_s": pct(sqlw, 99),
               "slice_first_touch_p50_s": pct(sqlf, 50), "slice_first_touch_p99_s": pct(sqlf, 99),
               "slice_in_process_mean_s": statistics.mean(ip), "slice_in_process_p50_s": pct(ip, 50),
               "slice_in_process_p99_s": pct(ip, 99),
               "slices_agreeing_with_argusq": "%d/%d" % (agree, len(starts))})
    sq["ratio_load_over_argusq_ingest"] = sq["wall_s"] / res["argus_ingest"]["wall_s"]
    sq["ratio_slice_whole_p50"] = sq["slice_whole_process_p50_s"] / res["slice"]["whole_process_p50_s"]
    sq["ratio_slice_in_process"] = sq["slice_in_process_mean_s"] / res["slice"]["in_process_mean_s"]
    res["sqlite"] = sq

    # -- DuckDB, the second database peer
    script = None if args.no_duckdb else duckdb_setup()
    if script:
        log("duckdb: load (%d runs) and slices" % args.runs)
        try:
            dk = duckdb_peer(script, cols, sd, args.runs, starts, many, aq_sets)
            dk["ratio_load_over_argusq_ingest"] = dk["wall_s"] / res["argus_ingest"]["wall_s"]
            dk["ratio_slice_whole_p50"] = dk["slice_whole_process_p50_s"] / res["slice"]["whole_process_p50_s"]
            dk["ratio_slice_in_process"] = dk["slice_in_process_mean_s"] / res["slice"]["in_process_mean_s"]
            res["duckdb"] = dk
        except (SystemExit, Exception) as e:  # a peer that fails is reported, not fatal
            log("duckdb: skipped: %s" % str(e)[-300:])
