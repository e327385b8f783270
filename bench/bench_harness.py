"""bench/bench_harness.py -- what every part of `make bench` (bench/run.py)
measures with: the paths, a child process run and timed with its peak
RSS, medians and percentiles, archive sizes on disk, inputs built once,
and argusq itself (ingest into a fresh archive, statements, scripts).
Standard library only.

SLOW is set here by run.py from --slow; the other modules read it as
bench_harness.SLOW, so that there is one value.
"""
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BENCH = os.path.join(ROOT, "bench")
DATA = os.path.join(BENCH, "data")
WORK = os.path.join(DATA, "work")
MiB = 1024 * 1024
SLOW = 90  # seconds: a measurement whose run takes longer is not repeated (--slow)


def log(msg):
    print("bench: " + msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------- processes

class Run:
    """One finished child process."""

    def __init__(self, **kw):
        self.__dict__.update(kw)


def _status_kb(pid, keys):
    try:
        with open("/proc/%d/status" % pid) as f:
            out = {}
            for line in f:
                k, _, v = line.partition(":")
                if k in keys:
                    out[k] = int(v.split()[0])
            return out
    except (OSError, ValueError):
        return None


def settle():
    """Writes back what earlier runs left dirty in the page cache, so that
    a timed run does not pay for another's deferred writes (an unsynced
    ingest leaves a GB of them, which the next runs' fdatasync waited
    behind: the first two rebuilds after it took 13 s, the third 10.9)."""
    os.sync()


def run(cmd, stdout=None, stdin=None, timeout=1800, sample=True, check=True):
    """Runs cmd; returns wall seconds, cpu seconds, ru_maxrss (bytes),
    sampled peaks of RssAnon/RssFile (bytes), exit status, stdout text
    (when stdout is None), stderr text."""
    err = tempfile.TemporaryFile()
    out = tempfile.TemporaryFile() if stdout is None else stdout
    fin = open(stdin, "rb") if isinstance(stdin, str) else subprocess.DEVNULL
    peaks = {"RssAnon": 0, "RssFile": 0, "VmRSS": 0}
    done = threading.Event()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=out, stderr=err, stdin=fin)

    def sampler():
        while not done.wait(0.01):
            s = _status_kb(p.pid, peaks)
            if s is None:
                return
            for k, v in s.items():
                peaks[k] = max(peaks[k], v)
            if time.perf_counter() - t0 > timeout:
                p.kill()
                return

    th = None
    if sample:
        th = threading.Thread(target=sampler, daemon=True)
        th.start()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    done.set()
    if th:
        th.join()
    if fin is not subprocess.DEVNULL:
        fin.close()
    err.seek(0)
    errtext = err.read().decode(errors="replace")
    text = None
    if stdout is None:
        out.seek(0)
        text = out.read().decode(errors="replace")
    r = Run(cmd=cmd, wall=wall, cpu=ru.ru_utime + ru.ru_stime, maxrss=ru.ru_maxrss * 1024,
            anon=peaks["RssAnon"] * 1024, file=peaks["RssFile"] * 1024, rc=p.returncode,
            out=text, err=errtext)
    if check and r.rc != 0:
        raise SystemExit("bench: %s failed (exit %d):\n%s" % (" ".join(cmd), r.rc, errtext[-2000:]))
    return r


def med(xs):
    return statistics.median(xs) if xs else None


def pct(xs, p):
    """The p-th percentile (nearest rank)."""
    if not xs:
        return None
    s = sorted(xs)
    k = max(0, min(len(s) - 1, int(round(p / 100.0 * len(s) + 0.5)) - 1))
    return s[k]


def disk_bytes(path):
    """Allocated size (LMDB files are sparse), of a file and its -lock."""
    total = 0
    for p in (path, path + "-lock", path + "-journal", path + "-wal"):
        try:
            total += os.stat(p).st_blocks * 512
        except OSError:
            pass
    return total


