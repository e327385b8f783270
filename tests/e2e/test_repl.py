"""The REPL as a shell, driven on a pseudo-terminal with line
editing (TERM=xterm): `.format`, `.timer`, `.headers`, `.expanded` (\\x),
`.rows` and `.pager` settings and the row count after a table, the current trace
in the prompt, Tab completion of keywords and (in a string) of the
archive's trace and thread names, Enter on an empty line and a lone `;`
that ask nothing, history across sessions."""
import fcntl
import os
import struct
import termios
import time
import unittest

from common import ArchiveCase, Repl, trace


class Shell(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), "anomaly")
        self.ingest(trace("lockchain-normal.txt"), "normal")  # the latest
        self.home = os.path.join(self.dir, "home")
        os.mkdir(self.home)

    def start(self):
        r = Repl(self.db, {"TERM": "xterm", "HOME": self.home})
        self.addCleanup(lambda: r.kill() if r.pid else None)
        self.assertTrue(r.read_until(b"argusq> "), r.out)
        return r

    def run_line(self, r, line, want, prompt=b"argusq> "):
        """Types line; want appears after it, then a prompt."""
        start = len(r.out)
        r.write(line)
        self.assertTrue(r.read_until(want, start=start), r.out[start:])
        at = r.out.index(want, start)
        self.assertTrue(r.read_until(prompt, start=at), r.out[start:])
        return r.out[start:]

    def quit(self, r):
        """Ctrl-D until the REPL ends: once a second, for up to a minute (a
        busy 2-core machine may take seconds to schedule it)."""
        end = time.time() + 60
        while time.time() < end:
            r.write(b"\x04")
            for _ in range(10):
                pid, _ = os.waitpid(r.pid, os.WNOHANG)
                if pid:
                    r.pid = 0
                    return
                r.read_until(b"never", timeout=0.1)
        self.fail("Ctrl-D did not end the REPL: " + repr(r.out[-300:]))

    def test_settings_prompt_and_empty_input(self):
        r = self.start()
        # Enter on an empty line: the prompt again, not the continuation's
        out = self.run_line(r, b"\n", b"argusq> ")
        self.assertNotIn(b"...>", out)
        # a lone `;` asks nothing: no error
        out = self.run_line(r, b";\n", b"argusq> ")
        self.assertNotIn(b"argusq:", out)
        out = self.run_line(r, b".format csv\n", b"argusq> ")
        out = self.run_line(r, b"find nodes limit 2;\n", b"\r\n1,thread,")
        self.assertIn(b"id,kind,thread,tid,proc,pid,begin,duration,blocked,events,end,running,runnable,cpu", out)
        self.run_line(r, b".format table\n", b"argusq> ")
        out = self.run_line(r, b".timer on\n", b"argusq> ")
        out = self.run_line(r, b"traces;\n", b"time: ")
        self.assertRegex(out.decode(errors="replace"), r"time: \d+\.\d{3} s")
        self.run_line(r, b".timer off\n", b"argusq> ")
        out = self.run_line(r, b"traces;\n", b"normal")
        self.assertNotIn(b"time:", out)
        out = self.run_line(r, b".format nope\n", b".format table|json|csv")
        out = self.run_line(r, b".nope\n", b"unknown command .nope")
        # the prompt names the current trace once `use trace` set one
        self.run_line(r, b'use trace "anomaly";\n', b"(anomaly) argusq> ", prompt=b"(anomaly) argusq> ")
        self.quit(r)

    def test_rows_headers_expanded_and_pager(self):
        """psql's and sqlite3's table settings: "(N rows)" after a table (the
        rows the JSON has), `.headers off`, `\\x` (a block per row), and
        `.pager on`, which sends output longer than the terminal through
        $PAGER and leaves short output as it is."""
        n = len(self.json("--trace", "normal", "find nodes where kind = thread limit 7")["nodes"])
        self.assertEqual(n, 7)
        r = self.start()
        out = self.run_line(r, b"find nodes where kind = thread limit 7;\n", b"(7 rows)")
        self.assertIn(b"node  kind", out)
        out = self.run_line(r, b"find nodes where kind = thread limit 1;\n", b"(1 row)")
        # JSON and prose are not rows
        out = self.run_line(r, b".format json\n", b"argusq> ")
        out = self.run_line(r, b"find nodes limit 1;\n", b'{"nodes":[')
        self.assertNotIn(b"rows)", out)
        self.run_line(r, b".format table\n", b"argusq> ")
        out = self.run_line(r, b".headers off\n", b"argusq> ")
        out = self.run_line(r, b"find nodes where kind = thread limit 2;\n", b"(2 rows)")
        self.assertNotIn(b"node  kind", out)
        self.run_line(r, b".headers on\n", b"argusq> ")
        out = self.run_line(r, b"\\x\n", b"Expanded display is on.")
        out = self.run_line(r, b"find nodes where kind = thread limit 2;\n", b"(2 rows)")
        text = out.decode(errors="replace")
        self.assertEqual(text.count("-[ RECORD "), 2, text)
        self.assertRegex(text, r"\r\nthread +\| ")
        self.run_line(r, b"\\x\n", b"Expanded display is off.")
        self.run_line(r, b".rows off\n", b"argusq> ")
        out = self.run_line(r, b"find nodes where kind = thread limit 2;\n", b"argusq> ")
        self.assertNotIn(b"rows)", out)
        out = self.run_line(r, b".expanded maybe\n", b".expanded on|off")
        self.quit(r)
        # the pager: a terminal of 20 lines, a pager that marks what it was given
        r = Repl(self.db, {"TERM": "xterm", "HOME": self.home, "PAGER": "sed s/^/paged:/"})
        self.addCleanup(lambda: r.kill() if r.pid else None)
        fcntl.ioctl(r.fd, termios.TIOCSWINSZ, struct.pack("HHHH", 20, 120, 0, 0))
        self.assertTrue(r.read_until(b"argusq> "), r.out)
        self.run_line(r, b".pager on\n", b"argusq> ")
        out = self.run_line(r, b"find nodes limit 40;\n", b"(40 rows)")
        self.assertIn(b"paged:node  kind", out)
        self.assertEqual(out.count(b"paged:"), 41)
        out = self.run_line(r, b"find nodes limit 3;\n", b"(3 rows)")
        self.assertNotIn(b"paged:", out)  # shorter than the terminal
        self.quit(r)

    def test_tab_completes(self):
        r = self.start()
        # a keyword
        start = len(r.out)
        r.write(b"diagn\t")
        self.assertTrue(r.read_until(b"ose", start=start), r.out[start:])
        r.write(b'thread "ui-main" in trace "anomaly";\n')
        self.assertTrue(r.read_until(b"Suspects", start=start), r.out[start:])
        self.assertTrue(r.read_until(b"argusq> ", start=r.out.index(b"Suspects", start)))
        # a field the language reads (the words come from its own tables)
        start = len(r.out)
        r.write(b"traces where first_t\t")
        self.assertTrue(r.read_until(b"s ", start=start), r.out[start:])  # redrawn: "s " at the column
        r.write(b"> 0;\n")
        self.assertTrue(r.read_until(b"(2 rows)", start=start), r.out[start:])  # no error: first_ts
        self.assertIn(b"anomaly", r.out[start:])
        # a trace name in a string (completion closes the string)
        start = len(r.out)
        r.write(b'use trace "anom\t')
        self.assertTrue(r.read_until(b'aly"', start=start), r.out[start:])
        r.write(b";\n")
        self.assertTrue(r.read_until(b"(anomaly) argusq> ", start=start), r.out[start:])
        # a thread name of the current trace
        start = len(r.out)
        r.write(b'find nodes where thread = "ui-m\t')
        self.assertTrue(r.read_until(b'ain"', start=start), r.out[start:])
        r.write(b" order by blocked desc limit 1;\n")
        self.assertTrue(r.read_until(b"283.9ms", start=start), r.out[start:])
        self.assertTrue(r.read_until(b"argusq> ", start=r.out.index(b"283.9ms", start)))
        self.quit(r)
        # history across sessions
        with open(os.path.join(self.home, ".argusq_history")) as f:
            hist = f.read().replace("\\040", " ")
        self.assertIn('use trace "anomaly";', hist)
        r = self.start()
        start = len(r.out)
        r.write(b"\x1b[A")  # up: the last statement
        self.assertTrue(r.read_until(b"order by blocked desc limit 1;", start=start), r.out[start:])
        # Ctrl-C drops it, and a Ctrl-D typed right after, before the fresh
        # prompt (in the terminal's cooked mode: libedit once got it as a
        # NUL byte and rang the bell at every Ctrl-D after), ends the REPL
        r.write(b"\x03")
        self.quit(r)


if __name__ == "__main__":
    unittest.main()
