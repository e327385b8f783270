"""argusq ingest - (standard input) and pipes: the same trace as from
the file, named as what was given."""
import os
import pty
import subprocess
import threading

from common import ARGUSQ, ArchiveCase, trace

SHARED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "traces")


class Stdin(ArchiveCase):
    def ingest_bytes(self, data, *args):
        return subprocess.run([ARGUSQ, "-d", self.db, "ingest", "-", "--json"] + list(args), input=data,
                              capture_output=True, timeout=120)

    def graph(self, name):
        t = [t for t in self.json("traces")["traces"] if t["name"] == name][0]
        return t["events"], t["nodes"], t["edges"], t["format"]

    def test_text_on_stdin_is_the_file(self):
        path = trace("lockchain-anomaly.txt")
        self.ingest(path, name="file")
        with open(path, "rb") as f:
            p = self.ingest_bytes(f.read(), "--arch", "x86_64")
        self.assertEqual(p.returncode, 0, p.stderr)
        t = [t for t in self.json("traces")["traces"] if t["name"] == "stdin"][0]
        self.assertEqual(t["source"], "-")
        self.assertEqual(self.graph("stdin"), self.graph("file"))
        # the same answer
        a = self.json("--trace", "file", "diagnose thread \"ui-main\"")
        b = self.json("--trace", "stdin", "diagnose thread \"ui-main\"")
        self.assertEqual(a["anomaly"]["id"], b["anomaly"]["id"])
        self.assertEqual([x["node"] for x in a["suspects"]], [x["node"] for x in b["suspects"]])

    def test_trace_dat_on_stdin(self):
        """A binary trace read more than once (trace.dat) comes through a pipe too."""
        path = os.path.join(SHARED, "pipeline.dat")
        if not os.path.exists(path):
            self.skipTest(f"{path} is not there (../shared beside the project)")
        self.ingest(path, name="file")
        with open(path, "rb") as f:
            p = self.ingest_bytes(f.read(), "--name", "piped")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.graph("piped"), self.graph("file"))

    def test_a_pipe_given_by_its_path(self):
        """`argusq ingest <(zcat t.gz)`: a pipe's /dev/fd path, its source kept."""
        r, w = os.pipe()
        with open(trace("lockchain-normal.txt"), "rb") as f:
            data = f.read()

        def feed():
            with os.fdopen(w, "wb") as out:
                out.write(data)

        t = threading.Thread(target=feed)
        t.start()
        p = subprocess.run([ARGUSQ, "-d", self.db, "ingest", f"/dev/fd/{r}", "--name", "fifo", "--arch", "x86_64"],
                           pass_fds=(r,), capture_output=True, text=True, timeout=120)
        t.join()
        os.close(r)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.ingest(trace("lockchain-normal.txt"), name="file")
        self.assertEqual(self.graph("fifo"), self.graph("file"))
        src = [t["source"] for t in self.json("traces")["traces"] if t["name"] == "fifo"]
        self.assertEqual(src, [f"/dev/fd/{r}"])

    def test_bad_input_on_stdin_names_it(self):
        p = self.ingest_bytes(b"not a trace\nat all\n")
        self.assertEqual(p.returncode, 1)
        self.assertTrue(p.stderr.decode().startswith("argusq: -:1: unknown trace format"), p.stderr)
        self.assertEqual(self.json("traces")["traces"], [], "nothing ingested")
        # a malformed line further in: its number, on stdin too
        with open(trace("lockchain-anomaly.txt"), "rb") as f:
            lines = f.read().split(b"\n")
        lines[40] = b"  <idle>-0  [000]  this is no event"
        p = self.ingest_bytes(b"\n".join(lines), "--arch", "x86_64")
        self.assertEqual(p.returncode, 1)
        self.assertIn("argusq: -:41:", p.stderr.decode())
        self.assertNotIn("/proc/self/fd", p.stderr.decode())
        self.assertEqual(self.json("traces")["traces"], [])

    def test_a_terminal_is_no_trace(self):
        """ingest - on a terminal says to pipe a trace, rather than wait for one typed in."""
        master, slave = pty.openpty()
        try:
            p = subprocess.run([ARGUSQ, "-d", self.db, "ingest", "-"], stdin=slave, capture_output=True, text=True,
                               timeout=30)
        finally:
            os.close(slave)
            os.close(master)
        self.assertEqual(p.returncode, 2)
        self.assertIn("standard input is a terminal", p.stderr)
        self.assertFalse(os.path.exists(self.db), "no archive made")
