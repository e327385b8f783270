"""argusq.fleet -- one statement over many archives, as Dask tasks.

A fleet keeps one archive per machine (or per day): an LMDB file has one
writer and lives on one disk.  A question about the whole fleet runs the
statement on every archive where it lives, on Dask distributed's workers
(a scheduler and workers on any number of machines, or a LocalCluster on
this one), and merges the answers as the statement means them:

  traces [where ...]        every archive's traces, one list
  find nodes|events|edges   every trace's rows, one list; with `order by F`
                            a k-way merge on F (each trace's rows come
                            sorted), cut at the statement's `limit`
  diagnose thread "NAME"    every trace's diagnosis, worst first (the
                            anomaly's wait and run together)
  critical path of thread   every trace's answer, one list

Each row says where it came from: "archive" and "trace".  An archive that
cannot be read, whose worker died, or where the statement failed for
every trace is named in "missing"; a statement that failed on one trace
(a thread it does not have) is named in "errors"; neither loses the other
archives' answers.

    from argusq import fleet
    r = fleet.query(["a.db", "b.db"], 'find nodes where thread = "ui-main" '
                    'and blocked > 100ms order by blocked desc limit 10')
    r["nodes"][0]["archive"], r["nodes"][0]["trace"], r["missing"]

Statements about one node of one trace (slice, show, match, compare, ...)
and statements that change an archive are refused: run those on the
archive itself (argusq.Archive).
"""
import heapq
import os
import re
import sys
import threading
import time

# ---- what a statement is -------------------------------------------------

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')


def _bare(statement):
    """The statement with its string literals blanked (their words are not
    keywords), lower-cased, its blanks collapsed."""
    return " ".join(_STRING.sub('""', statement).lower().split())


class Plan:
    """How a statement runs over a fleet: once per archive or once per
    trace, and how the answers merge."""

    def __init__(self, statement):
        self.statement = statement.strip().rstrip(";").strip()
        b = _bare(self.statement)
        if not b:
            raise ValueError("an empty statement")
        if ";" in b:
            raise ValueError("one statement at a time (a fleet query merges one answer per trace)")
        self.per_trace = True
        self.key = None          # the answer's list: "nodes", "events", ...
        self.order = None        # (field, descending) of `order by`
        self.limit = None
        self.pinned = ' in trace ""' in b or b.endswith(' in trace ""')
        words = b.split()
        if words[0] == "traces":
            self.kind, self.per_trace, self.key = "traces", False, "traces"
        elif words[0] == "find" and len(words) > 1 and words[1] in ("nodes", "events", "edges"):
            self.kind, self.key = "find", words[1]
            m = re.search(r"\border by ([a-z_.]+)(?: (asc|desc))?", b)
            if m:
                self.order = (m.group(1), m.group(2) == "desc")
            m = re.search(r"\blimit (\d+)", b)
            if m:
                self.limit = int(m.group(1))
        elif words[0] == "diagnose" and len(words) > 1 and words[1] == "thread":
            self.kind, self.key = "diagnose", "diagnoses"
        elif words[:3] == ["critical", "path", "of"] and len(words) > 3 and words[3] == "thread":
            self.kind, self.key = "critical", "paths"
        else:
            raise ValueError(
                "a fleet runs `traces`, `find`, `diagnose thread` and `critical path of thread`; "
                "`%s` is about one node of one trace or changes an archive: run it on that archive "
                "(argusq.Archive.query or argusq -d ARCHIVE)" % " ".join(self.statement.split()[:2]))


# ---- one archive, on a worker --------------------------------------------

def _trace_names(archive, traces_where):
    doc = archive.query("traces where " + traces_where if traces_where else "traces")
    return [t["name"] for t in doc["traces"]]


def run_archive(path, statement, traces_where=None, trace=None):
    """The statement on one archive: a dict with "archive", "answers" (one
    per trace: {"trace", "doc"}), "errors" (per trace) and "error" (the
    archive's own failure, else None).  Runs on a Dask worker; plain data
    in and out, so it pickles."""
    from argusq import Archive, ArgusqError  # on the worker
    plan = Plan(statement)
    out = {"archive": path, "answers": [], "errors": [], "error": None, "host": os.uname().nodename}
    try:
        with Archive(path, mode="r") as a:
            if not plan.per_trace:
                out["answers"].append({"trace": None, "doc": a.query(plan.statement)})
                return out
            names = [trace] if trace else ([None] if plan.pinned else _trace_names(a, traces_where))
            for name in names:
                try:
                    out["answers"].append({"trace": name, "doc": a.query(plan.statement, trace=name)})
                except ArgusqError as e:
                    out["errors"].append({"archive": path, "trace": name, "error": str(e)})
            if names and not out["answers"]:
                out["error"] = "the statement failed on every trace: " + out["errors"][0]["error"]
    except ArgusqError as e:
        out["error"] = str(e)
    except OSError as e:
        out["error"] = str(e)
    return out


# ---- merging ---------------------------------------------------------------

