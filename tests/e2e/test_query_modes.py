"""The query language from every door: one statement, a script
with -f, statements on stdin, the REPL on a terminal; and every output
format: table, JSON, CSV, DOT."""
import csv
import io
import json
import os
import pty
import select
import shutil
import subprocess
import time

from common import ARGUSQ, ArchiveCase, Repl, trace

UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'


class Modes(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ui = self.json(UI)["nodes"][0]

    def script(self, text, name="s.aq"):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_script_runs_statements_one_json_document_each(self):
        path = self.script(f"""-- the chain behind ui-main's longest wait
traces;
{UI};
slice back from node {self.ui['id']} depth 2;   -- two steps
""")
        out = self.ok("--json", "-f", path).stdout.splitlines()
        self.assertEqual(len(out), 3)
        docs = [json.loads(line) for line in out]
        self.assertEqual(docs[0]["traces"][0]["name"], "anomaly")
        self.assertEqual(docs[1]["nodes"][0]["id"], self.ui["id"])
        self.assertEqual(docs[2]["nodes"][0]["id"], self.ui["id"])
        self.assertEqual(max(n["depth"] for n in docs[2]["nodes"]), 2)

    def test_script_stops_at_first_failing_statement_and_names_its_line(self):
        path = self.script("traces;\n\nslice back from node 999999;\ntraces;\n", "bad.aq")
        p = self.run_argusq("--json", "-f", path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("bad.aq:3:", p.stderr)
        self.assertEqual(len(p.stdout.splitlines()), 1)  # the last `traces` did not run
        path = self.script("traces;\nfind nodes wher tid = 1;\n", "syntax.aq")
        p = self.run_argusq("-f", path)
        self.assertEqual(p.returncode, 1)
        self.assertIn("syntax.aq:2:12:", p.stderr)
        self.assertIn("^", p.stderr)

    def test_statements_from_stdin(self):
        p = self.ok("--json", stdin=f"traces; show node {self.ui['id']}\n")
        docs = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual(len(docs), 2)
        self.assertEqual(docs[1]["node"]["id"], self.ui["id"])
        self.assertTrue(any(e["kind"] == "wakeup" for e in docs[1]["in"]))

    def test_use_trace_switches_the_session(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        p = self.ok("--json", stdin=f'use trace "anomaly"; {UI}; use trace "normal"; {UI};')
        docs = [json.loads(line) for line in p.stdout.splitlines()]
        self.assertEqual(docs[0], {"trace": "anomaly"})
        self.assertGreater(docs[1]["nodes"][0]["blocked"], 250_000_000)
        self.assertLess(docs[3]["nodes"][0]["blocked"], 100_000_000)
        p = self.run_argusq('use trace "nope"')
        self.assertEqual(p.returncode, 1)
        self.assertIn('no trace named "nope"', p.stderr)
        self.assertIn(":1:11:", p.stderr)

    def test_in_trace_clause(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        a = self.json(UI.replace("limit 1", 'limit 1 in trace "anomaly"'))["nodes"][0]
        self.assertEqual(a["id"], self.ui["id"])
        p = self.run_argusq('find nodes limit 1 in trace "missing"')
        self.assertEqual(p.returncode, 1)
        self.assertIn("missing", p.stderr)

    def test_help(self):
        out = self.ok("help").stdout
        for word in ("find", "slice", "traces", "rule", "rebuild"):
            self.assertIn(word, out)
        self.assertIn("with weak", self.ok("help slice").stdout)
        # every form of every statement, not only each topic's first
        for syntax in ('diagnose thread "NAME"', 'critical path of thread "NAME"', 'drop trace "NAME"',
                       "rule connect TYPE", "rule ignore wakeup", "compare path (SLICE) with (SLICE)",
                       "group by FIELD", 'check fix of thread "NAME" in traces'):
            self.assertIn(syntax, out)
        self.assertIn("user preempt io", self.ok("help slice").stdout)
        p = self.run_argusq("help nothing")
        self.assertEqual(p.returncode, 1)
        self.assertIn('no help for "nothing"', p.stderr)
        # a keyword: the statements whose syntax has it, and only those
        to = self.ok("help to").stdout
        for syntax in ('export STATEMENT to "FILE"', 'rename trace "A" to "B"', "rule connect TYPE"):
            self.assertIn(syntax, to)
        self.assertNotIn("slice back|forward", to)
        self.assertIn("slice back|forward", self.ok("help weak").stdout)
        # before any ingest: help needs no archive, and makes none
        none = os.path.join(self.dir, "none.db")
        p = self.run_argusq("-d", none, "help diagnose", db=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("against traces where", p.stdout)
        p = self.run_argusq("-d", none, "help; traces", db=False)
        self.assertEqual(p.returncode, 2)
        self.assertIn("no such archive", p.stderr)
        self.assertFalse(os.path.exists(none))

    def test_usage_errors_exit_2(self):
        self.assertEqual(self.run_argusq("--bogus", "traces").returncode, 2)
        self.assertEqual(self.run_argusq("-f", os.path.join(self.dir, "none.aq")).returncode, 2)
        self.assertEqual(self.run_argusq("--format", "xml", "traces").returncode, 2)

    def test_repl_on_a_terminal(self):
        home = os.path.join(self.dir, "home")
        os.mkdir(home)
        pid, fd = pty.fork()
        if pid == 0:
            os.environ["HOME"] = home
            os.environ["TERM"] = "xterm"
            os.execv(ARGUSQ, [ARGUSQ, "-d", self.db])
        self.addCleanup(self.reap, pid)
        out = b""

        def read_until(marker, timeout=20):
            nonlocal out
            end = time.time() + timeout
            while marker not in out and time.time() < end:
                r, _, _ = select.select([fd], [], [], 0.2)
                if r:
                    try:
                        out += os.read(fd, 65536)
                    except OSError:
                        break
            return marker in out

        def prompt_after(marker):
            # wait for the marker, then for the prompt that follows it: keys
            # typed before libedit is reading again could be lost
            if not read_until(marker):
                return False
            start = out.index(marker)
            return read_until_from(b"argusq> ", start)

        def read_until_from(marker, start, timeout=20):
            end = time.time() + timeout
            while marker not in out[start:] and time.time() < end:
                read_until(marker * 2, timeout=0.2)  # read what is there
            return marker in out[start:]

        self.assertTrue(read_until(b"argusq> "))
        os.write(fd, b"traces\n")
        self.assertTrue(prompt_after(b"anomaly"))
        # a statement over three lines runs at its ';'
        os.write(fd, b'find nodes where thread = "ui-main"\n')
        self.assertTrue(read_until(b"...> "))
        os.write(fd, b"order by blocked desc\n")
        os.write(fd, b"limit 1;\n")
        self.assertTrue(prompt_after(b"283.9ms"))
        self.assertEqual(out.count(b"thread  ui-main"), 1, out.decode(errors="replace"))
        os.write(fd, b"slice back from node x;\n")
        self.assertTrue(prompt_after(b"syntax error"))
        os.write(fd, b"\x04")
        self.assertTrue(self.reap(pid, timeout=20), "Ctrl-D ends the REPL")
        with open(os.path.join(home, ".argusq_history")) as f:
            hist = f.read().replace("\\040", " ")
        self.assertIn("traces", hist)
        # the three-line statement is one history entry
        self.assertIn('find nodes where thread = "ui-main" order by blocked desc limit 1;', hist)


    def test_ctrl_d_quits_a_terminal_that_cannot_edit(self):
        """TERM=dumb (an editor's shell buffer): lines as the terminal gives
        them, and Ctrl-D on an empty line ends the REPL."""
        repl = Repl(self.db, {"TERM": "dumb", "HOME": self.dir})
        self.addCleanup(self.reap, repl.pid)
        self.assertTrue(repl.read_until(b"argusq> "))
        repl.write(b"traces;\n")
        self.assertTrue(repl.read_until(b"anomaly"))
        # the prompt after the answer: a key typed before it could be lost
        self.assertTrue(repl.read_until(b"argusq> ", start=repl.out.index(b"anomaly")))
        repl.write(b"\x04")
        self.assertTrue(self.reap(repl.pid, timeout=10), repl.out)

    def test_use_trace_holds_from_one_repl_line_to_the_next(self):
        """The REPL runs each statement in one libargusq session: `use
        trace` on one line is the current trace of the lines after it."""
        self.ingest(trace("lockchain-normal.txt"), name="normal")  # now the latest
        repl = Repl(self.db, {"TERM": "dumb", "HOME": self.dir})
        self.addCleanup(self.reap, repl.pid)
        self.assertTrue(repl.read_until(b"argusq> "))
        start = len(repl.out)
        repl.write(b'use trace "anomaly";\n')
        # the prompt names the current trace from then on
        self.assertTrue(repl.read_until(b"(anomaly) argusq> ", start=start), repl.out)
        start = len(repl.out)
        repl.write(UI.encode() + b";\n")
        self.assertTrue(repl.read_until(b"283.9ms", start=start), repl.out)  # anomaly's, not normal's
        self.assertTrue(repl.read_until(b"(anomaly) argusq> ", start=repl.out.index(b"283.9ms")))
        repl.write(b"\x04")
        self.assertTrue(self.reap(repl.pid, timeout=10), repl.out)

    def test_a_query_does_not_load_trace_cmds_libraries(self):
        """libtracecmd and the libraries under it are loaded (dlopen) when a
        trace.dat is read, not for every query: the dynamic loader's own
        log (LD_DEBUG=files) names each object it opens."""
        env = {"LD_DEBUG": "files"}
        p = self.ok("find nodes limit 1", env=env)
        self.assertIn("file=libc.so.6", p.stderr)  # the log is there at all
        self.assertNotIn("libtracecmd", p.stderr)
        self.assertNotIn("libtraceevent", p.stderr)
        p = self.ok("ingest", trace("lockchain-anomaly.dat"), "--name", "dat", env=env)
        self.assertIn("file=libtracecmd.so.1", p.stderr)
        self.assertIn("file=libtraceevent.so.1", p.stderr)

    def test_a_bare_word_for_a_named_value_is_refused(self):
        """`type = dispatch_enqueue` (unquoted): an error that says what to
        write, never quietly nothing.  (A kind's name is the kind:
        test_language.)"""
        for stmt, col, field in (("find events where type = wakeup", 26, "type"),
                                 ('find events where tid = 4122 and phase = begin', 42, "phase")):
            p = self.run_argusq(stmt)
            self.assertEqual(p.returncode, 1, stmt)
            word = stmt.split()[-1]
            self.assertIn(f'query:1:{col}: unknown field "{word}": to compare {field} with a value, quote it: '
                          f'{field} = "{word}"', p.stderr)
        # quoted, they work; and two fields still compare
        self.assertTrue(self.json('find events where type = "wakeup" limit 1')["events"])
        self.assertTrue(self.json("find events where tid = pid limit 1")["events"])

    @staticmethod
    def reap(pid, timeout=0):
        """Waits for the REPL to exit; kills it if it has not by then."""
        end = time.time() + timeout
        while True:
            try:
                done, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                return True
            if done:
                return True
            if time.time() >= end:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                return False
            time.sleep(0.05)


class Formats(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ui = self.json(UI)["nodes"][0]

    def test_csv_has_a_header_row_and_raw_values(self):
        rows = list(csv.DictReader(io.StringIO(self.ok("--format", "csv", UI).stdout)))
        self.assertEqual(len(rows), 1)
        self.assertEqual(int(rows[0]["id"]), self.ui["id"])
        self.assertEqual(int(rows[0]["blocked"]), self.ui["blocked"])
        self.assertEqual(rows[0]["thread"], "ui-main")
        rows = list(csv.DictReader(io.StringIO(
            self.ok("--format", "csv", f"events of node {self.ui['id']}").stdout)))
        self.assertEqual(len(rows), self.ui["events"])
        self.assertTrue(all(int(r["node"]) == self.ui["id"] for r in rows))
        # a field with commas is quoted
        self.assertTrue(any("," in r["attributes"] for r in rows))
        rows = list(csv.DictReader(io.StringIO(
            self.ok("--format", "csv", f"slice back from node {self.ui['id']} depth 3").stdout)))
        self.assertEqual([r["thread"] for r in rows][:3], ["ui-main", "worker", "hog"])
        self.assertEqual(list(csv.reader(io.StringIO(self.ok("--format", "csv", "traces").stdout)))[1][0], "anomaly")

    def test_dot_is_valid_graphviz(self):
        dot = self.ok("--format", "dot", f"slice back from node {self.ui['id']} depth 4").stdout
        self.assertTrue(dot.startswith("digraph"))
        sl = self.json(f"slice back from node {self.ui['id']} depth 4")
        for e in sl["edges"]:
            self.assertIn(f"n{e['from']} -> n{e['to']} [label=\"{e['kind']}\"", dot)
        self.assertIn("worker", dot)
        self.assertIsNotNone(shutil.which("dot"), "graphviz is installed by the Makefile")
        p = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("<svg", p.stdout)
        show = self.ok("--format", "dot", f"show node {self.ui['id']}").stdout
        self.assertEqual(subprocess.run(["dot", "-Tsvg"], input=show, capture_output=True, text=True).returncode, 0)
        p = self.run_argusq("--format", "dot", "traces")
        self.assertEqual(p.returncode, 1)
        self.assertIn("dot", p.stderr)

    def test_table_is_aligned_with_readable_times(self):
        out = self.ok(f"slice back from node {self.ui['id']} depth 3").stdout.splitlines()
        header = out[0]
        self.assertTrue(header.startswith("depth"))
        col = header.index("thread")
        self.assertTrue(all(line[col - 2:col] == "  " for line in out[1:4]))
        self.assertRegex(out[1], r"\d+\.\dms")
        self.assertIn("longest chain: ui-main", "\n".join(out))

    def test_slice_forward_via_and_weak(self):
        sl = self.json(f"slice back from node {self.ui['id']} depth 4 via wakeup")
        self.assertEqual({e["kind"] for e in sl["edges"]}, {"wakeup"})
        worker = [n for n in self.json(f"slice back from node {self.ui['id']} depth 1")["nodes"] if n["thread"] == "worker"][0]
        # weak edges run from a wait to the wakeup that answered it: into the
        # waker's node, from the waiter's node before its wait
        self.assertNotIn("weak", {e["kind"] for e in self.json(f"slice back from node {worker['id']} depth 1")["edges"]})
        weak = self.json(f"slice back from node {worker['id']} depth 1 with weak")
        w = [e for e in weak["edges"] if e["kind"] == "weak"]
        self.assertTrue(w)
        waiters = {n["id"]: n["thread"] for n in weak["nodes"]}
        self.assertIn("ui-main", [waiters[e["from"]] for e in w])
        fw = self.json(f"slice forward from node {worker['id']} depth 1")
        self.assertIn(self.ui["id"], [n["id"] for n in fw["nodes"]])
        p = self.run_argusq(f"slice back from node {self.ui['id']} via wakeup, wakup")
        self.assertEqual(p.returncode, 1)
        self.assertIn('unknown edge kind "wakup"', p.stderr)

    def test_expressions(self):
        n = self.json('find nodes where (thread = "worker" or thread = "hog") and not blocked < 250ms')["nodes"]
        self.assertEqual(sorted(x["thread"] for x in n), ["hog", "worker"])
        n = self.json('find nodes where thread in ("worker", "hog") and blocked >= 0x10000000')["nodes"]
        self.assertEqual(len(n), 2)
        ev = self.json('find events where type not in ("raw", "syscall", "wait", "wakeup") and tid = 4124 limit 5')["events"]
        self.assertTrue(ev)
        self.assertTrue(all(e["type"].startswith("timer") for e in ev))
        ev = self.json("find events where tid = 4124 order by ts desc limit 3")["events"]
        self.assertEqual([e["ts"] for e in ev], sorted([e["ts"] for e in ev], reverse=True))
