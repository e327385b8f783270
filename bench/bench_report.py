"""bench/bench_report.py -- the table of `make bench` (bench/run.py):
report() prints it from the results, a function per section of rows
(each calls row(what, value, target, ok, ...)), judges the targets and
sets each row beside the last run on this machine
(bench/data/baseline-MACHINE.json), which it then replaces.  Standard
library only.
"""
import hashlib
import json
import os
import time

from bench_harness import DATA, MiB, count, fmt_ms


def machine_key():
    """This machine, for its baseline: host name and cpu model (the same
    kind of VM varies by 2x in speed between hosts)."""
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            model = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    return hashlib.sha1(("%s|%s|%d" % (os.uname().nodename, model, os.cpu_count())).encode()).hexdigest()[:12]


def baseline_path():
    return os.path.join(DATA, "baseline-%s.json" % machine_key())


def report(res):
    """The table.  A target judged against a peer run in the same bench
    (trace-cmd, babeltrace2, SQLite, DuckDB), a ratio of two sizes or of
    two runs of argusq, or a size (bytes, MiB) passes or misses; a target
    in events/s or ms is the machine's as much as argusq's, so it is
    shown (`info: met`, `info: not met`) and not counted.  Each row with
    a number is set beside the same row of the last run on this machine
    (bench/data/baseline-MACHINE.json), which this run then replaces."""
    rows = []
    targets = []
    nums = {}

    def row(what, value, target="", ok=None, num=None, higher=False, absolute=False):
        if absolute and ok is not None:
            result, ok = "info: " + ("met" if ok else "not met"), None
        else:
            result = "" if ok is None else ("pass" if ok else "MISS")
        rows.append([what, value, target, result, ""])
        if ok is not None:
            targets.append(ok)
        if num is not None:
            nums[what] = (num, higher, len(rows) - 1)

    ftrace_rows(res, row)
    ctf_rows(res, row)
    perfetto_rows(res, row)
    dat_rows(res, row)
    argus_rows(res, row)
    graph_rows(res, row)
    slice_rows(res, row)
    query_rows(res, row)
    sqlite_rows(res, row)
    duckdb_rows(res, row)
    peer_ratio_rows(res, row)
    fleet_rows(res, row)  # the fleet: a measurement, no target
    print_table(res, rows, targets, nums)


def ingest_rows(row, label, r):
    """The rows of one ingest (Argusq.ingest's summary and medians)."""
    row("%s: events, nodes, edges" % label, "%d, %d, %d" % (r["events"], r["nodes"], r["edges"]))
    row("%s: input" % label, "%.0f MB (%s)" % (r["input_bytes"] / 1e6, r["trace"]))
    row("%s: wall (median of %d)" % (label, len(r["runs"])), "%.2f s (cpu %.2f s)" % (r["wall_s"], r["cpu_s"]),
        num=r["wall_s"])
    row("%s: throughput" % label, "%.0f events/s, %.1f MB/s (%.0f events/cpu-s)"
        % (r["events_per_s"], r["mb_per_s"], r["events_per_cpu_s"] or 0))
    row("%s: peak RSS" % label, "%.0f MiB (anon %.0f, file %.0f)"
        % (r["peak_rss_bytes"] / MiB, r["peak_rss_anon_bytes"] / MiB, r["peak_rss_file_bytes"] / MiB),
        "<= 256 MiB", r["peak_rss_bytes"] <= 256 * MiB, num=r["peak_rss_bytes"] / MiB)
    row("%s: archive on disk" % label, "%.0f MB (%.0f bytes/event)"
        % (r["archive_bytes"] / 1e6, r["archive_bytes_per_event"]))


