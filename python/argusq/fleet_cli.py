"""argusq.fleet_cli -- the argusq-fleet command over argusq.fleet: its
options, the merged answer as a table, CSV or JSON, and a progress bar
(argusq.fleet.main calls it; `python3 -m argusq` and the installed
argusq-fleet run it)."""
import json
import sys

from argusq.fleet import FleetError, Plan, _bare, diagnose, ingest, local_client, match, query

USAGE = """usage: argusq-fleet [--scheduler ADDRESS] [--workers N] [--json | --format table|json|csv]
                    [--traces-where EXPR] [--trace NAME] ARCHIVE... 'STATEMENT'
       argusq-fleet [--scheduler ADDRESS] [--workers N] [--json | --format table|json|csv]
                    --anomaly ARCHIVE [--trace NAME] [--against CLAUSE] [--copy auto|always|never]
                    ARCHIVE... 'diagnose thread "NAME" | diagnose node N | match node N ...'
       argusq-fleet [--scheduler ADDRESS] [--workers N] [--json] --ingest DIR [--arch MACHINE]
                    [--label KEY=VALUE]... TRACE...

Runs STATEMENT (traces, find, diagnose thread, critical path of thread) on
every ARCHIVE as Dask tasks and prints the merged answer; each row names its
archive and trace.  --scheduler: a running Dask scheduler (dask-scheduler;
workers started with dask-worker ADDRESS); without it, a LocalCluster of
--workers processes (default 2) on this machine.  --ingest DIR: each TRACE
ingested by a worker into DIR/WORKER.db on that worker's disk.

--anomaly ARCHIVE: a fleet-wide baseline.  The diagnose (or match) is about
a trace of ARCHIVE (--trace NAME, default its latest); its normal
counterpart is the best in any ARCHIVE (--against 'traces where EXPR' or
'trace "T"': which traces of each; default every trace), as one archive
holding every trace would pick it.  --copy always: compare every other
archive with a copy of the anomaly's trace (archives on local disks; auto,
the default, copies only where the workers cannot read the anomaly's file).

Exit status: 0 every archive answered, 1 some archive is missing or the
statement failed, 2 usage."""


# the table reads as argusq's: times as seconds.micros, durations in
# ns/us/ms/s (query/out.c), by the column's name
_TIMES = ("begin", "end", "ts", "first_ts", "last_ts")
_DURATIONS = ("duration", "blocked", "running", "runnable", "span", "ns")


def _fmt_duration(ns):
    if ns < 1000:
        return "%dns" % ns
    if ns < 1000000:
        return "%.1fus" % (ns / 1e3)
    if ns < 1000000000:
        return "%.1fms" % (ns / 1e6)
    return "%.3fs" % (ns / 1e9)