def rm_archive(path):
    for p in (path, path + "-lock", path + "-journal", path + "-wal", path + "-shm"):
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


def src_hash(*paths):
    h = hashlib.sha1()
    for p in paths:
        with open(p, "rb") as f:
            h.update(f.read())
    return h.hexdigest()[:8]


def build_file(path, make, what):
    """Builds path with make(tmp) unless it exists; atomically."""
    if os.path.exists(path):
        return path
    log("building %s (%s)" % (os.path.relpath(path, ROOT), what))
    tmp = path + ".tmp"
    t0 = time.perf_counter()
    make(tmp)
    os.replace(tmp, path)
    log("  %.1f s, %.0f MB" % (time.perf_counter() - t0, os.path.getsize(path) / 1e6))
    return path


def prune(prefix, suffix):
    """Removes inputs made by an older version of their generator."""
    for name in os.listdir(DATA):
        p = os.path.join(DATA, name)
        if name.startswith(prefix) and not name.endswith(suffix) and os.path.isfile(p):
            os.unlink(p)


# ---------------------------------------------------------------- argusq

class Argusq:
    def __init__(self, exe):
        self.exe = exe

    def ingest(self, archive, trace, name, runs, keep=False, first=1):
        """Ingests trace into a fresh archive runs times; the summary and medians."""
        rs = []
        for i in range(first - 1, first - 1 + runs):
            rm_archive(archive)
            settle()
            r = run([self.exe, "-d", archive, "ingest", trace, "--name", name, "--json"])
            r.size = disk_bytes(archive)
            r.summary = json.loads(r.out.strip().splitlines()[-1])
            rs.append(r)
            log("  ingest %s run %d: %.2f s, %.0f MiB peak RSS" % (name, i + 1, r.wall, r.maxrss / MiB))
            if r.wall > SLOW:
                break
        if not keep:
            rm_archive(archive)
        s = rs[-1].summary
        size_in = os.path.getsize(trace)
        wall = med([r.wall for r in rs])
        cpu = med([r.cpu for r in rs])
        return {
            "trace": os.path.relpath(trace, ROOT) if trace.startswith(ROOT) else trace,
            "input_bytes": size_in,
            "events": s.get("events"),
            "nodes": s.get("nodes"),
            "edges": s.get("edges"),
            "threads": s.get("threads"),
            "processes": s.get("processes"),
            "runs": [round(r.wall, 3) for r in rs],
            "wall_s": wall,
            "cpu_s": cpu,
            "events_per_s": s["events"] / wall,
            "events_per_cpu_s": s["events"] / cpu if cpu else None,
            "mb_per_s": size_in / 1e6 / wall,
            "peak_rss_bytes": max(r.maxrss for r in rs),
            "peak_rss_anon_bytes": max(r.anon for r in rs),
            "peak_rss_file_bytes": max(r.file for r in rs),
            "archive_bytes": med([r.size for r in rs]),
            "archive_bytes_per_event": med([r.size for r in rs]) / max(1, s["events"]),
        }

    def q(self, archive, stmt, fmt=None, check=True, stdout=None):
        cmd = [self.exe, "-d", archive]
        if fmt:
            cmd += ["--format", fmt]
        return run(cmd + [stmt], stdout=stdout, sample=False, check=check)

    def script(self, archive, path, fmt=None, stdout=subprocess.DEVNULL):
        cmd = [self.exe, "-d", archive]
        if fmt:
            cmd += ["--format", fmt]
        return run(cmd + ["-f", path], stdout=stdout, sample=False)


# ---------------------------------------------------------------- numbers in the table

def count(n):
    return "%gM" % round(n / 1e6, 2) if n >= 1e6 else "%gk" % round(n / 1e3, 1)


def fmt_ms(s):
    return "-" if s is None else ("%.2f ms" % (s * 1e3) if s < 1 else "%.2f s" % s)
