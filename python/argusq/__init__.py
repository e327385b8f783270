"""argusq: the argusq trace database from Python, over libargusq (ctypes,
standard library only).

    import argusq
    with argusq.Archive("argus.db", create=True) as a:
        a.ingest("run-42.dat", name="run-42", labels={"run": "slow"})
        doc = a.query('find nodes where thread = "ui-main" order by blocked desc limit 1')
        node = doc["nodes"][0]
        for r in a.results(f'slice back from node {node["id"]} depth 6; traces'):
            print(r.index, r.trace, r.doc)           # which trace each answer read
        for ev in a.rows('find events where tid = 4111'):   # streamed, not one list
            print(ev["ts"], ev["type"])

Statements are argusq's query language (docs/QUERY.md); their answers are
the JSON documents `argusq --json` prints, parsed.  `query` returns the one
document of a single statement, and a list of documents for a script of
several (or none); `results` always returns a list of Result, which also
says which trace each statement read -- the trace its rows come from.

An Archive may be shared by threads: each call runs in its own read
snapshot, with the GIL released while libargusq works.  Opening the same
file twice in a process gives two handles on one database environment.
A Session (Archive.session) keeps `use trace` between calls, for one
thread at a time.

The library is found by $ARGUSQ_LIB, else a checkout's build/libargusq.so,
else the one `make install` installed (see _native.library_path)."""
import atexit
import collections
import json
import os
import queue
import re
import threading
import ctypes
import weakref

from . import _native

__all__ = ["Archive", "Session", "Rows", "Result", "ArgusqError", "version", "FORMATS"]

_lib = _native.load()

# enum argusq_code
OK, ERR_STATEMENT, ERR_INGEST, ERR_USAGE, ERR_IO, ERR_ARCHIVE, ERR_NOMEM, ERR_STOPPED, ERR_INTERRUPTED = range(9)
_CODE_NAMES = {ERR_STATEMENT: "statement", ERR_INGEST: "ingest", ERR_USAGE: "usage", ERR_IO: "io",
               ERR_ARCHIVE: "archive", ERR_NOMEM: "nomem", ERR_STOPPED: "stopped", ERR_INTERRUPTED: "interrupted"}
# ARGUSQ_OPEN_* (not CREATE: a missing archive is made by argusq_ingest_into)
_READ, _WRITE = 0x0, 0x1
FORMATS = ("json", "table", "csv", "dot", "svg", "perfetto")


def version():
    """libargusq's version."""
    return _lib.argusq_version().decode()


def _text(b):
    return b.decode("utf-8", "surrogateescape")


class ArgusqError(Exception):
    """A failure reported by libargusq.  code: what kind ("statement",
    "ingest", "usage", "io", "archive", "nomem", "stopped"); message: what
    is wrong.  For an error about a token of a statement, line and col
    (1-based, col in bytes) and offset locate it in the statement text;
    statement is the failing statement's index in a script, statement_line
    the line it begins on.  source and text: the file a position is in when
    it is not the statement (an ingest's rules file) and the line holding it."""

    def __init__(self, err):
        self.code = _CODE_NAMES.get(err.code, str(err.code))
        self.message = _text(err.message)
        self.line, self.col, self.offset = err.line, err.col, err.offset
        self.statement = err.stmt_index if err.stmt_count else None
        self.statements = err.stmt_count
        self.statement_line = err.stmt_line
        self.source = _text(err.source)
        self.text = _text(err.text)
        where = f"{self.line}:{self.col}: " if self.line > 0 else ""
        super().__init__(where + self.message)


Result = collections.namedtuple("Result", "index trace doc")
Result.__doc__ = """One statement's answer: its index in the script, the trace it
read ("" for statements that read none: traces, help, use trace), and
its JSON document parsed."""


def _enc(s):
    return None if s is None else os.fsencode(s) if not isinstance(s, bytes) else s


class _Handle:
    """An archive handle and its users (calls in progress, open sessions):
    closing it only forbids new users, and the last user out closes it in
    libargusq, so that no thread's call is left with a freed handle."""

    def __init__(self, h):
        self._lock = threading.Lock()
        self._h, self._users, self._closed = h, 0, False

    def acquire(self):
        with self._lock:
            if self._closed:
                raise ValueError("the archive is closed")
            self._users += 1
            return self._h

    def release(self):
        with self._lock:
            self._users -= 1
            h = self._h if self._closed and not self._users else None
            if h:
                self._h = None
        if h:
            _lib.argusq_close(h)

    def close(self):
        with self._lock:
            self._closed = True
            h = self._h if not self._users else None
            if h:
                self._h = None
        if h:
            _lib.argusq_close(h)

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