def ftrace_rows(res, row):
    """The ftrace text ingest at scale, and pipeline.dat beside trace-cmd report."""
    f = res["ftrace_ingest"]
    ingest_rows(row, "ftrace text ingest", f)
    row("ftrace text ingest: >= 1M events/s", "%.2fM events/s" % (f["events_per_s"] / 1e6), ">= 1M/s",
        f["events_per_s"] >= 1e6, absolute=True)
    # the target: the paper's scale in seconds on two cores
    row("ftrace text ingest: >= 3M events/s", "%.2fM events/s" % (f["events_per_s"] / 1e6), ">= 3M/s",
        f["events_per_s"] >= 3e6, absolute=True)
    p = res["trace_cmd"]
    if "trace_cmd_wall_s" in p:
        a = p["argusq_ingest"]
        row("trace-cmd report -l pipeline.dat", "%.3f s (cpu %.3f s), %.0f events/s"
            % (p["trace_cmd_wall_s"], p["trace_cmd_cpu_s"], p["trace_cmd_events_per_s"]))
        row("argusq ingest of the same trace", "%.3f s (cpu %.3f s), %.0f events/s [%s]"
            % (a["wall_s"], a["cpu_s"], a["events_per_s"], p["argusq_input"]))
        row("argusq ingest / trace-cmd report", "%.2fx the time (%.2fx the cpu)"
            % (p["ratio_argusq_over_trace_cmd"], p["ratio_argusq_over_trace_cmd_cpu"]), "<= 0.50x",
            p["ratio_argusq_over_trace_cmd"] <= 0.5, num=p["ratio_argusq_over_trace_cmd"])
        row("archive bytes/event: pipeline.dat (graph, indexes)", "%.0f (the trace.dat %.1f, its text %.0f)"
            % (a["archive_bytes_per_event"], a["input_bytes"] / max(1, a["events"]),
               f["input_bytes"] / max(1, f["events"])), "<= 64", a["archive_bytes_per_event"] <= 64)


def ctf_rows(res, row):
    """LTTng's many-threads CTF trace beside babeltrace2."""
    c = res.get("ctf", {})
    if "ratio_argusq_over_babeltrace2" in c:
        row("CTF ingest of many-threads (%d events)" % c["events"], "%.3f s (cpu %.3f s); babeltrace2 printing it %.3f s"
            % (c["argusq_wall_s"], c["argusq_cpu_s"], c["babeltrace2_wall_s"]))
        row("argusq CTF ingest / babeltrace2", "%.2fx the time" % c["ratio_argusq_over_babeltrace2"], "<= 1.00x",
            c["ratio_argusq_over_babeltrace2"] <= 1.0, num=c["ratio_argusq_over_babeltrace2"])


def perfetto_rows(res, row):
    for key, label in (("perfetto", "Perfetto ingest"), ("perfetto_compact", "Perfetto ingest, compact_sched")):
        p = res.get(key, {})
        if "events_per_s" in p:
            row("%s (%d events, %s)" % (label, p["events"], os.path.basename(p["trace"])),
                "%.2f s (cpu %.2f s), peak RSS %.0f MiB" % (p["wall_s"], p["cpu_s"], p["peak_rss_bytes"] / MiB))
            row("%s: >= 3M events/s" % label, "%.2fM events/s" % (p["events_per_s"] / 1e6), ">= 3M/s",
                p["events_per_s"] >= 3e6, num=p["wall_s"], absolute=True)
        elif p:
            row(label, "skipped: %s" % p.get("skipped"))


def dat_rows(res, row):
    """The .dat files of ../shared, read with their nanoseconds."""
    dats = res.get("dat_files", [])
    if dats:
        good = [d for d in dats if d["ok"] and d["events"] and d["sub_microsecond"] > d["events"] * 0.9]
        row(".dat files of ../shared read with ns timestamps", "%d of %d (%s)"
            % (len(good), len(dats), ", ".join("%s %s" % (d["file"].split("/")[-1],
               "%d/%d" % (d["sub_microsecond"], d["events"]) if d["ok"] else "failed") for d in dats)),
            "all", len(good) == len(dats))


