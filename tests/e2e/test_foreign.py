"""Traces from other people's machines: every file of
../shared/foreign (SOURCES.md: origin, licence), used from there, never
copied here.

The figures below were worked out by reading each file (grep and
`trace-cmd report -R` over it), not by copying what argusq prints:

  events   event lines (a multi-line event counts once; a cut last line
           not at all); for a .dat, the records `trace-cmd report` prints
  waits    sched_switch lines whose prev_state is a wait: not R, R+, 0,
           or the preempted bit (256 on 4.14+, 1024/2048/4096 before)
  woken    the file has wakeups whose target logs an event afterwards,
           so the graph must have wakeup edges
  unnamed  tids printed as <...> that no line or field of the file names
"""
import collections
import os
import unittest

from common import ROOT, ArchiveCase

FOREIGN = os.path.join(ROOT, "..", "shared", "foreign")

FILES = {
    "catapult-android_systrace.txt": dict(events=31479, waits=6751, woken=True, late=1),
    "catapult-atrace_data.txt": dict(events=116, waits=45, woken=True),
    "lisa-trace_txt.txt": dict(events=2941, waits=1083, woken=True),
    "perfetto-bad_print.txt": dict(events=3, waits=0, unnamed={882}, multiline=True),
    # task 269 is printed as foo, then as bar: a rename, two names by right
    "perfetto-sched_blocked_systrace.txt": dict(events=6, waits=4, renamed={269}),
    "tc-atrace-test.txt": dict(events=4454, waits=1540, woken=True),
    # 4083 is <...> on all its lines, and its own sched_switch (line 405,
    # prev_comm=bash prev_pid=4083) names it: bash from its first node on
    "tc-ftrace_syscalls.txt": dict(events=1052, waits=45, woken=True, syscalls=842),
    "tc-trace-android-sched-irq-syscall.txt": dict(events=143, waits=5, woken=True),
    "tc-trace-android-sched-irq.txt": dict(events=139, waits=46, woken=True),
    "tc-trace-func-graph.txt": dict(events=199, waits=0),
    "trappy-trace_idle_unsorted.txt": dict(events=14, waits=4, truncated_line=17, reordered=1),
    "trappy-trace_sched.txt": dict(events=11, waits=0, unnamed={19427}),
    "trappy-trace_systrace.txt": dict(events=10, waits=2),
    "labsisop-trace.dat": dict(events=293, waits=147, dat=True),
    "langraph-trace.dat": dict(events=41400, waits=1180, woken=True, dat=True, backtrace=True),
    "trappy-raw_trace.dat": dict(events=757, waits=383, dat=True, multiline=True),
    "trappy-trace_idle.dat": dict(events=43, waits=14, dat=True),
}


