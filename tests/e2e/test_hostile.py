"""Hostile input (reliability and security): trace files and statements made
to break argusq.  Every one must be refused with a message that says where
(FILE:LINE, or FILE and an offset for trace.dat), an exit status from 1 to
127 (128 and up is a signal: a crash), no sanitizer report, and the archive
exactly as it was.  Also: the normal build under valgrind, without leaks."""
import json
import os
import random
import re
import shutil
import subprocess
import unittest

from common import ARGUSQ, ROOT, ArchiveCase, trace

SANITIZER = ("runtime error", "AddressSanitizer", "LeakSanitizer", "UndefinedBehaviorSanitizer")
GOOD_NODE = 79  # lockchain-normal.txt: ui-main after its longest wait


class Hostile(ArchiveCase):
    def run_bytes(self, args, stdin=None):
        """argusq with bytes arguments and stdin (queries may be binary)."""
        cmd = [os.fsencode(ARGUSQ), b"-d", os.fsencode(self.db)] + args
        env = dict(os.environ)
        env.pop("ARGUSQ_DB", None)
        return subprocess.run(cmd, input=stdin, capture_output=True, env=env, cwd=self.dir, timeout=120)

    def assert_clean_failure(self, p, what, statuses=range(1, 128)):
        err = p.stderr.decode("utf-8", "replace") if isinstance(p.stderr, bytes) else p.stderr
        self.assertIn(p.returncode, statuses, f"{what}: status {p.returncode}\n{err[-2000:]}")
        for s in SANITIZER:
            self.assertNotIn(s, err, f"{what}: {err[-2000:]}")
        self.assertTrue(err.startswith("argusq: "), f"{what}: no message: {err[:300]!r}")
        return err