def argus_rows(res, row):
    """The Argus ingest at two sizes, synced or not, and peak RSS flat as the trace grows."""
    s, b = res["argus_ingest_small"], res["argus_ingest"]
    ingest_rows(row, "Argus ingest %s" % count(s["events"]), s)
    ingest_rows(row, "Argus ingest %s" % count(b["events"]), b)
    # the target: 19M events, graph included, in <= 10 s (>= 1.9M events/s)
    row("Argus ingest %s: >= 1.9M events/s" % count(b["events"]), "%.2fM events/s (%.1f s)"
        % (b["events_per_s"] / 1e6, b["wall_s"]), ">= 1.9M/s", b["events_per_s"] >= 1.9e6, absolute=True)
    row("archive bytes/event: Argus %s (graph, indexes)" % count(b["events"]), "%.0f (the Argus text %.0f)"
        % (b["archive_bytes_per_event"], b["input_bytes"] / max(1, b["events"])), "<= 64",
        b["archive_bytes_per_event"] <= 64)
    u = res.get("argus_ingest_nosync")
    if u:
        row("Argus ingest %s: synced batches vs unsynced" % count(b["events"]),
            "%.2f s vs %.2f s (%+.0f%%): what crash safety costs" % (b["wall_s"], u["wall_s"],
                                                                 100 * (b["wall_s"] / u["wall_s"] - 1)))
    row("peak RSS, %s vs %s events" % (count(b["events"]), count(s["events"])),
        "%.0f vs %.0f MiB, x%.2f for x%.1f events (anon %.0f vs %.0f MiB, x%.2f)"
        % (b["peak_rss_bytes"] / MiB, s["peak_rss_bytes"] / MiB, b["peak_rss_bytes"] / s["peak_rss_bytes"],
           b["events"] / s["events"], b["peak_rss_anon_bytes"] / MiB, s["peak_rss_anon_bytes"] / MiB,
           b["peak_rss_anon_bytes"] / max(1, s["peak_rss_anon_bytes"])),
        "flat (<= 1.10x)", b["peak_rss_bytes"] <= 1.10 * s["peak_rss_bytes"])
    fl = res.get("flat")
    if fl:  # flat (<= 1.10x) for rebuild graph, compare, diagnose, critical path too
        for k in ("rebuild graph", "compare path", "match", "diagnose", "critical path"):
            if k in fl["big"] and k in fl["small"]:
                r = fl["big"][k] / fl["small"][k]
                row("peak RSS, %s: %s vs %s events" % (k, count(b["events"]), count(s["events"])),
                    "%.0f vs %.0f MiB, x%.2f" % (fl["big"][k] / MiB, fl["small"][k] / MiB, r), "flat (<= 1.10x)",
                    r <= 1.10)


def graph_rows(res, row):
    """rebuild graph on the big archive."""
    g = res["graph_rebuild"]
    row("graph: rebuild graph (median of %d)" % len(g["runs"]),
        "%.2f s (%.0f%% of ingest), peak RSS %.0f MiB (anon %.0f, file %.0f)"
        % (g["wall_s"], 100 * g["share_of_ingest"], g["peak_rss_bytes"] / MiB, g["peak_rss_anon_bytes"] / MiB,
           g["peak_rss_file_bytes"] / MiB),
        # batched under a shadow copy: bounded like ingest and no slower
        "<= ingest, <= 256 MiB", g["share_of_ingest"] <= 1.0 and g["peak_rss_bytes"] <= 256 * MiB, num=g["wall_s"])


def slice_rows(res, row):
    """slice back depth 20, whole process and in process."""
    sl = res["slice"]
    row("slice back depth 20: whole process, first p50 / p99", "%s / %s (each start node's first slice)"
        % (fmt_ms(sl["first_touch_p50_s"]), fmt_ms(sl["first_touch_p99_s"])), "p99 <= 20 ms",
        sl["first_touch_p99_s"] <= 0.020, num=sl["first_touch_p50_s"] * 1000, absolute=True)
    row("slice back depth 20: whole process, again p50 / p99", "%s / %s (max %s; spawning `true`: %s)"
        % (fmt_ms(sl["whole_process_p50_s"]), fmt_ms(sl["whole_process_p99_s"]), fmt_ms(sl["whole_process_max_s"]),
           fmt_ms(sl["spawn_true_p50_s"])), "p99 <= 20 ms", sl["whole_process_p99_s"] <= 0.020,
        num=sl["whole_process_p50_s"] * 1000, absolute=True)
    row("slice back depth 20: in process", "%s per statement (%d in one script)"
        % (fmt_ms(sl["in_process_mean_s"]), sl["in_process_statements"]))
    row("slice size (from %d start nodes)" % len(sl["start_nodes"]), "%.1f nodes mean, %d max" % (sl["nodes_mean"], sl["nodes_max"]))