def _tag(row, archive, trace):
    r = {"archive": archive, "trace": trace}
    r.update(row)
    if trace is not None:
        r["trace"] = trace
    elif "trace" not in row and "name" in row:
        r["trace"] = row["name"]
    return r


def _sort_value(row, field):
    v = row.get(field)
    # rows without the field go last either way, as None cannot be compared
    return (v is None, v if v is not None else 0)


def merge(plan, results):
    """The per-archive results (run_archive's dicts, in the caller's order
    of archives) as one answer."""
    out = {}
    lists = []
    for res in results:
        for ans in res.get("answers", []):
            doc = ans["doc"]
            if plan.kind in ("traces", "find"):
                rows = [_tag(r, res["archive"], ans["trace"] if plan.kind == "find" else r.get("name"))
                        for r in doc.get(plan.key, [])]
            else:
                rows = [_tag(doc, res["archive"], ans["trace"])]
            lists.append(rows)
    if plan.kind == "find" and plan.order:
        field, desc = plan.order
        # each list is sorted by the archive; equal values keep the lists'
        # order (archives as given, traces in catalog order)
        if desc:
            merged = heapq.merge(*lists, key=lambda r: _desc_key(r, field))
        else:
            merged = heapq.merge(*lists, key=lambda r: _sort_value(r, field))
        rows = list(_take(merged, plan.limit))
    else:
        rows = [r for rows in lists for r in rows]
        if plan.kind == "diagnose":
            rows.sort(key=lambda d: -(_num(d.get("anomaly", {}).get("blocked")) +
                                      _num(d.get("anomaly", {}).get("duration"))))
        if plan.limit is not None:
            rows = rows[:plan.limit]
    out[plan.key] = rows
    out["archives"] = len(results)
    out["missing"] = [{"archive": r["archive"], "error": r["error"]} for r in results if r.get("error")]
    out["errors"] = [e for r in results for e in r.get("errors", [])]
    return out


def _num(v):
    return v if isinstance(v, (int, float)) else 0


class _Desc:
    """Reverses the order of a value for heapq.merge (which merges
    ascending)."""
    __slots__ = ("v",)

    def __init__(self, v):
        self.v = v

    def __lt__(self, other):
        return other.v < self.v

    def __eq__(self, other):
        return self.v == other.v


def _desc_key(row, field):
    v = row.get(field)
    return (v is None, _Desc(v if v is not None else 0))


def _take(it, n):
    if n is None:
        yield from it
        return
    for i, x in enumerate(it):
        if i >= n:
            return
        yield x


# ---- running on Dask -------------------------------------------------------

def local_client(workers=2):
    """A LocalCluster of `workers` processes on 127.0.0.1 and its client
    (close both with client.close(); client.cluster.close())."""
    from distributed import Client, LocalCluster
    cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                           dashboard_address=None, host="127.0.0.1")
    return Client(cluster)


def _gather(client, futures, where, progress, poll=0.25):
    """Each future's result, or a failure dict for its archive: a task
    pinned to a worker that left (its archive lives there) is missing,
    as is one that failed (a worker killed under it too often)."""
    from distributed import wait
    from distributed.client import FIRST_COMPLETED
    pending = dict(futures)
    done = {}
    total = len(futures)
    while pending:
        try:
            wait(list(pending.values()), timeout=poll, return_when=FIRST_COMPLETED)
        except Exception:  # the timeout: look at the workers
            pass
        alive = set(client.scheduler_info().get("workers", {}))
        for path, fut in list(pending.items()):
            if fut.done():
                try:
                    done[path] = fut.result()
                except Exception as e:
                    done[path] = {"archive": path, "answers": [], "errors": [],
                                  "error": "the task failed on its worker: %s" % _why(e)}
                del pending[path]
            elif where and where.get(path) and where[path] not in alive:
                done[path] = {"archive": path, "answers": [], "errors": [],
                              "error": "its worker %s left before answering" % where[path]}
                fut.cancel()
                del pending[path]
        if progress:
            progress(total - len(pending), total)
    return done


def _why(e):
    s = str(e)
    return "%s: %s" % (type(e).__name__, s) if s else type(e).__name__


def query(archives, statement, client=None, traces_where=None, trace=None, where=None, progress=None):
    """The statement over every archive, merged (see the module's doc).

    archives      paths the workers can read (their own disks, or storage
                  they share)
    client        a distributed.Client; None: a LocalCluster of two
                  workers here, for this call
    traces_where  only the traces `traces where EXPR` lists, in each archive
    trace         only the trace of this name, in each archive
    where         {archive: worker address}: an archive is read only by
                  the worker it lives on (a worker that dies takes its
                  archives' answers with it: they are named missing)
    progress      called with (archives answered, archives) as they come
    """
    plan = Plan(statement)
    archives = list(archives)
    done = _map(client, archives, where, progress, "argusq",
                lambda path: (run_archive, path, plan.statement, traces_where, trace))
    return merge(plan, [done[p] for p in archives])


