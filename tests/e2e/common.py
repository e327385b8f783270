"""Helpers for the end-to-end tests: run the argusq binary for real."""
import collections
import json
import os
import pty
import select
import signal
import shutil
import subprocess
import tempfile
import time
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TRACES = os.path.join(ROOT, "tests", "traces")
ARGUSQ = os.path.abspath(os.environ.get("ARGUSQ", os.path.join(ROOT, "build", "argusq")))


def trace(name):
    return os.path.join(TRACES, name)


HERE = [os.path.join(ROOT, "tests", "traces"), os.path.join(ROOT, "..", "shared", "traces")]


def arch_of(path):
    """Text traces recorded on this kind of machine (tests/traces,
    ../shared/traces) are x86-64's: say so, as a user would (ingest --arch),
    so that their syscall numbers are named; text does not say it itself."""
    real = os.path.realpath(path)
    mine = any(real.startswith(os.path.realpath(d) + os.sep) for d in HERE)
    return ["--arch", "x86_64"] if mine and real.endswith((".txt", ".trace")) else []


class ArchiveCase(unittest.TestCase):
    """Each test gets a fresh archive in a temporary directory."""

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="argusq-e2e-")
        self.db = os.path.join(self.dir, "argus.db")

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def run_argusq(self, *args, stdin=None, env=None, db=True):
        cmd = [ARGUSQ] + (["-d", self.db] if db else []) + list(args)
        e = dict(os.environ)
        e.pop("ARGUSQ_DB", None)
        if env:
            e.update(env)
        return subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=e, cwd=self.dir,
                              timeout=120)

    def ok(self, *args, **kw):
        p = self.run_argusq(*args, **kw)
        self.assertEqual(p.returncode, 0, f"argusq {' '.join(args)} failed:\n{p.stderr}")
        self.assertNotIn("runtime error", p.stderr)
        return p

    def json(self, *args, **kw):
        return json.loads(self.ok("--json", *args, **kw).stdout)

    def ingest(self, path, name=None):
        args = ["ingest", path, "--json"] + (["--name", name] if name else []) + arch_of(path)
        return self.json(*args)

    def assert_one_cpu_at_a_time(self, switches):
        """No thread runs on two CPUs at once: what each CPU runs, from its
        sched_switch events (find events, in time order)."""
        running, spans = {}, collections.defaultdict(list)
        for e in switches:
            if e["cpu"] in running and running[e["cpu"]][0]:
                tid, begin = running[e["cpu"]]
                spans[tid].append((begin, e["ts"], e["cpu"]))
            running[e["cpu"]] = (e["next_pid"], e["ts"])
        for tid, spl in spans.items():
            spl.sort()
            for a, b in zip(spl, spl[1:]):
                self.assertFalse(b[0] < a[1] and a[2] != b[2], f"thread {tid} on CPUs {a[2]} and {b[2]} at {b[0]}")


class Repl:
    """argusq's REPL on a pseudo-terminal: out is all it wrote so far."""

    def __init__(self, db, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            # Ctrl-C as a user's terminal sends it: a test run started where
            # SIGINT is ignored (a background job of a shell without job
            # control) would pass that on, and argusq keeps an ignored SIGINT
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.environ.update(env)
            os.execv(ARGUSQ, [ARGUSQ, "-d", db])
        self.out = b""

    def read_until(self, marker, timeout=20, start=0):
        """Reads until marker is in out[start:] (True), or timeout seconds pass."""
        end = time.time() + timeout
        while marker not in self.out[start:] and time.time() < end:
            r, _, _ = select.select([self.fd], [], [], 0.2)
            if r:
                try:
                    self.out += os.read(self.fd, 65536)
                except OSError:
                    break
        return marker in self.out[start:]

    def write(self, data):
        os.write(self.fd, data)

    def kill(self):
        os.close(self.fd)
        os.kill(self.pid, 9)
        os.waitpid(self.pid, 0)


def count_event_lines(path):
    """Event lines of an ftrace text file: not comments, not headers."""
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            s = line.strip()
            if not s or s.startswith("#") or s.startswith("cpus=") or s.startswith("version ="):
                continue
            if s.startswith("CPU ") and s.endswith("is empty"):
                continue
            n += 1
    return n


# ---- a protobuf wire walk, independent of the reader ----

def pb_varint(b, i):
    """A protobuf varint of b at i: (value, the index after it)."""
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def pb_fields(b):
    """The fields of a protobuf message, (number, wire type, value), read
    independently of argusq's reader (the tests' oracle)."""
    i = 0
    while i < len(b):
        t, i = pb_varint(b, i)
        n, w = t >> 3, t & 7
        if w == 0:
            v, i = pb_varint(b, i)
        elif w == 1:
            v, i = b[i:i + 8], i + 8
        elif w == 5:
            v, i = b[i:i + 4], i + 4
        elif w == 2:
            ln, i = pb_varint(b, i)
            v, i = b[i:i + ln], i + ln
        else:
            raise ValueError(f"wire type {w}")
        yield n, w, v