def query_rows(res, row):
    """find, match, diagnose, critical path; diagnose against the normal traces."""
    # the targets at 19M events: find (by thread, order by blocked desc,
    # limit), match and diagnose <= 50 ms each; critical path <= 100 ms
    limits = {"find": 0.050, "match": 0.050, "diagnose": 0.050, "critical path": 0.100}
    for k, v in res["queries"].items():
        if k in limits:
            row("%s (whole process, p50 / max)" % k, "%s / %s" % (fmt_ms(v["p50_s"]), fmt_ms(v["max_s"])),
                "p50 <= %d ms" % round(limits[k] * 1000), v["p50_s"] <= limits[k], num=v["p50_s"] * 1000,
                absolute=True)
        else:
            row("%s (whole process, p50 / max)" % k, "%s / %s" % (fmt_ms(v["p50_s"]), fmt_ms(v["max_s"])),
                num=v["p50_s"] * 1000)
    if "normals" in res:  # the target: <= 200 ms against 100 normal traces
        n = res["normals"]
        row("diagnose against %d normal traces (%d steps; whole process, p50 / max)" % (n["traces"], n["normal_steps"] or 0),
            "%s / %s, peak RSS %.0f MiB" % (fmt_ms(n["p50_s"]), fmt_ms(n["max_s"]), n["peak_rss_bytes"] / MiB),
            "p50 <= 200 ms", n["p50_s"] <= 0.200, num=n["p50_s"] * 1000, absolute=True)
    for k, v in res["queries"].items():  # the target: <= 256 MiB for diagnose and critical path
        if "peak_rss_bytes" in v and k in ("match", "diagnose", "critical path"):
            row("%s: peak RSS" % k, "%.0f MiB" % (v["peak_rss_bytes"] / MiB), "<= 256 MiB",
                v["peak_rss_bytes"] <= 256 * MiB)


def sqlite_rows(res, row):
    """The SQLite peer."""
    b = res["argus_ingest"]
    if "sqlite" in res:
        q = res["sqlite"]
        row("SQLite load: events+nodes+edges, indexes", "%.2f s (median of %d), %.0f MB db, peak RSS %.0f MiB"
            % (q["wall_s"], len(q["runs"]), q["db_bytes"] / 1e6, q["peak_rss_bytes"] / MiB))
        row("SQLite load / argusq ingest (same events)", "%.2fx the time (argusq %.2f s, graph included)"
            % (q["ratio_load_over_argusq_ingest"], b["wall_s"]), "> 1x", q["ratio_load_over_argusq_ingest"] > 1)
        row("SQLite slice (recursive CTE): whole process, first p50 / p99", "%s / %s"
            % (fmt_ms(q["slice_first_touch_p50_s"]), fmt_ms(q["slice_first_touch_p99_s"])))
        row("SQLite slice (recursive CTE): whole process, again p50 / p99", "%s / %s"
            % (fmt_ms(q["slice_whole_process_p50_s"]), fmt_ms(q["slice_whole_process_p99_s"])))
        row("SQLite slice: in process mean (p50 / p99)", "%s (%s / %s)"
            % (fmt_ms(q["slice_in_process_mean_s"]), fmt_ms(q["slice_in_process_p50_s"]), fmt_ms(q["slice_in_process_p99_s"])))
        row("SQLite / argusq slice, whole process p50 (again)", "%.2fx" % q["ratio_slice_whole_p50"], "> 1x",
            q["ratio_slice_whole_p50"] > 1)
        row("SQLite / argusq slice, in process", "%.2fx" % q["ratio_slice_in_process"], "> 1x",
            q["ratio_slice_in_process"] > 1)
        row("SQLite slices with argusq's node set", q["slices_agreeing_with_argusq"])
        row("SQLite input: exported from argusq", "%.1f s, %.0f MB CSV (edges: %s)"
            % (q["export_s"], q["csv_bytes"] / 1e6, q["edges_from"]))


def duckdb_rows(res, row):
    """The DuckDB peer."""
    if "duckdb" in res:
        q = res["duckdb"]
        row("DuckDB load: events+nodes+edges", "%.2f s (median of %d), %.0f MB db, peak RSS %.0f MiB"
            % (q["wall_s"], len(q["runs"]), q["db_bytes"] / 1e6, q["peak_rss_bytes"] / MiB))
        row("DuckDB slice: whole process, first p50 / again p50 / p99", "%s / %s / %s (spawning node: %s)"
            % (fmt_ms(q["slice_first_touch_p50_s"]), fmt_ms(q["slice_whole_process_p50_s"]),
               fmt_ms(q["slice_whole_process_p99_s"]), fmt_ms(q["node_spawn_p50_s"])))
        row("DuckDB slice: in process mean (p50 / p99)", "%s (%s / %s)"
            % (fmt_ms(q["slice_in_process_mean_s"]), fmt_ms(q["slice_in_process_p50_s"]), fmt_ms(q["slice_in_process_p99_s"])))
        row("DuckDB slices with argusq's node set", q["slices_agreeing_with_argusq"])


