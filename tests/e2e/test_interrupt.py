"""Ctrl-C (data safety).  In the REPL it ends the line being
typed (with the statement it continued) or the statement running, and the
session -- its `use trace`, its format -- goes on; Ctrl-D ends it with
status 0.  A command (a statement, an ingest) ends by SIGINT, as without
a handler, but only once what it was doing is undone: an interrupted
ingest leaves no trace and the archive's counts as they were, an
interrupted export leaves the old file.  Every ^C goes through a pseudo-
terminal, as a user's does (the terminal sends SIGINT to the foreground
process group); every wait is a poll with a generous timeout."""
import os
import pty
import select
import signal
import time

from common import ARGUSQ, ArchiveCase, trace

BIG = trace("diskio-anomaly.trace")  # 1.7 MB of text: seconds to ingest under ASan
UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'


def written(folder, prefix):
    """Bytes in the files of folder whose names start with prefix (a file
    may go between the listing and its stat)."""
    n = 0
    for name in os.listdir(folder):
        if name.startswith(prefix):
            try:
                n += os.path.getsize(os.path.join(folder, name))
            except FileNotFoundError:
                pass
    return n


class Terminal:
    """argusq on a pseudo-terminal: out is all it wrote so far."""

    def __init__(self, args, env):
        self.pid, self.fd = pty.fork()
        if self.pid == 0:
            # Ctrl-C as a user's terminal sends it: a test run started where
            # SIGINT is ignored (a background job of a shell without job
            # control) would pass that on, and argusq keeps an ignored SIGINT
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.environ.update(env)
            os.execv(ARGUSQ, [ARGUSQ] + args)
        self.out = b""
        self.status = None

    def read(self, timeout):
        r, _, _ = select.select([self.fd], [], [], timeout)
        if r:
            try:
                self.out += os.read(self.fd, 1 << 16)
            except OSError:  # the other side closed: the process ended
                return False
        return True

    def read_until(self, marker, start=0, timeout=60):
        """Reads until marker is in out[start:] (True) or timeout seconds pass."""
        end = time.time() + timeout
        while marker not in self.out[start:] and time.time() < end:
            if not self.read(0.2):
                break
        return marker in self.out[start:]

    def send(self, data):
        """Types data; returns where what argusq writes after it begins in
        out.  (Callers wait for the prompt first: keys typed before libedit
        reads again could be lost.)"""
        start = len(self.out)
        os.write(self.fd, data)
        return start

    def wait(self, timeout=60):
        """The wait status once the process ended (None: still running
        after timeout seconds); what it wrote is read meanwhile."""
        end = time.time() + timeout
        while self.alive() and time.time() < end:
            self.read(0.1)
        while self.read(0.05) and select.select([self.fd], [], [], 0)[0]:
            pass
        return self.status

    def alive(self):
        if self.status is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.status = status
        return self.status is None

    def close(self):
        if self.status is None:
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except ChildProcessError:
                pass
        os.close(self.fd)