class Foreign(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(FOREIGN):
            self.skipTest(f"{FOREIGN} is not there (../shared beside the project)")
        super().setUp()

    def test_every_file_is_listed(self):
        on_disk = {f for f in os.listdir(FOREIGN) if f.endswith((".txt", ".dat"))}
        self.assertEqual(on_disk, set(FILES))

    def check(self, name, want):
        s = self.ingest(os.path.join(FOREIGN, name), name=name)
        self.assertEqual(s["events"], want["events"])
        self.assertEqual(s["truncated_line"], want.get("truncated_line", 0))
        self.assertEqual(s["late"], want.get("late", 0))
        self.assertGreaterEqual(s["reordered"], want.get("reordered", 0))
        q = lambda stmt: self.json("--trace", name, stmt)
        waits = q('find events where type = "wait"')["events"]
        self.assertEqual(len(waits), want["waits"], "a wait for each sleeping prev_state, none for R/R+")
        edges = q('find edges where kind = "wakeup"')["edges"]
        self.assertEqual(len(edges) > 0, want.get("woken", False))
        nodes = q("find nodes")["nodes"]
        unnamed = {n["tid"] for n in nodes if n["thread"] == "<...>"}
        self.assertEqual(unnamed, want.get("unnamed", set()), "<...> only where the file names nobody")
        procs = collections.defaultdict(set)
        for n in nodes:
            procs[n["pid"]].add(n["proc"])
        self.assertEqual({p for p, v in procs.items() if len(v) > 1}, want.get("renamed", set()),
                         "one name per process (but where the file renames it)")
        if want.get("dat"):
            self.assertTrue(any(n["begin"] % 1000 for n in nodes), "nanoseconds from the .dat")
        if "syscalls" in want:
            self.assertEqual(len(q('find events where type = "syscall"')["events"]), want["syscalls"])
        if want.get("multiline"):
            self.assertTrue(any("\n" in str(v) for e in q("find events limit 20")["events"] for v in e.values()),
                            "an event's text over several lines is kept whole")
        if want.get("backtrace"):
            st = q('find events where event = "kernel_stack" limit 1')["events"][0]
            self.assertGreater(len(st["backtrace"].split("\n")), 8, "every frame of the record, not the 8 printed")
        worst = max(nodes, key=lambda n: n["blocked"])
        self.ok("--trace", name, f"slice back from node {worst['id']} depth 10")
        self.ok("--trace", name, f"diagnose node {worst['id']}")

    def test_each_file(self):
        for name, want in sorted(FILES.items()):
            with self.subTest(file=name):
                self.check(name, want)


# Minimal lines (written here) for the graph on what other machines write:
# sched_waking without sched_wakeup, a stack logged in a switch, a process
# known by its leader's name.
SWITCH_OUT = """\
  w-10 (10) [000] d..2 1.000000: sched_switch: prev_comm=w prev_pid=10 prev_prio=120 prev_state=S ==> next_comm=k next_pid=20 next_prio=120
  w-10 (10) [000] d..2 1.000001: kernel_stack: <stack trace >
=> schedule (ffffffff81000010)
=> do_epoll_wait (ffffffff81000020)
  k-20 (20) [000] d..2 1.100000: sched_waking: comm=w pid=10 prio=120 target_cpu=000
  k-20 (20) [000] d..2 1.100010: sched_switch: prev_comm=k prev_pid=20 prev_prio=120 prev_state=S ==> next_comm=w next_pid=10 next_prio=120
  w-10 (10) [000] .... 1.100020: sys_exit: NR 1 = 0
"""

GUESSED = """\
  RenderThread-1143 (611) [004] ...1 5.000000: tracing_mark_write: E
  com.android.systemui-611 (611) [001] .... 5.000100: sys_exit: NR 1 = 0
  RenderThread-1143 (611) [004] .... 5.000200: sys_exit: NR 1 = 0
"""


class ForeignGraph(ArchiveCase):
    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_waking_alone_wakes_and_a_switched_out_thread_is_not_running(self):
        self.ingest(self.write("out.txt", SWITCH_OUT))
        w = self.json('find nodes where thread = "w" order by blocked desc limit 1')["nodes"][0]
        # the stack trace logged in the switch did not end the 100 ms sleep
        self.assertEqual(w["blocked"], 100020000)
        st = self.json('find events where event = "kernel_stack"')["events"][0]
        self.assertEqual(st["backtrace"], "schedule\ndo_epoll_wait")
        # a table shows the line break, one row an event; CSV quotes it
        table = self.ok('find events where event = "kernel_stack"').stdout.splitlines()
        self.assertEqual(len(table), 2)
        self.assertIn("backtrace=schedule\\ndo_epoll_wait", table[1])
        csv_out = self.ok("--format", "csv", 'find events where event = "kernel_stack"').stdout
        self.assertIn('"backtrace=schedule\ndo_epoll_wait"', csv_out)
        # sched_waking without sched_wakeup: the waking is the wakeup
        edges = self.json('find edges where kind = "wakeup"')["edges"]
        self.assertEqual([(e["to"]) for e in edges], [w["id"]])

    def test_a_process_answers_to_its_leaders_name(self):
        self.ingest(self.write("guess.txt", GUESSED))
        nodes = self.json("find nodes")["nodes"]
        self.assertEqual({n["proc"] for n in nodes}, {"com.android.systemui"})
        self.assertEqual(len(self.json('find nodes where proc = "com.android.systemui"')["nodes"]), len(nodes))

    def test_nothing_held_up_is_said_so(self):
        self.ingest(self.write("one.txt", "\n".join(GUESSED.splitlines()[:2]) + "\n"))
        first = self.json('find nodes where thread = "RenderThread" limit 1')["nodes"][0]
        d = self.json(f"diagnose node {first['id']}")
        self.assertEqual(d["kind"], "none")
        out = self.ok(f"diagnose node {first['id']}").stdout
        self.assertIn("nothing held it up", out)
        self.assertNotIn("long wait", out)


class ForeignForms(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(FOREIGN):
            self.skipTest(f"{FOREIGN} is not there (../shared beside the project)")
        super().setUp()

    def test_systrace_html_page(self):
        """Android developers have systrace's HTML page: its ftrace text is in a
        <script class="trace-data"> element (another one holds JSON)."""
        with open(os.path.join(FOREIGN, "catapult-atrace_data.txt")) as f:
            text = f.read()
        page = os.path.join(self.dir, "trace.html")
        with open(page, "w") as f:
            f.write('<!DOCTYPE html>\n<html>\n<head>\n<title>Android System Trace</title>\n'
                    '<script>var viewer = "JavaScript of the trace viewer";</script>\n</head>\n<body>\n'
                    '  <script class="trace-data" type="application/text">{"traceEvents": []}</script>\n'
                    '<!-- BEGIN TRACE -->\n  <script class="trace-data" type="application/text">\n'
                    + text + '  </script>\n<!-- END TRACE -->\n</body>\n</html>\n')
        h = self.ingest(page, name="html")
        t = self.ingest(os.path.join(FOREIGN, "catapult-atrace_data.txt"), name="text")
        for k in ("events", "threads", "processes", "nodes", "edges"):
            self.assertEqual(h[k], t[k], k)
        self.assertEqual(self.json("traces")["traces"][0]["format"], "systrace-html")
        empty = os.path.join(self.dir, "empty.html")
        with open(empty, "w") as f:
            f.write("<html><body>no trace here</body></html>\n")
        p = self.run_argusq("ingest", empty)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("without ftrace text", p.stderr)

    def test_syscall_numbers_are_named_only_for_a_known_machine(self):
        """NR 240 is futex on 32-bit ARM and mq_open on x86-64: text does not say
        its machine, so numbers stay unnamed unless --arch says it."""
        arm = os.path.join(FOREIGN, "tc-trace-android-sched-irq-syscall.txt")
        p = self.run_argusq("--json", "ingest", arm, "--name", "arm")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn("--arch", p.stderr)
        evs = self.json("--trace", "arm", 'find events where type = "syscall"')["events"]
        self.assertGreater(len(evs), 50)
        self.assertFalse([e for e in evs if "name" in e], "no name from another machine's table")
        self.assertTrue(all("nr" in e for e in evs if e["event"] == "sys_enter"))
        mine = os.path.join(ROOT, "tests", "traces", "lockchain-anomaly.txt")
        self.json("ingest", mine, "--name", "x86", "--arch", "x86_64")
        names = {e.get("name") for e in self.json("--trace", "x86", 'find events where type = "syscall"')["events"]}
        self.assertIn("futex", names)


if __name__ == "__main__":
    unittest.main()
