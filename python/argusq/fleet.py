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

A fleet-wide baseline: diagnose() finds an anomaly's normal counterpart
in every archive and diagnoses it against the best of them, as one archive
holding every trace would; match() gives a node's counterparts in every
archive, best first (the archives may live on the workers' own disks: the
anomaly's trace goes to them as a dump when they cannot read its file).

    r = fleet.diagnose(archives, 'diagnose thread "ui-main"', anomaly="slow.db",
                       against='traces where label.run = "normal"')
    r["diagnosis"]["baseline"]["archive"], r["diagnosis"]["suspects"][0]["thread"]

Other statements about one node of one trace (slice, show, compare, ...)
and statements that change an archive are refused: run those on the
archive itself (argusq.Archive).
"""
import contextlib
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
                "(argusq.Archive.query or argusq -d ARCHIVE), or, for match and diagnose against "
                "every archive, name the anomaly's archive (--anomaly ARCHIVE, fleet.match, "
                "fleet.diagnose)" % " ".join(self.statement.split()[:2]))


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


def query(archives, statement, client=None, traces_where=None, trace=None, where=None, progress=None,
          anomaly=None, against=None, copy="auto"):
    """The statement over every archive, merged (see the module's doc).
    With anomaly (an archive), `diagnose ...` is diagnose() -- a fleet-wide
    baseline -- and `match node N ...` is match().

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
    if anomaly is not None:
        if _bare(statement).split()[:1] == ["match"]:
            return match(archives, statement, anomaly, client, trace=trace, where=where, copy=copy,
                         progress=progress)
        return diagnose(archives, statement, anomaly, against=against, client=client, trace=trace, where=where,
                        copy=copy, progress=progress)
    plan = Plan(statement)
    archives = list(archives)
    done = _map(client, archives, where, progress, "argusq",
                lambda path: (run_archive, path, plan.statement, traces_where, trace))
    return merge(plan, [done[p] for p in archives])


def _map(client, items, where, progress, prefix, call):
    """One task per item (call(item): the function and its arguments), on
    client or on a LocalCluster made for this call; pinned to where[item]
    when given.  The results by item (_gather)."""
    with _client(client) as client:
        futures = {}
        for item in items:
            futures[item] = client.submit(*call(item), key="%s-%s-%s" % (prefix, os.path.basename(item), _token()),
                                          pure=False, **_pin(where, item))
        return _gather(client, futures, where, progress)


@contextlib.contextmanager
def _client(client):
    """client, or a LocalCluster's made for the block and closed after it."""
    if client is not None:
        yield client
        return
    client = local_client()
    try:
        yield client
    finally:
        cluster = client.cluster
        client.close()
        cluster.close()


def _pin(where, item):
    """submit()'s arguments keeping item's task on the worker where names."""
    if where and where.get(item):
        return {"workers": [where[item]], "allow_other_workers": False}
    return {}


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


# ---- a fleet-wide baseline: diagnose and match against every archive -------
#
# `diagnose` finds an anomaly's normal counterpart, and `match` a node's
# counterparts, in the traces of one archive; `in archive "PATH"` (docs/
# QUERY.md) looks in another archive file.  Over a fleet the statement runs
# once per archive, on the worker the archive lives on: on the anomaly's
# own archive as it is, on every other one with `in archive "THAT"` -- its
# session on the anomaly's archive, when that worker can read the same file
# (shared storage), else on a copy of the anomaly's trace (argusq_dump on
# the anomaly's worker, shipped once to each worker that needs it and
# ingested there into a scratch archive: archives on local disks).  The
# engine ranks one archive's candidates; the baselines of all archives are
# then ranked by what ranked them (the baseline's "rank": a similar one
# first, the exact score, one form holding the other, the likeness of the
# traces), ties going to the earlier archive as given: the pick of one
# archive holding every trace, ingested archive by archive.  The winner's
# diagnosis is the answer; match rows merge best first, as one archive's.

def _quote(s):
    """s as a string literal of the query language."""
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


class FleetError(Exception):
    """The anomaly itself could not be read or diagnosed (its archive,
    its trace, its thread): there is nothing to compare."""


# the errors that say an archive holds none of the traces to compare with:
# no candidates there, which is no failure of the archive
_NO_CANDIDATES = ("no trace named", "no trace of archive", "no trace satisfies", "holds no trace")


def _no_candidates(e):
    return any(m in e.message for m in _NO_CANDIDATES)


def _scratch_dir(token):
    try:
        from distributed import get_worker
        base = get_worker().local_directory
    except (ImportError, ValueError, AttributeError):
        import tempfile
        base = tempfile.gettempdir()
    return os.path.join(base, "argusq-fleet-" + token)


def _identity(t):
    """What tells a trace from another of its name: its catalog entry's
    counts and times (a file of the same path on another machine is
    another archive)."""
    return {k: t.get(k) for k in ("name", "events", "nodes", "edges", "threads", "first_ts", "last_ts",
                                  "ingested_at")}


def _anomaly_where(anomaly, trace, ident, dump, token, copy):
    """The archive this worker reads the anomaly's trace from: the
    anomaly's archive itself when it can read that very file, else the
    scratch copy made from the dump (None: a copy is needed and no dump
    was given yet)."""
    from argusq import Archive, ArgusqError
    if copy != "always":
        try:
            with Archive(anomaly, mode="r") as a:
                t = a.query("traces where name = " + _quote(trace))["traces"]
            if t and _identity(t[0]) == ident:
                return anomaly
        except (ArgusqError, OSError):
            pass
    if copy == "never":
        raise FleetError("%s: the anomaly's archive is not readable here" % anomaly)
    if dump is None:
        return None
    d = _scratch_dir(token)
    db = os.path.join(d, "anomaly.db")
    with _archive_lock(db):  # one copy per worker, for every task of the call
        if not os.path.exists(db):
            os.makedirs(d, exist_ok=True)
            src = os.path.join(d, "anomaly.argus")
            with open(src, "wb") as f:
                f.write(dump)
            with Archive(db, mode="c") as a:
                a.ingest(src, name=trace)
            os.unlink(src)
    return db


def against_archive(path, statement, anomaly, trace, ident, dump=None, token="", copy="auto", fmt=None,
                    normals=None):
    """On path's worker: the statement about trace `trace` of archive
    `anomaly`, looking in path (`in archive`).  A dict: "archive", "doc"
    (None: no candidates there), "text" (fmt: the output in that format
    too), "via" (where the anomaly was read: "archive" or "copy"),
    "need_copy" (the anomaly's archive is not this worker's to read, and
    no dump came), "error" (the archive's own failure).  normals: the
    normal steps to judge the anomaly against (Session.normals), not the
    archive's own."""
    from argusq import Archive, ArgusqError
    out = {"archive": path, "doc": None, "text": None, "via": None, "need_copy": False, "error": None,
           "host": os.uname().nodename}
    own = os.path.abspath(path) == os.path.abspath(anomaly)  # read where it lives, never a copy
    try:
        src = anomaly if own else _anomaly_where(anomaly, trace, ident, dump, token, copy)
        if src is None:
            out["need_copy"] = True
            return out
        out["via"] = "archive" if src == anomaly else "copy"
        stmt = statement if own else statement + " in archive " + _quote(path)
        with Archive(src, mode="r") as a:
            try:
                out["doc"] = a.query(stmt, trace=trace, normals=normals)
                if fmt:
                    out["text"] = a.text(stmt, trace=trace, format=fmt, normals=normals)
            except ArgusqError as e:
                if not _no_candidates(e):
                    raise
    except (ArgusqError, OSError, FleetError) as e:
        out["error"] = str(e)
    return out


def anomaly_of(anomaly, statement, probe, trace=None, dump=False):
    """On the anomaly's worker: the trace the statement is about (the
    trace `probe` reads, a statement that cannot fail for want of
    candidates) and its catalog entry; with dump, its Argus dump (bytes),
    for workers that cannot read the anomaly's archive."""
    from argusq import Archive, ArgusqError
    out = {"trace": None, "ident": None, "dump": None, "error": None}
    try:
        with Archive(anomaly, mode="r") as a:
            r = a.results(probe, trace=trace)[0]
            out["trace"] = r.trace
            t = a.query("traces where name = " + _quote(r.trace))["traces"]
            out["ident"] = _identity(t[0])
            if dump:
                import tempfile
                fd, tmp = tempfile.mkstemp(prefix="argusq-fleet-", suffix=".argus")
                os.close(fd)
                try:
                    a.dump(tmp, trace=r.trace)
                    with open(tmp, "rb") as f:
                        out["dump"] = f.read()
                finally:
                    os.unlink(tmp)
    except (ArgusqError, OSError) as e:
        out["error"] = str(e)
    return out


def _cleanup(token):
    import shutil
    shutil.rmtree(_scratch_dir(token), ignore_errors=True)


def _against_fleet(archives, anomaly, statement, probe, trace, client, where, copy, progress, fmt=None,
                   finish=None):
    """Every archive's answer to statement (about the anomaly's trace),
    in the order of archives, the anomaly's archive among them (first
    when the list does not hold it).  Returns (results, trace).  finish,
    when given, is called with the results and again(path, normals) --
    path's answer once more, judged against those normal steps -- before
    the workers' copies of the anomaly go, and returns the results."""
    if copy not in ("auto", "always", "never"):
        raise ValueError("copy is auto, always or never, not %r" % (copy,))
    archives = list(archives)
    if not any(os.path.abspath(a) == os.path.abspath(anomaly) for a in archives):
        archives.insert(0, anomaly)
    token = _token()
    with _client(client) as client:
        def head_of(dump, key):
            head = client.submit(anomaly_of, anomaly, statement, probe, trace, dump, key=key + token, pure=False,
                                 **_pin(where, anomaly)).result()
            if head["error"]:
                raise FleetError("%s: %s" % (anomaly, head["error"]))
            return head

        head = head_of(copy == "always", "argusq-anomaly-")
        trace = head["trace"]
        dump = client.scatter(head["dump"]) if head["dump"] is not None else None

        def call(path):
            return (against_archive, path, statement, anomaly, trace, head["ident"], dump, token, copy, fmt)

        done = _map(client, archives, where, progress, "argusq-against", call)
        again = [p for p in archives if done[p].get("need_copy")]
        if again:
            # workers that cannot read the anomaly's archive: its trace goes to them
            head = head_of(True, "argusq-dump-")
            dump = client.scatter(head["dump"])
            done.update(_map(client, again, where, None, "argusq-against", call))
        results = [done[p] for p in archives]
        if finish:
            def again_with(path, normals):
                return client.submit(*call(path), normals, key="argusq-pooled-" + _token(), pure=False,
                                     **_pin(where, path)).result()
            results = finish(results, again_with)
        try:
            client.run(_cleanup, token)
        except Exception:  # noqa: BLE001 -- a worker gone takes its scratch copy with it
            pass
        return results, trace


def _rank_key(doc):
    r = doc["baseline"]["rank"]
    return (r["similar"], r["score"], r["contained"], r["likeness"]["path"], r["likeness"]["whole"])


def _failures(results):
    missing = [{"archive": r["archive"], "error": r["error"]} for r in results if r.get("error")]
    missing += [{"archive": r["archive"], "error": "its worker could not read the anomaly's trace"}
                for r in results if r.get("need_copy") and not r.get("error")]
    return missing


def _pooled(results):
    """Every archive's normal steps like the anomaly ("normal_sample"),
    archive by archive in the fleet's order, each naming its archive:
    the steps one archive holding every trace would have found (the
    engine chooses among them as among its own).  None: the statement
    compares with no list of traces."""
    pooled, listed = [], False
    for r in results:
        sample = (r.get("doc") or {}).get("normal_sample")
        if sample is None:
            continue
        listed = True
        pooled += [dict(st, archive=r["archive"]) for st in sample]
    return pooled if listed else None


def _judged_by_fleet(results, again):
    """The results with the winner's answer judged against the normal steps
    of every archive (_pooled), not only its own: when any other archive
    found some.  The winner's is asked again; its failure leaves its own
    answer and says so in its "pool_error"."""
    pooled = _pooled(results)
    best = _best(results)
    if pooled is None or best is None or all(st["archive"] == best["archive"] for st in pooled):
        return results
    r = again(best["archive"], pooled)
    out = []
    for x in results:
        if x is best:
            x = dict(x, pool_error=r["error"]) if r.get("error") or not r.get("doc") else \
                dict(x, doc=r["doc"], text=r["text"])
        out.append(x)
    return out


def _best(results):
    """The archive whose baseline ranks first (of equals, the earlier);
    with no baseline anywhere, the first that answered (its answer is the
    anomaly's alone)."""
    ranked = [r for r in results if r.get("doc") and r["doc"].get("baseline")]
    if ranked:
        return max(ranked, key=lambda r: _rank_key(r["doc"]))  # max: the first of equals
    return next((r for r in results if r.get("doc")), None)


def diagnose(archives, statement, anomaly, against=None, client=None, trace=None, where=None, copy="auto",
             progress=None, fmt=None):
    """A fleet-wide baseline: the diagnosis of an anomaly in archive
    `anomaly` against the best normal counterpart found in any archive.

    statement  `diagnose thread "NAME"` or `diagnose node N`, optionally
               `in trace "A"` (trace: the same as a keyword); no `against`
    against    which traces of every archive are candidates, as the
               clause after `against`: 'traces where label.run = "normal"',
               'trace "normal"'; None: every trace (the anomaly's own
               too: its steps that ended before the anomaly)
    archives   the fleet (the anomaly's archive is one of them, first
               when not listed)
    copy       "auto": a worker reads the anomaly's archive when it can
               read that very file, else gets a copy of its trace;
               "always": every archive but its own is compared with a copy
               (archives on local disks); "never": no copy
    where, client, progress: as query()
    fmt        "table" (or "csv", ...): the answer's "text" is the winning
               diagnosis printed so, as argusq prints it

    Returns {"diagnosis": the winner's document, with "archive" and
    "trace" (the anomaly's) and its baseline's "archive"; None when no
    archive holds a candidate trace, "baselines": every archive's best,
    ranked, "archives", "missing", "errors", "text", "via": how each
    archive read the anomaly ("archive", "copy", None: it failed)}.  Equal to the
    diagnosis of one archive holding every trace, ingested archive by
    archive, `against traces [where ...]`, in its baseline and its
    breakdown, and in the statistics over many normal steps (against a
    list of traces): every archive's normal steps like the anomaly
    ("normal_sample", each naming its "archive") are pooled, and the
    winning archive judges the anomaly against the pool (normal_steps,
    the suspects' normal and effect, their order), as that one archive
    would against its own."""
    b = _bare(statement.strip().rstrip(";"))
    words = b.split()
    if words[:1] != ["diagnose"] or ";" in b:
        raise ValueError("a fleet-wide baseline is for one `diagnose thread \"NAME\"` or `diagnose node N`")
    if "against" in words or "archive" in words:
        raise ValueError("the fleet says where the baseline is: give the against clause apart "
                         "(against='traces where ...'), and no `in archive`")
    base = statement.strip().rstrip(";").strip()
    stmt = base + " against " + (against.strip() if against else "traces")
    results, atrace = _against_fleet(archives, anomaly, stmt, base, trace, client, where, copy, progress, fmt,
                                     finish=_judged_by_fleet)
    # the best rank first; of equals, the earlier archive (the sort is stable)
    ranked = [r for r in results if r.get("doc") and r["doc"].get("baseline")]
    ranked.sort(key=lambda r: _rank_key(r["doc"]), reverse=True)
    best = _best(results)
    out = {"archives": len(results), "missing": _failures(results), "errors": [], "text": None,
           "baselines": [{"archive": r["archive"], "trace": r["doc"]["baseline"]["trace"],
                          "id": r["doc"]["baseline"]["id"], "score": r["doc"]["baseline"]["score"],
                          "rank": r["doc"]["baseline"]["rank"]} for r in ranked],
           "diagnosis": None}
    if best is not None:
        doc = {"archive": anomaly, "trace": atrace, **best["doc"]}
        if doc.get("baseline"):
            doc["baseline"] = dict(doc["baseline"], archive=best["archive"])
        out["diagnosis"] = doc
        out["text"] = best.get("text")
        if best.get("pool_error"):
            out["errors"].append({"archive": best["archive"], "trace": atrace,
                                  "error": "judged against its own normal steps only, not the fleet's: "
                                           + best["pool_error"]})
    else:
        out["errors"].append({"archive": None, "trace": atrace,
                              "error": "no archive answered with a trace the against clause names"})
    out["via"] = {r["archive"]: r.get("via") for r in results}
    return out


def match(archives, statement, anomaly, client=None, trace=None, where=None, copy="auto", progress=None):
    """match across archives: the counterparts of a node of the anomaly's
    archive (statement: `match node N [in trace "T" | in traces [where
    EXPR]]`, N a node of trace `trace`, default its latest) in every
    archive, best first, at most 20 (or the statement's `limit K`), each
    naming its "archive" and "trace": the rows of one archive holding
    every trace (ingested archive by archive).  Returns {"nodes",
    "candidates" (how many there are in all), "archives", "missing",
    "errors"}."""
    b = _bare(statement.strip().rstrip(";"))
    words = b.split()
    if words[:2] != ["match", "node"] or ";" in b:
        raise ValueError("fleet.match runs one `match node N ...`")
    if "archive" in words:
        raise ValueError("the fleet says which archives to look in: no `in archive`")
    stmt = statement.strip().rstrip(";").strip()
    results, atrace = _against_fleet(archives, anomaly, stmt, "find nodes limit 0", trace, client, where, copy,
                                     progress)
    rows = []
    for i, r in enumerate(results):
        for pos, n in enumerate((r.get("doc") or {}).get("nodes", [])):
            n = {"archive": r["archive"], "trace": n["trace"], **n}
            rows.append(((-n["score_exact"], not n["contained"], i, pos), n))
    rows.sort(key=lambda x: x[0])
    limit = 20  # match's rows without a limit
    if "limit" in words[:-1]:
        try:
            limit = int(words[words.index("limit") + 1])
        except ValueError:
            pass  # the engine refused it already
    return {"nodes": [n for _, n in rows[:limit]], "archives": len(results), "trace": atrace,
            "candidates": sum((r.get("doc") or {}).get("candidates", 0) for r in results),
            "missing": _failures(results), "errors": [], "via": {r["archive"]: r.get("via") for r in results}}


# ---- the argusq-fleet command (argusq/fleet_cli.py) -------------------------


def main(argv=None):
    """argusq-fleet's command line (argusq/fleet_cli.py)."""
    from argusq import fleet_cli

    return fleet_cli.main(argv)


if __name__ == "__main__":
    # python3 -m argusq.fleet: the module imported by its name, so that the
    # tasks it sends are its functions (pickled by name, which workers
    # import), not this __main__'s (pickled by value, locks and all)
    from argusq.fleet import main as _main
    sys.exit(_main())