class HostileTraces(Hostile):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-normal.txt"), name="good")
        self.before = self.state()

    def state(self):
        """What a failed ingest must not change: the catalog and a slice."""
        return (self.json("traces"), self.json(f"slice back from node {GOOD_NODE} depth 6"),
                self.json('find events where tid = 4111 limit 50'))

    def write(self, name, data):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode())
        return path

    def refused(self, name, data, line=None, why=None):
        """Ingest of data (as file name) fails at line (None: any place)."""
        path = self.write(name, data)
        p = self.run_bytes([b"ingest", os.fsencode(path)])
        err = self.assert_clean_failure(p, name)
        # the message quotes the line, but no control character of it
        self.assertNotRegex(err, "[\x00-\x09\x0b-\x1f\x7f]", f"{name}: raw control bytes in the message")
        where = f"{name}:{line}:" if line else name
        self.assertIn(where, err)
        if line is None:  # at least a place: a line, or an offset of trace.dat
            self.assertRegex(err, re.escape(name) + r"(:\d+:|: offset \d+|: )")
        if why:
            self.assertIn(why, err)
        self.assertEqual(self.state(), self.before, f"{name} changed the archive")
        return err

    def test_empty_file(self):
        self.refused("empty.txt", b"", line=1, why="unknown trace format")

    def test_random_bytes(self):
        rnd = random.Random(20240601)
        self.refused("random.bin", bytes(rnd.randrange(256) for _ in range(65536)), line=1)
        # garbage after a header that picks a reader: the reader must refuse it
        tail = bytes(rnd.randrange(1, 256) for _ in range(4096)).replace(b"\n", b" ")
        self.refused("random.txt", b"# tracer: nop\n#\n" + tail + b"\n", line=3)
        self.refused("random.argus", b"#argus-trace 1\n" + tail + b"\n", line=2)
        with_nul = b"#argus-trace 1\nproc 1 \"a\x00b\"\n"
        self.refused("nul.argus", with_nul, line=2, why="NUL")

    def test_truncated_text(self):
        with open(trace("lockchain-anomaly.txt"), "rb") as f:
            lines = f.read().split(b"\n")
        # a bad line with events after it is not a cut: refused, as before
        bad = b"\n".join(lines[:299]) + b"\n" + lines[299][:20] + b"\n" + b"\n".join(lines[300:])
        self.refused("middle.txt", bad, line=300)
        # a trace cut inside its last line (a recorder killed, a
        # full disk) keeps everything before it, and says so: cut in the
        # line's columns, and in a sched_switch's fields
        sw = next(i for i in range(200, len(lines)) if b"sched_switch:" in lines[i])
        for at, keep, name in ((299, 20, "cut.txt"), (sw, lines[sw].index(b" ==> "), "cutfields.txt")):
            with self.subTest(name=name):
                cut = b"\n".join(lines[:at]) + b"\n" + lines[at][:keep] + b"\n\n"
                p = self.run_bytes([b"--json", b"ingest", os.fsencode(self.write(name, cut)), b"--name", name.encode()])
                self.assertEqual(p.returncode, 0, p.stderr)
                s = json.loads(p.stdout)
                self.assertEqual(s["truncated_line"], at + 1)
                self.assertEqual(s["events"], sum(1 for l in lines[:at] if b": " in l and not l.startswith(b"#")))
                self.assertIn(f"{name}:{at + 1}: the file ends inside this line".encode(), p.stderr)

    def test_truncated_argus(self):
        with open(os.path.join(ROOT, "tests", "fixtures", "ipc-reply.argus"), "rb") as f:
            lines = f.read().split(b"\n")
        n = next(i for i, l in enumerate(lines) if b"mach_msg send" in l)
        cut = b"\n".join(lines[:n]) + b"\n" + lines[n][: lines[n].index(b"mach_msg") + 4]
        self.refused("cut.argus", cut, line=n + 1, why="unknown event type")

    def test_truncated_trace_dat(self):
        dats = [os.path.join(ROOT, "tests", "traces", f) for f in sorted(os.listdir(trace("")))
                if f.endswith(".dat")]
        dats.append(os.path.join(ROOT, "..", "shared", "traces", "lockchain-anomaly.dat"))
        dat = next((d for d in dats if os.path.exists(d)), None)
        if not dat:
            self.skipTest("no trace.dat to cut")
        with open(dat, "rb") as f:
            data = f.read()
        # (the last page's padding may go: no record is lost then)
        for n in (3, 100, 4096, len(data) // 2, len(data) - 5000):
            with self.subTest(bytes=n):
                self.refused(f"cut{n}.dat", data[:n])

    def test_long_lines_and_names(self):
        head = "cpus=2\n    bash-4120    1.....  1088.966940: sys_exit:             NR 1 = 2\n"
        self.refused("long.txt", head + "    bash-4120    1.....  1088.966941: foo: x=" + "y" * (2 << 20) + "\n",
                     line=3, why="line too long")
        self.refused("longcomm.txt", head + "    " + "c" * 10000 + "-4120    1.....  1088.966941: foo: x=1\n",
                     line=3, why="too long")
        self.refused("longevent.txt", head + "    bash-4120    1.....  1088.966941: " + "e" * 10000 + ": x=1\n",
                     line=3, why="too long")
        self.refused("longname.argus", '#argus-trace 1\nproc 1 "' + "p" * 10240 + '"\n', line=2,
                     why="name too long")
        self.refused("longthread.argus", '#argus-trace 1\nproc 1 "p"\nthread 1 1 "' + "t" * 10240 + '"\n',
                     line=3, why="name too long")
        self.refused("longline.argus", "#argus-trace 1\n# " + "z" * (2 << 20) + "\n", line=2, why="line too long")

    def test_numbers_that_overflow_64_bits(self):
        head = "cpus=2\n    bash-4120    1.....  1088.966940: sys_exit:             NR 1 = 2\n"
        for i, ts in enumerate(["99999999999999999999.000001", "18446744074.000000", "18446744073.709551616"]):
            with self.subTest(ts=ts):
                self.refused(f"ts{i}.txt", head + f"    bash-4120    1.....  {ts}: sys_exit:   NR 1 = 2\n",
                             line=3, why="timestamp")
        self.refused("pid.txt", head + "    bash-99999999999999999999    1.....  1088.966941: foo: x=1\n", line=3)
        # in the middle of the file (a bad last line is taken for a trace cut short)
        self.refused("nr.txt", head + "    bash-4120    1.....  1088.966941: sys_exit:   NR 99999999999999999999 = 2\n"
                     + "    bash-4120    1.....  1088.966942: sys_exit:   NR 1 = 2\n", line=3)
        argus = '#argus-trace 1\nproc 1 "p"\nthread 1 1 "t"\n'
        self.refused("ts.argus", argus + "18446744073709551616 1 syscall begin nr=1\n", line=4, why="64 bits")
        self.refused("key.argus", argus + "5 1 syscall begin nr=99999999999999999999\n", line=4, why="64 bits")
        self.refused("hex.argus", argus + "5 1 timer_arm timer=0x1ffffffffffffffff deadline=1\n", line=4,
                     why="64 bits")
        self.refused("pid.argus", '#argus-trace 1\nproc 4294967296 "p"\n', line=2, why="pid")

    def test_undeclared_thread(self):
        self.refused("undeclared.argus", '#argus-trace 1\nproc 1 "p"\nthread 1 1 "t"\n5 2 wait reason=x\n',
                     line=4, why="not declared")

    def test_time_going_backwards(self):
        self.refused("back.argus",
                     '#argus-trace 1\nproc 1 "p"\nthread 1 1 "t"\n9 1 wait reason=x\n8 1 wait reason=x\n',
                     line=5, why="before")
        with open(trace("lockchain-anomaly.txt")) as f:
            lines = f.readlines()
        # a line of bash-4120 (not its first) dated before the thread's first
        i = [k for k, l in enumerate(lines) if l.lstrip().startswith("bash-4120 ")][5]
        lines[i] = re.sub(r" 1088\.\d+: ", " 1088.000001: ", lines[i], count=1)
        # text is put in order where it can be, and an event too far
        # behind is kept at the time of the event before it, and reported
        p = self.run_bytes([b"--json", b"ingest", os.fsencode(self.write("back.txt", "".join(lines)))])
        self.assertEqual(p.returncode, 0, p.stderr)
        s = json.loads(p.stdout)
        self.assertEqual(s["late"], 1)
        self.assertIn(b"too far behind", p.stderr)

    def test_archive_still_takes_a_good_trace(self):
        self.refused("empty.txt", b"")
        s = self.ingest(trace("lockchain-anomaly.txt"), name="after")
        self.assertGreater(s["events"], 1000)


# Statements that must be refused: status 1 or 2, a message, never a crash.
BAD_STATEMENTS = [
    'find nodes where thread = "ui-main',
    'find nodes where thread = "a\\q"',
    "(" * 10000 + "find nodes" + ")" * 10000,
    "find nodes where " + "(" * 10000 + "id = 1" + ")" * 10000,
    "find nodes where " + "not " * 10000 + "id = 1",
    "find nodes where " + " or ".join(["id = 1"] * 5000),  # deep without parentheses
    "find nodes where " + " and ".join(["tid = 1"] * 5000),
    "rule ignore wakeup where " + " and ".join(["tid = 1"] * 5000),
    "compare path " + "(" * 5000 + "slice back from node 1" + ")" * 5000 + " with (slice back from node 1)",
    "export " * 5000 + "traces to \"x\"",
    "find nodes where id = 99999999999999999999999999",
    "find nodes where id = -9223372036854775809",
    "find nodes where duration > 18446744073.709551616s",
    "find nodes where duration > 1.0000000001s",
    "find nodes limit 99999999999999999999",
    "find nodes limit -1",
    "slice back from node 1 depth 99999999999999999999",
    "slice back from node 1 depth -5",
    "slice back from node 18446744073709551615",
    "slice back from node 4294967296 depth 8",  # found by fuzz_query: freed an unset path
    "slice forward from node 87777777712",
    "transaction from node 4294967296",
    "compare path (slice back from node 4294967296) with (slice back from node 1)",
    "show node 4294967297",
    "events of node 99999999999999999999",
    "find nodes where " + "x" * 100000 + " = 1",
    "find nodes where id " + "=" * 1000,
    'use trace "' + "t" * 100000 + '"',
    'find nodes in trace "' + "t" * 100000 + '"',
    'diagnose thread "' + "u" * 10000 + '"',
    'diagnose thread "' + "u" * 10000 + '" against trace "' + "v" * 10000 + '"',
    'check fix of thread "' + "u" * 1000 + '" after trace "nope"',
    "help " + "h" * 100000,
    "find nodes where bogus = 1",
    "find nodes order by " + "f" * 1000,
    "find bogus",
    "slice back from node 1 via bogus",
    "slice sideways from node 1",
    "drop rule 18446744073709551615",
    "rule boundary",
    "rule connect a to b on " + "k" * 1000 + " = x",
    "",
    ";",
    ";;;  ;",
    "-- only a comment",
    "traces traces",
    "find nodes; find nodes where",
    "\x01\x02\x03\x7f",
    "find nodes where thread = \"\xff\xfe\"x",
]


class HostileQueries(Hostile):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")

    def test_bad_statements_are_refused(self):
        for q in BAD_STATEMENTS:
            with self.subTest(q=q[:60]):
                p = self.run_bytes([q.encode("utf-8", "surrogateescape")])
                self.assert_clean_failure(p, q[:60], statuses=(1, 2))
        self.assertEqual(sorted(os.listdir(self.dir)), ["argus.db", "argus.db-lock"])  # no export file

    def test_binary_garbage_on_stdin(self):
        rnd = random.Random(7)
        for n in (1, 100, 10000, 1 << 20):
            with self.subTest(bytes=n):
                data = bytes(rnd.randrange(256) for _ in range(n))
                self.assert_clean_failure(self.run_bytes([], stdin=data), f"{n} random bytes", statuses=(1, 2))
        p = self.run_bytes([], stdin=b"find nodes where thread = \"a\x00b\";")
        self.assertIn(b"NUL", self.assert_clean_failure(p, "NUL", statuses=(1, 2)).encode())

    def test_empty_answers(self):
        # found by fuzz_query: qsort of no rows (a NULL array) is undefined
        for q in ["find nodes order by id limit 0", "find events order by ts desc limit 0",
                  'find nodes where thread = "nobody"', 'find nodes where thread = "nobody" order by id']:
            with self.subTest(q=q):
                p = self.run_bytes([b"--json", q.encode()])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(len(next(iter(json.loads(p.stdout).values()))), 0)

    def test_huge_limit_and_depth_are_bounded(self):
        for q in ["find nodes limit 18446744073709551615",
                  "find events order by ts desc limit 18446744073709551615",
                  "find edges limit 18446744073709551615"]:
            with self.subTest(q=q):
                p = self.run_bytes([b"--json", q.encode()])
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertGreater(len(json.loads(p.stdout)), 0)
        # a depth past the walk's bound is refused, at its column, not capped in silence
        for q in (b"slice back from node 188 depth 18446744073709551615",
                  b"transaction from node 188 depth 18446744073709551615"):
            p = self.run_bytes([b"--json", q])
            self.assertEqual(p.returncode, 1, p.stderr)
            self.assertIn(b"depth is at most 10000", p.stderr)
        p = self.run_bytes([b"--json", b"slice back from node 188 depth 10000"])
        self.assertEqual(p.returncode, 0, p.stderr)
        depths = [n["depth"] for n in json.loads(p.stdout)["nodes"]]
        self.assertLessEqual(max(depths), 10000)


VALGRIND = shutil.which("valgrind")
PLAIN = os.path.join(ROOT, "build", "argusq")  # valgrind cannot run an ASan build


class Valgrind(ArchiveCase):
    """One ingest and a few statements of the normal build, under valgrind:
    no invalid access, no definite or indirect leak."""

    def grind(self, *args, fail=False):
        cmd = [VALGRIND, "--leak-check=full", "--errors-for-leak-kinds=definite,indirect",
               "--error-exitcode=99", PLAIN, "-d", self.db] + list(args)
        # the archive reserves 1 TB of address space by default
        env = dict(os.environ, ARGUSQ_MAP_MB="4096")
        env.pop("ARGUSQ_DB", None)
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=self.dir, timeout=600)
        self.assertNotEqual(p.returncode, 99, p.stderr[-4000:])
        self.assertEqual(p.returncode != 0, fail, p.stderr[-4000:])
        self.assertIn("ERROR SUMMARY: 0 errors", p.stderr)
        self.assertTrue("definitely lost: 0 bytes" in p.stderr or "no leaks are possible" in p.stderr,
                        p.stderr[-4000:])
        return p

    @unittest.skipUnless(VALGRIND, "valgrind is not installed")
    def test_no_leaks(self):
        self.assertTrue(os.path.exists(PLAIN), f"{PLAIN} is not built")
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        self.grind("ingest", trace("lockchain-anomaly.txt"), "--name", "anomaly")
        self.grind("--json", 'find nodes where thread = "ui-main" order by blocked desc limit 1')
        self.grind("slice back from node 188 depth 6")
        self.grind("--format", "dot", "slice back from node 188 depth 3")
        self.grind('diagnose thread "ui-main" against trace "normal"')
        self.grind("find events where name = \"sched_switch\" limit 5; show node 188; traces")
        # failures free what they took too
        self.grind("find nodes where nope = 1", fail=True)
        bad = os.path.join(self.dir, "bad.txt")
        with open(bad, "w") as f:
            f.write("cpus=2\nthis is not a trace line\n")
        self.grind("ingest", bad, fail=True)

    @unittest.skipUnless(VALGRIND, "valgrind is not installed")
    def test_perfetto_defined(self):
        """The Perfetto reader (its hand decoder, the merge of the CPUs, the
        held switches sched_blocked_reason names) reads nothing it did not
        write: the Android 13 trace of ../shared, compact_sched and all."""
        path = os.path.join(ROOT, "..", "shared", "foreign-perfetto",
                            "Perfetto-Skills-api32_startup_warm.perfetto-trace")
        if not os.path.exists(path):
            self.skipTest("no %s (../shared is absent)" % path)
        self.assertTrue(os.path.exists(PLAIN), f"{PLAIN} is not built")
        self.grind("ingest", path, "--name", "android13")


if __name__ == "__main__":
    unittest.main()