class Repl(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ingest(BIG, name="big")  # the latest: what a statement reads without `use trace`
        self.ui = self.json(f'{UI} in trace "anomaly"')["nodes"][0]["id"]
        self.assertNotEqual(self.json(UI)["nodes"][0]["id"], self.ui)  # big's ui-main
        self.events = self.json("traces")["traces"][1]["events"]

    def repl(self, term, env=None):
        t = Terminal(["-d", self.db, "--json"], dict({"TERM": term, "HOME": self.dir}, **(env or {})))
        self.addCleanup(t.close)
        self.assertTrue(t.read_until(b"argusq> "), t.out)
        return t

    def statement(self, t, text, answer):
        """Runs text; answer is in its output, and a prompt follows it."""
        start = t.send(text)
        self.assertTrue(t.read_until(answer, start), t.out[start:])
        self.assertTrue(t.read_until(b"argusq> ", t.out.index(answer, start)), t.out[start:])
        return t.out[start:]

    def assert_session_holds(self, t):
        """`use trace "anomaly"` still holds: ui-main's worst node is
        anomaly's, not big's (the latest)."""
        self.statement(t, UI.encode() + b";\n", b'"id":%d,' % self.ui)
        self.assertTrue(t.alive())

    def ctrl_d(self, t):
        """Ctrl-D, sent again while argusq runs: libedit sets the terminal
        up after the prompt is written, with TCSAFLUSH, which drops what was
        typed ahead of that (on a loaded machine, long after the prompt).
        The wait status, None if it still runs."""
        status = None
        for _ in range(12):
            t.send(b"\x04")
            status = t.wait(5)
            if status is not None:
                break
        return status

    def ctrl_c_at_the_prompt_and_in_a_statement(self, term):
        t = self.repl(term)
        self.statement(t, b'use trace "anomaly";\n', b'{"trace":"anomaly"}')
        # at an empty prompt: a fresh prompt
        start = t.send(b"\x03")
        self.assertTrue(t.read_until(b"argusq> ", start), t.out[start:])
        self.assert_session_holds(t)
        # inside a statement of three lines: the two typed go with the third
        start = t.send(b'find nodes where thread = "ui-main"\n')
        self.assertTrue(t.read_until(b"...> ", start))
        start = t.send(b"order by blocked desc\n")
        self.assertTrue(t.read_until(b"...> ", start))
        start = t.send(b"limit")
        self.assertTrue(t.read_until(b"limit", start))  # echoed: the line is being typed
        start = t.send(b"\x03")
        self.assertTrue(t.read_until(b"argusq> ", start), t.out[start:])
        out = self.statement(t, b"limit 1;\n", b"argusq: query:1:1: syntax error")
        self.assertNotIn(b'"nodes"', out)  # what was typed before ^C is gone
        self.assert_session_holds(t)
        # during a statement: `find events` of big writes about 4 MB of JSON,
        # and the terminal takes 64 KB before argusq's writes wait for this
        # side to read, which it does not until the ^C is sent
        start = t.send(b'find events in trace "big";\n')
        self.assertTrue(t.read_until(b'{"events":[', start), t.out[start:])
        t.send(b"\x03")
        self.assertTrue(t.read_until(b"argusq: interrupted", start), t.out[start:][-2000:])
        self.assertTrue(t.read_until(b"argusq> ", t.out.index(b"argusq: interrupted", start)))
        # the last event: the answer was cut short
        self.assertNotIn(b'"id":%d,' % self.events, t.out[start:])
        self.assert_session_holds(t)
        # Ctrl-D ends the REPL, with status 0
        status = self.ctrl_d(t)
        self.assertIsNotNone(status, "Ctrl-D ends the REPL")
        self.assertTrue(os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, t.out[-500:]))

    def test_ctrl_c_in_the_repl(self):
        self.ctrl_c_at_the_prompt_and_in_a_statement("xterm")

    def test_ctrl_c_in_the_repl_of_a_terminal_that_cannot_edit(self):
        """TERM=dumb: lines as the terminal's line discipline gives them
        (getline), which discards a line at ^C itself."""
        self.ctrl_c_at_the_prompt_and_in_a_statement("dumb")

    def test_an_interrupted_rebuild_keeps_the_graph(self):
        """`rebuild graph` writes a new copy of the trace in batches while
        the old one is read: ^C once some are committed, and the trace
        keeps its graph.  A rebuild that ends before the ^C is sent is
        tried again, in a REPL of its own (one whose ^C came at the prompt
        may have lost the keys typed next)."""
        before = self.json("traces")["traces"]
        nodes = self.json('find nodes in trace "big"')["nodes"]
        for attempt in range(10):
            t = self.repl("xterm", {"ARGUSQ_BATCH_OPS": "100"})
            self.statement(t, b'use trace "anomaly";\n', b'{"trace":"anomaly"}')
            size = os.path.getsize(self.db)
            start = t.send(b'rebuild graph in trace "big";\n')
            end = time.time() + 60
            while os.path.getsize(self.db) < size + (64 << 10) and time.time() < end \
                    and b"argusq> " not in t.out[start:]:
                t.read(0.01)
            if b"argusq> " in t.out[start:]:
                continue  # rebuilt before the ^C: again
            t.send(b"\x03")
            self.assertTrue(t.read_until(b"argusq> ", start), t.out[start:])
            if b"argusq: interrupted" in t.out[start:]:
                break
        else:
            self.fail("every rebuild ended before its ^C")
        self.assertNotIn(b'"rules"', t.out[start:])
        self.assertEqual(self.json("traces")["traces"], before)
        self.assertEqual(self.json('find nodes in trace "big"')["nodes"], nodes)
        self.assert_session_holds(t)
        self.assertEqual(self.ctrl_d(t), 0, t.out[-500:])