class _Closing:
    """A context manager that closes what it holds on exit, and when it is
    collected (quietly: at interpreter exit the module may be gone)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 -- at interpreter exit
            pass


def _writable(path):
    """Whether this user may write the archive at path: the file, and its
    lock file or, when there is none yet, the directory LMDB makes it in
    (libargusq's db_writable, which the argusq command asks)."""
    if not os.access(path, os.W_OK):
        return False
    lock = path + "-lock"
    if os.path.lexists(lock):
        return os.access(lock, os.W_OK)
    return os.access(os.path.dirname(path) or ".", os.W_OK | os.X_OK)


class Archive(_Closing):
    """An argusq archive (an LMDB file holding many traces).

    An existing archive, read-write, and read-only when this process may
    not write the file (or its directory), as the argusq command does.
    A path that holds no archive is refused -- a statement, and an ingest
    too, raise ArgusqError ("PATH: no such archive") and make nothing: a
    mistyped path is not a new, empty archive -- unless create=True: then
    the first ingest makes it, as `argusq ingest` does (nothing is made
    before).  mode: "r" read-only; "w" read-write (it must exist); "c"
    read-write, made by the first ingest (create=True).  An archive of an
    earlier format is migrated when it is opened for writing."""

    def __init__(self, path, mode=None, create=False):
        self.path = os.fspath(path)
        if mode not in (None, "r", "w", "c"):
            raise ValueError(f"mode is 'r', 'w' or 'c', not {mode!r}")
        self.create = create or mode == "c"
        mode = mode or "c"
        if mode == "c" and os.path.exists(self.path) and not _writable(self.path):
            mode = "r"
        self.mode = mode
        self._lock = threading.Lock()  # guards _handle and _closed
        self._handle, self._closed = None, False
        if mode != "c" or os.path.exists(self.path):
            self._handle = _Handle(self._open())

    def _open(self):
        """libargusq's handle on the file (never made here: an ingest makes it)."""
        if self.mode == "c":
            flags = _WRITE if _writable(self.path) else _READ  # missing: "no such archive"
        else:
            flags = _WRITE if self.mode == "w" else _READ
        err = _native.Error()
        h = _lib.argusq_open(_enc(self.path), flags, ctypes.byref(err))
        if not h:
            raise ArgusqError(err)
        return h

    def _opened(self, for_ingest=False):
        """The _Handle; opened now if the archive was missing when this
        Archive was made (ArgusqError if it still is).  None, for an
        ingest, while it is missing: the ingest makes it."""
        with self._lock:
            if self._closed:
                raise ValueError("the archive is closed")
            missing = not os.path.exists(self.path)
            if self._handle is None and missing and for_ingest and not self.create:
                err = _native.Error(code=ERR_ARCHIVE)
                err.message = (f"{self.path}: no such archive (Archive(path, create=True) makes one at its "
                               "first ingest)").encode()[:5119]
                raise ArgusqError(err)
            if self._handle is None and not (for_ingest and missing):
                self._handle = _Handle(self._open())
            return self._handle

    def close(self):
        """Closes the archive: no new calls; libargusq's handle is freed
        when the calls and sessions other threads still have end."""
        lock = getattr(self, "_lock", None)
        if not lock:
            return
        with lock:
            self._closed = True
            handle = self._handle
        if handle:
            handle.close()

    def __repr__(self):
        return f"argusq.Archive({self.path!r}, mode={self.mode!r}, create={self.create!r})"

    def session(self, trace=None, format="json"):
        """A Session: statements run in it keep `use trace` from one call to
        the next.  trace: its current trace (None: the latest ingested)."""
        return Session(self, trace, format)

    def query(self, script, trace=None, normals=None):
        """The JSON document of a single statement, or a list of the
        documents of a script of several.  trace: the trace statements read
        unless they say `in trace` (None: the latest ingested).  normals:
        as Session.normals."""
        with self.session(trace) as s:
            if normals is not None:
                s.normals(normals)
            return s.query(script)

    def results(self, script, trace=None):
        """Every statement's Result (index, trace read, document), in order."""
        with self.session(trace) as s:
            return s.results(script)

    def text(self, script, trace=None, format="table", normals=None):
        """The output argusq prints for script with --format format."""
        with self.session(trace, format) as s:
            if normals is not None:
                s.normals(normals)
            return s.text(script)

    def rows(self, statement, trace=None):
        """The rows of a statement's answer (its document's first list:
        nodes, events, traces...), parsed one by one as libargusq writes
        them, not built into one list first; see Rows."""
        return Rows(self, statement, trace)

    def df(self, statement, trace=None):
        """The rows of a statement's answer (its document's first list, as
        rows() gives them) as a pandas DataFrame, nested objects flattened
        into dotted columns ("for.thread"); pandas must be installed
        (Debian: python3-pandas)."""
        return _frame(list(self.rows(statement, trace)))

    def ingest(self, path, name=None, labels=None, rules=None, arch=None, progress=None, threads=0):
        """Ingests the trace file at path as a new trace: name (default: a
        dump's own, else the file's base name), labels (a dict), a rules
        file, the machine a text trace was recorded on (arch), progress: a
        callable(bytes, total, events, phase) called now and then.  Returns
        the trace's summary as a dict, with "warnings": what the reader
        mended rather than refused."""
        labels = labels or {}
        kv = [f"{k}={v}".encode() for k, v in labels.items()]
        arr = (ctypes.c_char_p * max(len(kv), 1))(*kv)
        warnings, failed = [], []

        def on_progress(ctx, done, total, events, phase):
            try:
                progress(done, total, events, phase.decode() if phase else None)
            except BaseException as e:  # noqa: B902 -- carried over the C frames
                failed.append(e)

        def on_warning(ctx, msg):
            warnings.append(_text(msg))

        o = _native.IngestOpts(size=ctypes.sizeof(_native.IngestOpts), name=_enc(name), rules=_enc(rules),
                               arch=_enc(arch), labels=arr, nlabels=len(kv),
                               progress=_native.PROGRESS_FN(on_progress) if progress else _native.PROGRESS_FN(),
                               warning=_native.WARNING_FN(on_warning), threads=threads)
        info = _native.IngestInfo(size=ctypes.sizeof(_native.IngestInfo))
        err = _native.Error()
        handle = self._opened(for_ingest=True)
        if handle is None:  # a new archive, made once the trace file was found readable
            rc = _lib.argusq_ingest_into(_enc(self.path), 0, _enc(path), ctypes.byref(o), ctypes.byref(info),
                                         ctypes.byref(err))
        else:
            with handle as h:
                rc = _lib.argusq_ingest(h, _enc(path), ctypes.byref(o), ctypes.byref(info), ctypes.byref(err))
        if failed:
            raise failed[0]
        if rc:
            raise ArgusqError(err)
        d = {"trace": _text(info.trace), "format": info.format.decode(), "recorder": _text(info.recorder)}
        for f in ("events", "threads", "processes", "nodes", "edges", "skipped", "reordered", "late",
                  "truncated_line", "unnamed", "first_ts", "last_ts", "seconds", "userspace",
                  "userspace_skipped"):
            d[f] = getattr(info, f)
        d["warnings"] = warnings
        return d

    def dump(self, path, trace=None):
        """Writes trace (None: the latest ingested) to the file at path as an
        Argus trace with argusq's dump records, which Archive.ingest reads
        back into the same events, nodes and edges -- a trace taken to
        another machine's archive.  Returns {"trace", "events",
        "declarations", "labels", "rules", "symbols"}."""
        info = _native.DumpInfo(size=ctypes.sizeof(_native.DumpInfo))
        err = _native.Error()
        with self._opened() as h:
            rc = _lib.argusq_dump(h, _enc(trace), _enc(os.fspath(path)), ctypes.byref(info), ctypes.byref(err))
        if rc:
            raise ArgusqError(err)
        d = {"trace": _text(info.trace)}
        for f in ("events", "declarations", "labels", "rules", "symbols"):
            d[f] = getattr(info, f)
        return d


def _frame(rows):
    try:
        import pandas
    except ImportError as e:
        raise ImportError("argusq's df() needs pandas (Debian: apt-get install python3-pandas; "
                          "or pip install pandas)") from e
    return pandas.json_normalize(rows) if rows else pandas.DataFrame()


class Session(_Closing):
    """Statements run one after another with a state between them: the
    current trace, which `use trace "NAME"` changes.  For one thread at a
    time (an Archive serves many threads: a Session each)."""

    def __init__(self, archive, trace=None, format="json"):
        fmt = _lib.argusq_format_from_name(format.encode())
        if fmt < 0:
            raise ValueError(f"format is one of {', '.join(FORMATS)}, not {format!r}")
        self.archive = archive
        opts = _native.QueryOpts(size=ctypes.sizeof(_native.QueryOpts), format=fmt, trace=_enc(trace))
        err = _native.Error()
        self._handle = archive._opened()
        h = self._handle.acquire()  # the session uses the archive until it is closed
        self._s = _lib.argusq_session_new(h, ctypes.byref(opts), ctypes.byref(err))
        if not self._s:
            self._handle.release()
            raise ArgusqError(err)

    def close(self):
        s, self._s = getattr(self, "_s", None), None
        if s:
            _lib.argusq_session_free(s)
            self._handle.release()

    @property
    def trace(self):
        """The current trace ("" for the latest ingested)."""
        return _text(_lib.argusq_session_trace(self._s))

    def normals(self, steps):
        """`diagnose ... against traces` in this session judges the anomaly
        against these normal steps instead of its archive's: dicts as a
        diagnosis's "normal_sample" holds them (argusq.fleet pools every
        archive's), with "archive" where they are another archive's.  An
        empty list goes back to the archive's own."""
        keep = []  # the bytes the C structs point to, alive through the call

        def b(v):
            if v is None:
                return None
            keep.append(v.encode())
            return keep[-1]

        arr = (_native.NormalStep * max(1, len(steps)))()
        for i, st in enumerate(steps):
            parts = (_native.NormalPart * max(1, len(st["parts"])))()
            for j, p in enumerate(st["parts"]):
                parts[j] = _native.NormalPart(b(p["thread"]), b(p["state"]), p["ns"])
            keep.append(parts)
            arr[i] = _native.NormalStep(b(st["trace"]), b(st.get("archive")), st.get("node", 0), st["score"], bool(st.get("contained")),
                                        st["period"], bool(st.get("timeout")), b(st.get("waker")), parts,
                                        len(st["parts"]))
        err = _native.Error()
        if _lib.argusq_session_normals(self._s, arr, len(steps), ctypes.byref(err)) < 0:
            raise ArgusqError(err)

    def stream(self, script, write, statement=None):
        """Runs script, giving write(bytes) the output as it is produced and
        statement(index, trace) each statement's end; either may return
        True to stop the run (ArgusqError "stopped").  Returns how many
        statements ran."""
        src = script.encode() if isinstance(script, str) else script
        raised = []

        def on_write(ctx, buf, n):
            try:
                return 1 if write(ctypes.string_at(buf, n)) else 0
            except BaseException as e:  # noqa: B902 -- re-raised after the C call
                raised.append(e)
                return 1

        def on_statement(ctx, index, trace):
            try:
                if statement:
                    statement(index, _text(trace))
            except BaseException as e:  # noqa: B902
                raised.append(e)

        out = _native.Output(size=ctypes.sizeof(_native.Output), write=_native.WRITE_FN(on_write),
                             statement=_native.STATEMENT_FN(on_statement))
        err = _native.Error()
        n = _lib.argusq_session_stream(self._s, src, len(src), ctypes.byref(out), ctypes.byref(err))
        if raised:
            raise raised[0]
        if n < 0:
            raise ArgusqError(err)
        return n

    def results(self, script):
        """Every statement's Result (index, trace it read, JSON document)."""
        chunks, done = [], []

        def statement(index, trace):
            text = _text(b"".join(chunks))
            chunks.clear()
            done.append(Result(index, trace, json.loads(text) if text.strip() else None))

        self.stream(script, chunks.append, statement)
        return done

    def query(self, script):
        """The document of a single statement, or the list of a script's."""
        docs = [r.doc for r in self.results(script)]
        return docs[0] if len(docs) == 1 else docs

    def df(self, statement):
        """Archive.df in this session (its current trace)."""
        doc = self.query(statement)
        if isinstance(doc, list):
            raise ValueError("df() takes one statement")
        rows = next((v for v in (doc or {}).values() if isinstance(v, list)), [])
        return _frame(rows)

    def text(self, script):
        """The output in the session's format, as one string."""
        src = script.encode() if isinstance(script, str) else script
        buf, n = ctypes.c_void_p(), ctypes.c_size_t()
        err = _native.Error()
        rc = _lib.argusq_session_query(self._s, src, len(src), ctypes.byref(buf), ctypes.byref(n),
                                       ctypes.byref(err))
        try:
            out = _text(ctypes.string_at(buf, n.value)) if buf.value else ""
        finally:
            _lib.argusq_free(buf)
        if rc < 0:
            raise ArgusqError(err)
        return out


# ---- rows, streamed ----

# Iterators still open when the interpreter exits are stopped first: their
# threads are in libargusq's callbacks, where a daemon thread must not be
# frozen by the interpreter's shutdown.
_live_rows = weakref.WeakSet()


@atexit.register
def _stop_live_rows():
    for rows in list(_live_rows):
        rows.close()

_HEAD = re.compile(r'\s*\{\s*"((?:[^"\\]|\\.)*)"\s*:\s*(\S)')
_DECODER = json.JSONDecoder()


class Rows(_Closing):
    """An iterator over the rows of a statement's answer: the elements of
    the first list of its JSON document (`{"nodes":[...]}` gives the
    nodes), each parsed as soon as libargusq has written it, while the
    statement runs in a second thread.  A document whose first member is
    not a list (show node) is parsed whole and its first list given.

    key: the list's name, once known; trace: the trace the statement read
    (after the last row); extra: the document's other members (after the
    last row, e.g. a slice's "edges").  Closing the iterator early (or
    leaving a for loop) stops the statement's output."""

    def __init__(self, archive, statement, trace=None):
        self.key, self.trace, self.extra = None, None, {}
        self._q = queue.Queue(maxsize=16)
        self._stop = threading.Event()
        self._session = archive.session(trace)
        self._buf, self._pos, self._state = "", 0, "head"
        self._pending = collections.deque()
        self._done = False
        # the thread is given what it uses, not self: an iterator dropped
        # unfinished is then collected, and its __del__ stops the thread
        self._thread = threading.Thread(target=Rows._run, args=(self._session, statement, self._q, self._stop),
                                        daemon=True)
        self._thread.start()
        _live_rows.add(self)

    @staticmethod
    def _run(session, statement, q, stop):
        def put(item):
            while not stop.is_set():
                try:
                    q.put(item, timeout=0.1)
                    return False
                except queue.Full:
                    pass
            return True  # the reader stopped: tell libargusq to stop too

        try:
            session.stream(statement, lambda b: put(("data", b)), lambda i, t: put(("stmt", t)))
            put(("end", None))
        except BaseException as e:  # noqa: B902 -- handed to the reading thread
            put(("error", e))

    def __iter__(self):
        return self

    def __next__(self):
        try:
            while not self._pending:
                if self._done:
                    raise StopIteration
                kind, v = self._q.get()
                if kind == "data":
                    self._feed(_text(v), final=False)
                elif kind == "stmt":
                    self._feed("", final=True)
                    self.trace = v
                    self._buf, self._pos, self._state = "", 0, "head"
                else:
                    self.close()
                    if kind == "error":
                        raise v
        except BaseException:
            self.close()
            raise
        return self._pending.popleft()

    def _feed(self, text, final):
        self._buf += text
        while True:
            if self._state == "head":
                m = _HEAD.match(self._buf)
                if not m:
                    if final and self._buf.strip():
                        self._whole()
                    return
                if m.group(2) != "[":
                    self._state = "whole"
                    continue
                self.key = json.loads('"' + m.group(1) + '"')
                self._pos, self._state = m.end(), "items"
            elif self._state == "items":
                b, p = self._buf, self._pos
                while p < len(b) and b[p] in " \t\r\n,":
                    p += 1
                if p < len(b) and b[p] == "]":
                    self._buf, self._pos, self._state = b[p + 1:], 0, "tail"
                    continue
                try:
                    row, end = _DECODER.raw_decode(b, p)
                except json.JSONDecodeError:
                    if final:
                        raise
                    self._buf, self._pos = b[p:], 0  # wait for the rest of the row
                    return
                self._pending.append(row)
                self._pos = end
                if end > 65536:  # keep the buffer short
                    self._buf, self._pos = b[end:], 0
            elif self._state == "tail":
                if final:
                    rest = self._buf.strip()
                    if rest.startswith(","):
                        self.extra = json.loads("{" + rest[1:])
                return
            else:  # whole: parsed at the end
                if final:
                    self._whole()
                return

    def _whole(self):
        doc = json.loads(self._buf)
        lists = [(k, v) for k, v in doc.items() if isinstance(v, list)] if isinstance(doc, dict) else []
        if lists:
            self.key = lists[0][0]
            self._pending.extend(lists[0][1])
            self.extra = {k: v for k, v in doc.items() if k != self.key}
        else:
            self._pending.append(doc)
        self._buf = ""

    def close(self):
        """Stops the statement (if it still runs) and frees its session."""
        if self._done:
            return
        self._done = True
        self._pending.clear()
        self._stop.set()
        while self._thread.is_alive():
            try:
                self._q.get(timeout=0.1)
            except queue.Empty:
                pass
        self._thread.join()
        self._session.close()