def _map(client, items, where, progress, prefix, call):
    """One task per item (call(item): the function and its arguments), on
    client or on a LocalCluster made for this call; pinned to where[item]
    when given.  The results by item (_gather)."""
    own = client is None
    if own:
        client = local_client()
    try:
        futures = {}
        for item in items:
            kw = {}
            if where and where.get(item):
                kw = {"workers": [where[item]], "allow_other_workers": False}
            futures[item] = client.submit(*call(item), key="%s-%s-%s" % (prefix, os.path.basename(item), _token()),
                                          pure=False, **kw)
        return _gather(client, futures, where, progress)
    finally:
        if own:
            cluster = client.cluster
            client.close()
            cluster.close()


_count = [0]
_count_lock = threading.Lock()


def _token():
    with _count_lock:  # task keys unique within this process
        _count[0] += 1
        return "%d-%d-%d" % (os.getpid(), _count[0], time.monotonic_ns())


# ---- ingest where the traces are -------------------------------------------

_ingest_locks = {}
_ingest_locks_lock = threading.Lock()


def _archive_lock(path):
    # one writer per archive file: tasks of one worker process take turns
    with _ingest_locks_lock:
        return _ingest_locks.setdefault(os.path.abspath(path), threading.Lock())


def ingest_one(path, archive_dir, name=None, labels=None, arch=None):
    """Ingests one trace file into this worker's archive in archive_dir
    (made if missing): ARCHIVE_DIR/WORKER.db, WORKER the worker's name.
    Runs on a Dask worker."""
    from argusq import Archive, ArgusqError
    try:
        from distributed import get_worker
        wname = str(get_worker().name)
    except (ImportError, ValueError):
        wname = "local"
    db = os.path.join(archive_dir, "%s.db" % re.sub(r"[^A-Za-z0-9_.-]", "_", wname))
    out = {"file": path, "archive": db, "worker": wname, "error": None}
    try:
        os.makedirs(archive_dir, exist_ok=True)
        with _archive_lock(db), Archive(db, mode="c") as a:
            info = a.ingest(path, name=name, labels=labels, arch=arch)
        out.update({"trace": info["trace"], "info": info})
    except (ArgusqError, OSError) as e:
        out["error"] = str(e)
    return out


def ingest(files, archive_dir, client=None, labels=None, arch=None, where=None, progress=None):
    """Each trace file ingested by a worker into that worker's archive
    (archive_dir/WORKER.db on the worker's disk): the map step that keeps a
    fleet's daily traces where they were recorded.  where: {file: worker
    address} for files only one worker can read.  Returns one dict per
    file: "file", "archive", "worker", "trace", "info", "error"."""
    files = list(files)
    done = _map(client, files, where, progress, "argusq-ingest",
                lambda f: (ingest_one, f, archive_dir, None, labels, arch))
    return [done[f] if "file" in done[f] else dict(done[f], file=f) for f in files]


# ---- the argusq-fleet command ----------------------------------------------

USAGE = """usage: argusq-fleet [--scheduler ADDRESS] [--workers N] [--json | --format table|json|csv]
                    [--traces-where EXPR] [--trace NAME] ARCHIVE... 'STATEMENT'
       argusq-fleet [--scheduler ADDRESS] [--workers N] [--json] --ingest DIR [--arch MACHINE]
                    [--label KEY=VALUE]... TRACE...

Runs STATEMENT (traces, find, diagnose thread, critical path of thread) on
every ARCHIVE as Dask tasks and prints the merged answer; each row names its
archive and trace.  --scheduler: a running Dask scheduler (dask-scheduler;
workers started with dask-worker ADDRESS); without it, a LocalCluster of
--workers processes (default 2) on this machine.  --ingest DIR: each TRACE
ingested by a worker into DIR/WORKER.db on that worker's disk.

Exit status: 0 every archive answered, 1 some archive is missing or the
statement failed, 2 usage."""


def _cell(v):
    if isinstance(v, float):
        return "%.3f" % v
    if isinstance(v, (dict, list)):
        import json
        return json.dumps(v, separators=(",", ":"))
    return "" if v is None else str(v)


def _table(rows, out):
    if not rows:
        out.write("(no rows)\n")
        return
    cols = []
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    cells = [[_cell(r.get(c)) for c in cols] for r in rows]
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
    import json
    argv = list(sys.argv[1:] if argv is None else argv)
    opts = {"scheduler": None, "workers": 2, "format": "table", "traces_where": None, "trace": None,
            "ingest": None, "arch": None, "labels": {}}
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
                       "--label"):
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
        plan = Plan(args[-1]) if opts["ingest"] is None else None
    except ValueError as e:
        sys.stderr.write("argusq-fleet: %s\n%s\n" % (e, USAGE))
        return 2

    if opts["scheduler"]:
        from distributed import Client
        client = Client(opts["scheduler"])
    else:
        client = local_client(opts["workers"])
    bar = _Bar("archives" if plan else "traces")
    try:
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


if __name__ == "__main__":
    sys.exit(main())