class Command(ArchiveCase):
    """Outside the REPL, ^C ends argusq by SIGINT once it undid its work."""

    def test_an_interrupted_ingest_leaves_nothing(self):
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        before = self.json("info")
        names = [t["name"] for t in self.json("traces")["traces"]]
        # ^C once some batches of the trace are committed (small batches:
        # many commits); an ingest that ends first is dropped and tried again
        for attempt in range(10):
            t = Terminal(["-d", self.db, "ingest", BIG, "--name", f"big{attempt}"], {"ARGUSQ_BATCH_OPS": "100"})
            self.addCleanup(t.close)
            size = os.path.getsize(self.db)
            end = time.time() + 60
            while os.path.getsize(self.db) < size + (64 << 10) and time.time() < end and t.alive():
                t.read(0.01)
            t.send(b"\x03")
            status = t.wait()
            self.assertIsNotNone(status, t.out)
            if os.WIFSIGNALED(status):
                break
            self.assertEqual(os.WEXITSTATUS(status), 0, t.out)  # ingested before the ^C: again
            self.json(f'drop trace "big{attempt}"')
        else:
            self.fail("every ingest ended before its ^C")
        self.assertEqual(os.WTERMSIG(status), signal.SIGINT, t.out)  # status 130 in a shell
        self.assertIn(b"diskio-anomaly.trace: interrupted; nothing of it was kept\r\n", t.out)
        self.assertNotIn(b"runtime error", t.out)
        self.assertEqual([t["name"] for t in self.json("traces")["traces"]], names)
        after = self.json("info")
        for k in ("traces", "events", "nodes", "edges"):
            self.assertEqual(after[k], before[k], k)
        self.assertEqual(self.ingest(trace("lockchain-normal.txt"), name="normal")["trace"], "normal")

    def test_an_interrupted_export_keeps_the_old_file(self):
        """^C once the export has written 64 KB of its temporary file: the
        old file stays and the temporary one goes.  An export that ends
        before the ^C gets there is tried again."""
        self.ingest(BIG, name="big")
        keep = os.path.join(self.dir, "keep.json")
        files = sorted(os.listdir(self.dir)) + ["keep.json"]
        for attempt in range(10):
            with open(keep, "wb") as f:
                f.write(b"precious\n")
            t = Terminal(["-d", self.db, f'export find events to "{keep}"'], {})
            self.addCleanup(t.close)
            end = time.time() + 60
            while time.time() < end and t.alive() and written(self.dir, "keep.json.tmp-") < 64 << 10:
                t.read(0.01)
            t.send(b"\x03")
            status = t.wait()
            self.assertIsNotNone(status, t.out)
            if os.WIFSIGNALED(status):
                break
            self.assertEqual(os.WEXITSTATUS(status), 0, t.out)  # exported before the ^C: again
        else:
            self.fail("every export ended before its ^C")
        self.assertEqual(os.WTERMSIG(status), signal.SIGINT, t.out)
        self.assertIn(b"argusq: interrupted", t.out)
        with open(keep, "rb") as f:
            self.assertEqual(f.read(), b"precious\n")
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(files))