def _cell(v, col=None):
    if isinstance(v, bool) or v is None:
        return "" if v is None else str(v).lower()
    if isinstance(v, int) and col in _TIMES:
        return "%d.%06d" % (v // 1000000000, v % 1000000000 // 1000)
    if isinstance(v, int) and col in _DURATIONS:
        return _fmt_duration(v)
    if isinstance(v, float):
        return "%.3f" % v
    if isinstance(v, dict) and "id" in v and "thread" in v:  # a node
        return "%s#%d" % (v["thread"], v["id"])
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


def _summary(d):
    """A diagnosis (diagnose thread over a fleet) as one table row: the
    step, how long it waited, the first suspect and the breakdown's
    largest part -- the whole document is the JSON's."""
    a, first = d.get("anomaly") or {}, (d.get("suspects") or [{}])[0]
    parts = {}
    for p in d.get("breakdown") or []:
        k = (p["thread"], p["state"])
        parts[k] = parts.get(k, 0) + p["ns"]
    top = max(parts.items(), key=lambda x: x[1]) if parts else None
    period = (d.get("period") or {}).get("ns") or 0
    return {"archive": d.get("archive"), "trace": d.get("trace"), "node": a.get("id"), "thread": a.get("thread"),
            "begin": a.get("begin"), "blocked": a.get("blocked"), "kind": d.get("kind"),
            "baseline": "%s#%s" % (d["baseline"]["trace"], d["baseline"]["id"]) if d.get("baseline") else "",
            "suspect": "%s %s" % (first.get("thread"), first.get("state")) if first else "",
            "largest": "%s %s %.1f%%" % (top[0][0], top[0][1], 100.0 * top[1] / period) if top and period else ""}


def _table(rows, out):
    if not rows:
        out.write("(no rows)\n")
        return
    if all("suspects" in r and "anomaly" in r for r in rows):
        rows = [_summary(r) for r in rows]
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    cells = [[_cell(r.get(c), c) for c in cols] for r in rows]
    w = [max(len(c), *(len(row[i]) for row in cells)) for i, c in enumerate(cols)]
    out.write("  ".join(c.ljust(w[i]) for i, c in enumerate(cols)).rstrip() + "\n")
    for row in cells:
        out.write("  ".join(v.ljust(w[i]) for i, v in enumerate(row)).rstrip() + "\n")


def _csv(rows, out):
    import csv
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    wr = csv.writer(out, lineterminator="\n")
    wr.writerow(cols)
    for r in rows:
        wr.writerow([_cell(r.get(c)) for c in cols])


class _Bar:
    """archives answered, on stderr when it is a terminal"""

    def __init__(self, what):
        self.on = sys.stderr.isatty()
        self.what = what

    def __call__(self, done, total):
        if self.on:
            n = 30 * done // max(total, 1)
            sys.stderr.write("\r[%s%s] %d/%d %s" % ("#" * n, " " * (30 - n), done, total, self.what))
            sys.stderr.flush()

    def end(self):
        if self.on:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    opts = {"scheduler": None, "workers": 2, "format": "table", "traces_where": None, "trace": None,
            "ingest": None, "arch": None, "labels": {}, "anomaly": None, "against": None, "copy": "auto"}
    args = []
    i = 0
    try:
        while i < len(argv):
            a = argv[i]
            if a in ("-h", "--help"):
                print(USAGE)
                return 0
            if a == "--json":
                opts["format"] = "json"
            elif a in ("--scheduler", "--workers", "--format", "--traces-where", "--trace", "--ingest", "--arch",
                       "--label", "--anomaly", "--against", "--copy"):
                if i + 1 >= len(argv):
                    raise ValueError("%s wants a value" % a)
                v = argv[i + 1]
                i += 1
                if a == "--workers":
                    opts["workers"] = int(v)
                elif a == "--format":
                    if v not in ("table", "json", "csv"):
                        raise ValueError("--format is table, json or csv, not %s" % v)
                    opts["format"] = v
                elif a == "--copy":
                    if v not in ("auto", "always", "never"):
                        raise ValueError("--copy is auto, always or never, not %s" % v)
                    opts["copy"] = v
                elif a == "--label":
                    if "=" not in v:
                        raise ValueError("--label wants KEY=VALUE, not %s" % v)
                    k, _, val = v.partition("=")
                    opts["labels"][k] = val
                else:
                    opts[a[2:].replace("-", "_")] = v
            elif a.startswith("--"):
                raise ValueError("unknown option %s" % a)
            else:
                args.append(a)
            i += 1
        if opts["ingest"] is None and len(args) < 2:
            raise ValueError("want ARCHIVE... and a STATEMENT")
        if opts["ingest"] is not None and not args:
            raise ValueError("--ingest DIR wants trace files")
        if opts["anomaly"] is not None:
            words = _bare(args[-1]).split()
            if words[:1] != ["diagnose"] and words[:2] != ["match", "node"]:
                raise ValueError("--anomaly is for `diagnose thread \"NAME\"`, `diagnose node N` or `match node N`")
            if opts["against"] and words[0] == "match":
                raise ValueError("--against is diagnose's (match says `in trace` or `in traces where`)")
            plan = None
        else:
            plan = Plan(args[-1]) if opts["ingest"] is None else None
    except ValueError as e:
        sys.stderr.write("argusq-fleet: %s\n%s\n" % (e, USAGE))
        return 2

    if opts["scheduler"]:
        from distributed import Client
        client = Client(opts["scheduler"])
    else:
        client = local_client(opts["workers"])
    bar = _Bar("archives" if opts["ingest"] is None else "traces")
    try:
        if opts["anomaly"] is not None:
            return _main_against(args[:-1], args[-1], opts, client, bar)
        if plan is None:
            res = ingest(args, opts["ingest"], client, labels=opts["labels"] or None, arch=opts["arch"],
                         progress=bar)
            bar.end()
            if opts["format"] == "json":
                print(json.dumps({"ingested": res}))
            else:
                _table([{"file": r["file"], "worker": r.get("worker"), "archive": r.get("archive"),
                         "trace": r.get("trace"), "error": r.get("error") or ""} for r in res], sys.stdout)
            return 1 if any(r.get("error") for r in res) else 0
        res = query(args[:-1], args[-1], client, traces_where=opts["traces_where"], trace=opts["trace"],
                    progress=bar)
        bar.end()
    finally:
        cluster = getattr(client, "cluster", None) if not opts["scheduler"] else None
        client.close()
        if cluster is not None:
            cluster.close()
    if opts["format"] == "json":
        print(json.dumps(res))
    elif opts["format"] == "csv":
        _csv(res[plan.key], sys.stdout)
    else:
        _table(res[plan.key], sys.stdout)
    for m in res["missing"]:
        sys.stderr.write("argusq-fleet: %s: missing: %s\n" % (m["archive"], m["error"]))
    for e in res["errors"]:
        sys.stderr.write("argusq-fleet: %s: trace \"%s\": %s\n" % (e["archive"], e["trace"], e["error"]))
    return 1 if res["missing"] else 0


def _main_against(archives, statement, opts, client, bar):
    """argusq-fleet --anomaly: a fleet-wide baseline (diagnose) or match."""
    fmt = opts["format"]
    try:
        if _bare(statement).split()[0] == "match":
            res = match(archives, statement, opts["anomaly"], client, trace=opts["trace"], copy=opts["copy"],
                        progress=bar)
        else:
            res = diagnose(archives, statement, opts["anomaly"], against=opts["against"], client=client,
                           trace=opts["trace"], copy=opts["copy"], progress=bar,
                           fmt=None if fmt == "json" else fmt)
    except (FleetError, ValueError) as e:
        bar.end()
        sys.stderr.write("argusq-fleet: %s\n" % e)
        return 1
    bar.end()
    if fmt == "json":
        print(json.dumps(res))
    elif "nodes" in res:
        (_csv if fmt == "csv" else _table)(res["nodes"], sys.stdout)
    elif res["diagnosis"] is not None:
        d = res["diagnosis"]
        sys.stdout.write(res["text"] or "")
        if fmt == "table":
            bl = d.get("baseline")
            sys.stdout.write("The anomaly is in trace \"%s\" of %s; %s.\n" % (
                d["trace"], d["archive"],
                "its baseline, the best of %d archives', is in %s" % (len(res["baselines"]), bl["archive"])
                if bl else "no archive holds a normal counterpart"))
    for m in res["missing"]:
        sys.stderr.write("argusq-fleet: %s: missing: %s\n" % (m["archive"], m["error"]))
    for e in res["errors"]:
        sys.stderr.write("argusq-fleet: %s\n" % e["error"])
    return 1 if res["missing"] or res["errors"] else 0