def peer_ratio_rows(res, row):
    """The faster database peer against argusq."""
    sl = res["slice"]
    peers = [res[k] for k in ("sqlite", "duckdb") if k in res]
    if peers:  # the target: at least 2x faster than the faster peer
        for what, key in (("load", "ratio_load_over_argusq_ingest"), ("slice, whole process p50", "ratio_slice_whole_p50"),
                          ("slice, in process", "ratio_slice_in_process")):
            best = min(p[key] for p in peers)
            row("faster peer / argusq: %s" % what, "%.2fx (%s)" % (best, ", ".join(
                "%s %.2fx" % (k, res[k][key]) for k in ("sqlite", "duckdb") if k in res)), ">= 2x", best >= 2,
                num=best, higher=True)
        # what the whole-process ratio cannot show: every process of both
        # sides first pays for its own start (fork and exec of `true` alone
        # is 0.86 ms on this VM, most of argusq's 1.2 ms), so beside it the
        # same p50s less that spawn, the work each side does (no target)
        sp = sl["spawn_true_p50_s"]
        mine = sl["whole_process_p50_s"] - sp
        if mine > 0:
            net = {k: (res[k]["slice_whole_process_p50_s"] - sp) / mine for k in ("sqlite", "duckdb") if k in res}
            row("faster peer / argusq: slice, whole process p50 less spawning `true`", "%.2fx (%s; argusq %s)" % (
                min(net.values()), ", ".join("%s %.2fx" % kv for kv in net.items()), fmt_ms(mine)))


def fleet_rows(res, row):
    f = res.get("fleet")
    if not f:
        return
    if "skipped" in f:
        row("fleet: 20 archives on 2 Dask workers", "skipped: " + f["skipped"])
        return
    row("fleet: archives, traces, workers", "%d, %d, %d (LocalCluster started in %s)"
        % (f["archives"], f["traces"], f["workers"], fmt_ms(f["cluster_start_s"])))
    for label, v in f["statements"].items():
        row("fleet: %s, Dask / CLI one by one" % label, "%s / %s (%d argusq runs): %.2fx the time%s"
            % (fmt_ms(v["fleet_s"]), fmt_ms(v["cli_s"]), v["cli_processes"], v["ratio_fleet_over_cli"],
               ", %d missing" % v["missing"] if v["missing"] else ""))


def print_table(res, rows, targets, nums):
    """The rows printed beside the last run on this machine (whose
    baseline file this run's numbers then replace), and the count of
    targets met; res gets "baseline" and "targets"."""
    # beside the last run on this machine
    c = res["config"]
    try:
        with open(baseline_path()) as fh:
            base = json.load(fh)
    except (OSError, ValueError):
        base = {}
    for what, (num, higher, i) in nums.items():
        was = base.get("rows", {}).get(what)
        if was:
            change = num / was - 1
            worse = change < -0.10 if higher else change > 0.10
            rows[i][4] = "%+.0f%%%s" % (100 * change, " worse" if worse else "")
    res["baseline"] = {k: base.get(k) for k in ("commit", "date")} if base else None
    w = [max(len(r[i]) for r in rows) for i in range(4)]
    print()
    if base:
        print("beside the last run on this machine: %s of %s" % (base.get("commit", "?"), base.get("date", "?")))
    print("%-*s  %-*s  %-*s  %-*s  %s" % (w[0], "measure", w[1], "value", w[2], "target", w[3], "", "vs last"))
    print("%s  %s  %s  %s  %s" % ("-" * w[0], "-" * w[1], "-" * w[2], "-" * max(4, w[3]), "-------"))
    for r in rows:
        print(("%-*s  %-*s  %-*s  %-*s  %s" % (w[0], r[0], w[1], r[1], w[2], r[2], w[3], r[3], r[4])).rstrip())
    try:
        with open(baseline_path(), "w") as fh:
            json.dump({"commit": c.get("commit", "?"), "date": time.strftime("%Y-%m-%d %H:%M"),
                       "rows": {what: v[0] for what, v in nums.items()}}, fh, indent=1)
    except OSError:
        pass
    print("\ntargets: %d pass, %d miss   (%s, %d events, %d runs each, %.0f s; %d cpus, load average %.1f at start, %.1f at end)"
          % (sum(targets), len(targets) - sum(targets), c.get("commit", "?"), c["events"], c["runs"],
             res["total_bench_s"], c["cpus"], c["loadavg_start"][0], c["loadavg_end"][0]))
    res["targets"] = {"pass": sum(targets), "miss": len(targets) - sum(targets),
                      "rows": [dict(zip(("measure", "value", "target", "result", "vs_last"), r)) for r in rows if r[3]]}
