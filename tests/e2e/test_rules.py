"""The event-graph rules end to end, on small Argus-format scenarios
(tests/fixtures/*.argus, described in tests/fixtures/README.md).

Every expectation here is derived from ../shared/spec/argus-trace-format.md
and the paper (../shared/paper/000 algorithm 1.a-1.d and 2.a-2.f with its
"Inherent Inaccuracy" examples, 002's six rules and RunLoop stages, 004's
vouchers and dispatch_mig_service), never from the implementation.

Nodes are named by an event they contain: (tid, ts) -> that event's `node`
(every fixture gives each thread's events distinct timestamps).  A test
asserts which nodes a backward slice from a named event must reach and
which it must not, and, where the spec fixes them, the kind and the two
events of an edge.  Slices follow every edge kind except `weak`; `with weak`
follows weak edges too.  No edge joins consecutive nodes of one thread just
because they are consecutive (the paper defines no such edge).
"""
import os

from common import ROOT, ArchiveCase

FIXTURES = os.path.join(ROOT, "tests", "fixtures")
DEPTH = 20


def fixture(name):
    return os.path.join(FIXTURES, name)


def parse_argus(path):
    """(header, declarations, events) of an Argus file, where events are
    (lineno, tid, ts, line) in file order.  Only what the tests need."""
    decls, events = [], []
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for no, line in enumerate(lines[1:], start=2):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        word = s.split()[0]
        if word in ("proc", "thread", "symbol"):
            decls.append((no, s))
        else:
            fields = s.split()
            events.append((no, int(fields[1], 0), int(fields[0], 0), s))
    return lines[0], decls, events


def regroup_by_thread(src, dst):
    """The same trace with each thread's events together, threads in
    descending tid order: what a reader merging per-CPU buffers may see.
    The spec allows any interleaving of different threads' events."""
    header, decls, events = parse_argus(src)
    events = sorted(events, key=lambda e: -e[1])  # stable: keeps each thread's order
    with open(dst, "w", encoding="utf-8") as f:
        f.write(header + "\n")
        for _, s in decls:
            f.write(s + "\n")
        for *_, s in events:
            f.write(s + "\n")


class RuleCase(ArchiveCase):
    """Ingests FIXTURE into a fresh archive; helpers name nodes by events."""

    FIXTURE = None
    REGROUP = False
    maxDiff = None

    def setUp(self):
        super().setUp()
        path = fixture(self.FIXTURE)
        if self.REGROUP:
            dst = os.path.join(self.dir, "regrouped-" + self.FIXTURE)
            regroup_by_thread(path, dst)
            path = dst
        self.summary = self.ingest(path)
        self._events = {}
        self._shown = {}

    # -- naming ------------------------------------------------------------
    def ev(self, tid, ts):
        key = (tid, ts)
        if key not in self._events:
            got = self.json(f"find events where tid = {tid} and ts = {ts}")["events"]
            self.assertEqual(len(got), 1, f"expected exactly one event of thread {tid} at {ts}: {got}")
            self._events[key] = got[0]
        return self._events[key]

    def node(self, tid, ts):
        n = self.ev(tid, ts)["node"]
        self.assertIsInstance(n, int, f"event of thread {tid} at {ts} has no node")
        return n

    def show(self, node_id):
        if node_id not in self._shown:
            self._shown[node_id] = self.json(f"show node {node_id}")
        return self._shown[node_id]

    def kind(self, tid, ts):
        return self.show(self.node(tid, ts))["node"]["kind"]

    def describe(self, node_id):
        n = self.show(node_id)["node"]
        return f"node {node_id} ({n.get('thread')} tid {n.get('tid')}, kind {n.get('kind')}, {n.get('begin')}..{n.get('end')})"

    # -- node boundaries ---------------------------------------------------
    def assertSameNode(self, *events, why=""):
        nodes = [self.node(*e) for e in events]
        self.assertEqual(len(set(nodes)), 1,
                         f"{why}: events {events} should share one node, got nodes {nodes}")

    def assertDistinctNodes(self, *events, why=""):
        nodes = [self.node(*e) for e in events]
        self.assertEqual(len(set(nodes)), len(nodes),
                         f"{why}: events {events} should each be in its own node, got nodes {nodes}")

    def assertKind(self, event, kind, why=""):
        self.assertEqual(self.kind(*event), kind,
                         f"{why}: the node of event {event} should be of kind {kind!r}: {self.describe(self.node(*event))}")

    # -- edges ---------------------------------------------------------------
    def edges_into(self, event, kind=None):
        ins = self.show(self.node(*event))["in"]
        return [e for e in ins if kind is None or e["kind"] == kind]

    def assertEdge(self, kind, frm, to, why=""):
        """Exactly one edge of `kind` from event `frm` to event `to`, listed
        among the in-edges of to's node and the out-edges of frm's node,
        with from/to the nodes of those events."""
        f, t = self.ev(*frm), self.ev(*to)
        ins = self.show(t["node"])["in"]
        match = [e for e in ins if e["kind"] == kind and e["from_event"] == f["id"] and e["to_event"] == t["id"]]
        self.assertEqual(len(match), 1,
                         f"{why}: expected one {kind} edge from event {f['id']} {frm} to event {t['id']} {to}; "
                         f"in-edges of {self.describe(t['node'])}: {ins}")
        e = match[0]
        self.assertEqual((e["from"], e["to"]), (f["node"], t["node"]),
                         f"{why}: the edge's nodes should be the nodes of its events: {e}")
        outs = self.show(f["node"])["out"]
        self.assertIn(e, outs, f"{why}: the edge should also be an out-edge of node {f['node']}")
        return e

    def assertNoEdge(self, kind, frm, to, why=""):
        f, t = self.ev(*frm), self.ev(*to)
        bad = [e for e in self.show(t["node"])["in"]
               if e["kind"] == kind and e["from_event"] == f["id"] and e["to_event"] == t["id"]]
        self.assertEqual(bad, [], f"{why}: there must be no {kind} edge from event {f['id']} {frm} to event {t['id']} {to}")

    def assertNoEdgeTo(self, kind, to, why=""):
        t = self.ev(*to)
        bad = [e for e in self.show(t["node"])["in"] if e["kind"] == kind and e["to_event"] == t["id"]]
        self.assertEqual(bad, [], f"{why}: no {kind} edge should end at event {t['id']} {to}")

    # -- slices --------------------------------------------------------------
    def slice(self, event, weak=False):
        start = self.node(*event)
        sl = self.json(f"slice back from node {start} depth {DEPTH}" + (" with weak" if weak else ""))
        ids = [n["id"] for n in sl["nodes"]]
        self.assertIn(start, ids, "a slice contains its own start node")
        sl["ids"] = set(ids)
        sl["start"] = start
        if not weak:
            self.assertNotIn("weak", {e["kind"] for e in sl["edges"]}, "a slice without `with weak` follows no weak edge")
        return sl

    def _slice_text(self, sl):
        nodes = "; ".join(f"{n['id']}:{n.get('thread')}/{n.get('kind')}[{n.get('begin')}..{n.get('end')}]" for n in sl["nodes"])
        edges = "; ".join(f"{e['from']}->{e['to']} {e['kind']} ({e['from_event']}->{e['to_event']})" for e in sl["edges"])
        return f"slice from node {sl['start']}: nodes {nodes}; edges {edges}"

    def assertReaches(self, sl, event, why=""):
        n = self.node(*event)
        self.assertIn(n, sl["ids"], f"{why}: should reach node {n} (of event {event}); {self._slice_text(sl)}")

    def assertNotReaches(self, sl, event, why=""):
        n = self.node(*event)
        self.assertNotIn(n, sl["ids"], f"{why}: must NOT reach node {n} (of event {event}); {self._slice_text(sl)}")


# ---------------------------------------------------------------------------
# Fixtures as a whole

GOOD = sorted(f for f in os.listdir(FIXTURES) if f.endswith(".argus") and not f.startswith("bad-"))


class Fixtures(ArchiveCase):
    def test_every_fixture_ingests_with_its_counts(self):
        for name in GOOD:
            with self.subTest(fixture=name):
                _, decls, events = parse_argus(fixture(name))
                s = self.ingest(fixture(name))
                # keys are only ever added (reordered, late, truncated_line came later)
                self.assertLessEqual({"trace", "events", "threads", "processes", "nodes", "edges", "skipped"}, set(s))
                self.assertEqual((s["reordered"], s["late"], s["truncated_line"]), (0, 0, 0))
                self.assertEqual(s["trace"], name)
                self.assertEqual(s["events"], len(events), "every event line is stored")
                threads = {d.split()[2] for _, d in decls if d.startswith("thread ")}
                procs = {d.split()[1] for _, d in decls if d.startswith("proc ")}
                with_threads = {d.split()[1] for _, d in decls if d.startswith("thread ")}
                self.assertEqual(s["threads"], len(threads))
                # a process declared without threads (a voucher's or a peer's
                # pid) may or may not count: the summary does not say
                self.assertIn(s["processes"], range(len(with_threads), len(procs) + 1))
                self.assertGreater(s["nodes"], 1)
                self.assertGreater(s["edges"], 0)

    def test_event_ids_count_event_lines_in_file_order(self):
        # fontd-mig-service.argus is not in global time order (threads
        # interleave freely), so file order and time order differ
        for name in ("fontd-mig-service.argus", "weak.argus"):
            with self.subTest(fixture=name):
                self.ingest(fixture(name), name=name)
                _, _, events = parse_argus(fixture(name))
                for i, (no, tid, ts, _) in enumerate(events, start=1):
                    got = self.json("--trace", name, f"find events where tid = {tid} and ts = {ts}")["events"]
                    self.assertEqual([e["id"] for e in got], [i], f"{name}:{no}")
                    self.assertEqual((got[0]["tid"], got[0]["ts"]), (tid, ts))
                    self.assertIsInstance(got[0]["node"], int, f"{name}:{no} has a node")

    def test_events_carry_their_process(self):
        self.ingest(fixture("weak.argus"))
        got = self.json("find events where tid = 5302 and ts = 18001000")["events"]
        self.assertEqual(len(got), 1)
        self.assertEqual((got[0]["pid"], got[0]["type"]), (530, "wakeup"))
        self.assertEqual(got[0]["reason"], "semaphore", "keys are kept as attributes")

    def test_unknown_keys_are_kept(self):
        path = os.path.join(self.dir, "extra.argus")
        with open(path, "w") as f:
            f.write('#argus-trace 1\nproc 501 "TextEdit"\nthread 501 1001 "main" main\n'
                    '1000000 1001 syscall begin name=read qos=0x15\n1000100 1001 syscall end name=read ret=0\n')
        self.ingest(path)
        got = self.json("find events where tid = 1001 and ts = 1000000")["events"]
        # the value's JSON form (21 or "0x15") is not fixed by the spec
        self.assertIn(got[0].get("qos"), (0x15, "0x15"), "spec: unknown keys are kept as attributes")


# ---------------------------------------------------------------------------
# Malformed input: FILE:LINE: in the message, exit 1, nothing left behind

class Malformed(ArchiveCase):
    def check(self, name, line):
        self.ingest(fixture("weak.argus"))
        before = self.json("traces")
        p = self.run_argusq("ingest", fixture(name), "--json")
        self.assertEqual(p.returncode, 1, f"an ingest failure exits 1 (argusq(1), EXIT STATUS): {p.stderr}")
        self.assertIn(f"{name}:{line}:", p.stderr, "the message names the file and the line")
        self.assertNotIn("runtime error", p.stderr)
        self.assertEqual(self.json("traces"), before, "nothing of the failed trace is left in the archive")

    def test_unknown_type(self):
        self.check("bad-unknown-type.argus", 8)

    def test_undeclared_thread(self):
        self.check("bad-undeclared-thread.argus", 7)

    def test_bad_number_in_a_key(self):
        self.check("bad-number.argus", 8)

    def test_bad_number_in_a_timestamp(self):
        self.check("bad-number-ts.argus", 7)

    def test_missing_required_key(self):
        self.check("bad-missing-key.argus", 9)

    def test_time_going_backwards_in_one_thread(self):
        self.check("bad-time-backwards.argus", 12)

    def test_missing_header(self):
        self.check("bad-header-missing.argus", 1)

    def test_wrong_header_version(self):
        self.check("bad-header-version.argus", 1)

    def test_unterminated_string(self):
        self.check("bad-string.argus", 5)

    def test_other_threads_may_interleave_backwards(self):
        # the lines before the bad one in bad-time-backwards.argus are valid
        good = os.path.join(self.dir, "interleaved.argus")
        with open(fixture("bad-time-backwards.argus")) as f:
            lines = f.readlines()
        with open(good, "w") as f:
            f.writelines(lines[:11])
        s = self.ingest(good)
        self.assertEqual(s["events"], 4)


# ---------------------------------------------------------------------------
# 1.a interrupts and timeshare maintenance

class Interrupt(RuleCase):
    """interrupt.argus: a disk interrupt lands on clang and wakes mds_stores."""
    FIXTURE = "interrupt.argus"
    IRQ_WAKE = (7001, 8000510)
    CLANG_BEFORE, CLANG_AFTER = (7001, 8000200), (7001, 8000700)
    MDS_WAIT, MDS_WOKEN = (5401, 7990100), (5401, 8000800)

    def test_interrupt_is_its_own_node(self):
        self.assertDistinctNodes(self.IRQ_WAKE, self.CLANG_BEFORE, why="1.a")
        self.assertDistinctNodes(self.IRQ_WAKE, self.CLANG_AFTER, why="1.a")
        self.assertKind(self.IRQ_WAKE, "interrupt", why="1.a")

    def test_interrupted_thread_continues_in_one_node(self):
        self.assertSameNode((7001, 8000000), self.CLANG_BEFORE, self.CLANG_AFTER, (7001, 8001000),
                            why="the interrupt is removed from the thread; the thread's segment goes on")
        self.assertKind(self.CLANG_BEFORE, "thread")

    def test_wakeup_belongs_to_the_interrupt(self):
        self.assertEdge("wakeup", self.IRQ_WAKE, self.MDS_WOKEN,
                        why="wakeup -> first event of the target after its latest wait")

    def test_slice_reaches_interrupt_not_the_thread_it_landed_on(self):
        sl = self.slice(self.MDS_WOKEN)
        self.assertReaches(sl, self.IRQ_WAKE, why="mds_stores was woken by the interrupt")
        self.assertNotReaches(sl, self.CLANG_BEFORE, why="clang only hosted the interrupt")
        self.assertNotReaches(sl, self.MDS_WAIT, why="the wait's node is reached only through a weak edge")

    def test_weak_edge_from_wait_to_wakeup(self):
        sl = self.slice(self.MDS_WOKEN, weak=True)
        w, k = self.ev(*self.MDS_WAIT), self.ev(*self.IRQ_WAKE)
        weak = [e for e in sl["edges"] if e["kind"] == "weak"]
        self.assertIn({"from": w["node"], "to": k["node"], "kind": "weak", "from_event": w["id"], "to_event": k["id"]},
                      [{x: e[x] for x in ("from", "to", "kind", "from_event", "to_event")} for e in weak],
                      self._slice_text(sl))
        self.assertReaches(sl, self.MDS_WAIT, why="with weak")
        self.assertNotReaches(sl, self.CLANG_BEFORE, why="even with weak")


class Timeshare(RuleCase):
    """timeshare.argus: timeshare maintenance on Xcode's main thread wakes
    the kernel's sched_maintenance_thread."""
    FIXTURE = "timeshare.argus"
    TS_WAKE = (7201, 9000210)
    XCODE = [(7201, 9000000), (7201, 9000100), (7201, 9000300), (7201, 9000400)]
    WOKEN = (102, 9000500)

    def test_timeshare_is_its_own_node(self):
        for e in self.XCODE:
            self.assertDistinctNodes(self.TS_WAKE, e, why="1.a timeshare maintenance is removed from the thread")
        self.assertKind(self.TS_WAKE, "timeshare")

    def test_thread_continues_in_one_node(self):
        self.assertSameNode(*self.XCODE, why="Xcode's key press is one segment around the maintenance")

    def test_slice_reaches_timeshare_not_xcode(self):
        self.assertEdge("wakeup", self.TS_WAKE, self.WOKEN)
        sl = self.slice(self.WOKEN)
        self.assertReaches(sl, self.TS_WAKE)
        self.assertNotReaches(sl, self.XCODE[0], why="Xcode only hosted the maintenance")


# ---------------------------------------------------------------------------
# 1.b waits and callout_level

class DispatchWait(RuleCase):
    """dispatch-wait.argus: a semaphore wait inside a dispatch block."""
    FIXTURE = "dispatch-wait.argus"
    ENQ = (6001, 10000100)
    BEGIN, WAIT, AFTER, END = (6002, 10000300), (6002, 10000360), (6002, 10001200), (6002, 10001400)
    SIGNAL = (6003, 10001000)

    def test_wait_inside_block_does_not_split_it(self):
        self.assertSameNode(self.BEGIN, (6002, 10000350), self.WAIT, self.AFTER, (6002, 10001300), self.END,
                            why="1.b: callout_level > 0")
        self.assertKind(self.BEGIN, "dispatch")

    def test_callout_is_bounded_by_invoke(self):
        self.assertDistinctNodes((6002, 9999000), self.BEGIN, why="1.c: invoke begin starts a node")
        self.assertDistinctNodes(self.END, (6002, 10001500), why="1.c: invoke end completes the node")

    def test_wait_outside_callouts_ends_a_node(self):
        self.assertDistinctNodes((6004, 10000000), (6004, 10002000), why="1.b: callout_level 0")
        self.assertSameNode((6004, 10000000), (6004, 10000010), why="the wait is the end of its node")

    def test_edges_into_the_block(self):
        self.assertEdge("dispatch", self.ENQ, self.BEGIN)
        self.assertEdge("wakeup", self.SIGNAL, self.AFTER,
                        why="the first event after the latest wait is inside the block")

    def test_slice_from_after_the_wait_reaches_the_enqueue(self):
        sl = self.slice(self.AFTER)
        self.assertReaches(sl, self.ENQ, why="the missing connection the paper warns about")
        self.assertReaches(sl, self.SIGNAL)
        self.assertNotReaches(sl, (6004, 10000000))


# ---------------------------------------------------------------------------
# 1.c dispatch and run-loop callouts

class DispatchFifo(RuleCase):
    """dispatch-fifo.argus: the same block enqueued twice, FIFO."""
    FIXTURE = "dispatch-fifo.argus"
    ENQ_MAIN, ENQ_LOADER, ENQ_B2 = (6501, 11000000), (6502, 11000100), (6502, 11000150)
    C1, C2, C3 = (6503, 11000300), (6503, 11000700), (6503, 11000900)

    def test_each_callout_is_its_own_node(self):
        self.assertDistinctNodes(self.C1, self.C2, self.C3, why="1.c")
        self.assertSameNode(self.C1, (6503, 11000400), (6503, 11000600))
        self.assertSameNode(self.C3, (6503, 11001000), (6503, 11001200))
        for c in (self.C1, self.C2, self.C3):
            self.assertKind(c, "dispatch")

    def test_fifo_pairing(self):
        self.assertEdge("dispatch", self.ENQ_MAIN, self.C1, why="first enqueue of B -> first invoke of B")
        self.assertEdge("dispatch", self.ENQ_LOADER, self.C3, why="second enqueue of B -> second invoke of B")
        self.assertEdge("dispatch", self.ENQ_B2, self.C2)
        self.assertNoEdge("dispatch", self.ENQ_LOADER, self.C1, why="each enqueue is invoked once")
        self.assertEqual(len(self.edges_into(self.C1, "dispatch")), 1)
        self.assertEqual(len(self.edges_into(self.C3, "dispatch")), 1)

    def test_slices(self):
        sl = self.slice(self.C1)
        self.assertReaches(sl, self.ENQ_MAIN)
        self.assertNotReaches(sl, self.ENQ_LOADER)
        sl = self.slice(self.C3)
        self.assertReaches(sl, self.ENQ_LOADER)
        self.assertNotReaches(sl, self.ENQ_MAIN)
        self.assertNotReaches(sl, self.C1, why="consecutive callouts of the worker are not connected")


class DispatchFifoRegrouped(DispatchFifo):
    """Invokes listed before the enqueues: FIFO goes by time."""
    REGROUP = True


class RunLoop(RuleCase):
    """runloop.argus: CFRunLoopPerformBlock from two workers; observers."""
    FIXTURE = "runloop.argus"
    SUB1, SUB2 = (6802, 12000100), (6803, 12000150)
    C1, C2 = (6801, 12000400), (6801, 12000600)
    AFTER_WAITING = (6801, 12000300)

    def test_each_invoke_is_its_own_node(self):
        self.assertSameNode(self.C1, (6801, 12000450), (6801, 12000550))
        self.assertDistinctNodes(self.AFTER_WAITING, self.C1, self.C2, (6801, 12001000), why="1.c")
        self.assertDistinctNodes((6801, 12000320), self.C1, why="invoke begin starts a node")
        self.assertKind(self.C1, "runloop")
        self.assertKind(self.C2, "runloop")

    def test_wait_inside_runloop_callout_does_not_split_it(self):
        self.assertSameNode(self.C2, (6801, 12000650), (6801, 12000660), (6801, 12000900), (6801, 12000950),
                            why="1.b: callout_level counts run-loop callouts too")

    def test_entry_begins_a_node(self):
        self.assertDistinctNodes((6801, 12001050), (6801, 12001100), why="paper/002: every RunLoopEntry begins a segment")
        self.assertSameNode((6801, 12001020), (6801, 12001050))
        self.assertSameNode((6801, 12001100), (6801, 12001110), why="nothing ends the node between entry and a backtrace")
        self.assertSameNode((6801, 12000000), (6801, 12000010))

    def test_runloop_edges(self):
        self.assertEdge("runloop", self.SUB1, self.C1)
        self.assertEdge("runloop", self.SUB2, self.C2)
        self.assertEdge("wakeup", (6802, 12000110), self.AFTER_WAITING)

    def test_slices(self):
        sl = self.slice(self.C1)
        self.assertReaches(sl, self.SUB1)
        self.assertNotReaches(sl, self.SUB2)
        self.assertNotReaches(sl, self.AFTER_WAITING, why="the callout is not connected to the iteration around it")
        sl = self.slice(self.C2)
        self.assertReaches(sl, self.SUB2)
        self.assertNotReaches(sl, self.SUB1)
        self.assertNotReaches(sl, self.C1)


# ---------------------------------------------------------------------------
# kernel thread for timers; timer edges

class KernelTimers(RuleCase):
    """kernel-timers.argus: one kernel thread fires Calendar's and the Dock's
    timers back to back."""
    FIXTURE = "kernel-timers.argus"
    ARM_CAL, ARM_DOCK = (3201, 7000000), (3301, 7100000)
    CO_CAL, CO_DOCK = (101, 7500010), (101, 7500040)
    WAKE_CAL, SEND_DOCK = (101, 7500020), (101, 7500050)
    CAL, DOCK = (3201, 7500100), (3301, 7500200)

    def test_every_timer_callout_is_its_own_node(self):
        self.assertDistinctNodes(self.CO_CAL, self.CO_DOCK, why="paper/002: every timer is in a new group")
        self.assertSameNode(self.CO_CAL, self.WAKE_CAL, (101, 7500030))
        self.assertSameNode(self.CO_DOCK, self.SEND_DOCK, (101, 7500055), (101, 7500060))
        self.assertKind(self.CO_CAL, "timer")
        self.assertKind(self.CO_DOCK, "timer")

    def test_edges(self):
        self.assertEdge("timer", self.ARM_CAL, self.CO_CAL)
        self.assertEdge("timer", self.ARM_DOCK, self.CO_DOCK)
        self.assertEdge("wakeup", self.WAKE_CAL, self.CAL)
        self.assertEdge("ipc", self.SEND_DOCK, self.DOCK)

    def test_calendar_does_not_reach_the_dock(self):
        sl = self.slice(self.CAL)
        self.assertReaches(sl, self.CO_CAL)
        self.assertReaches(sl, self.ARM_CAL)
        self.assertNotReaches(sl, self.CO_DOCK)
        self.assertNotReaches(sl, self.ARM_DOCK)

    def test_dock_does_not_reach_calendar(self):
        sl = self.slice(self.DOCK)
        self.assertReaches(sl, self.CO_DOCK)
        self.assertReaches(sl, self.ARM_DOCK)
        self.assertNotReaches(sl, self.CO_CAL)
        self.assertNotReaches(sl, self.ARM_CAL)


class TimerCancel(RuleCase):
    """timer-cancel.argus: arm, cancel, re-arm, fire."""
    FIXTURE = "timer-cancel.argus"
    ARM1, CANCEL, ARM2 = (3201, 19000000), (3201, 19500100), (3202, 19600000)
    CALLOUT, WOKEN = (101, 22000010), (3203, 22000100)

    def test_timer_edge_only_from_the_rearm(self):
        self.assertEdge("timer", self.ARM2, self.CALLOUT)
        self.assertNoEdge("timer", self.ARM1, self.CALLOUT, why="a cancel comes between")
        self.assertEqual(len(self.edges_into(self.CALLOUT, "timer")), 1)
        self.assertKind(self.CALLOUT, "timer")

    def test_slice(self):
        self.assertEdge("wakeup", (101, 22000020), self.WOKEN)
        sl = self.slice(self.WOKEN)
        self.assertReaches(sl, self.CALLOUT)
        self.assertReaches(sl, self.ARM2)
        self.assertNotReaches(sl, self.ARM1, why="the cancelled arm did not cause the callout")


class TimerRearm(RuleCase):
    """timer-rearm.argus: arm, re-arm without a cancel, one callout.  The
    spec's wording ("the next timer_callout begin timer=X, unless a
    timer_cancel timer=X comes between") connects both arms."""
    FIXTURE = "timer-rearm.argus"
    ARM1, ARM2, CALLOUT = (6021, 21000000), (6021, 21500100), (101, 24000010)

    def test_rearm_connects(self):
        self.assertEdge("timer", self.ARM2, self.CALLOUT)

    def test_first_arm_connects_too_by_the_spec_wording(self):
        self.assertEdge("timer", self.ARM1, self.CALLOUT, why="no timer_cancel lies between this arm and the callout")


# ---------------------------------------------------------------------------
# 2.a wakeup and weak

class Weak(RuleCase):
    """weak.argus: two waits of Mail's main thread, woken by two threads."""
    FIXTURE = "weak.argus"
    WAIT1, WAIT2 = (5301, 18000010), (5301, 18000710)
    WAKE_IDX, WAKE_FETCH = (5303, 18000500), (5302, 18001000)
    RUN2, RUN3 = (5301, 18000600), (5301, 18001100)

    def test_waits_end_nodes(self):
        self.assertDistinctNodes(self.WAIT1, self.RUN2, self.RUN3)
        self.assertSameNode(self.RUN2, self.WAIT2)
        self.assertSameNode(self.RUN3, (5301, 18001200), (5301, 18001400))

    def test_wakeup_goes_to_first_event_after_the_latest_wait(self):
        self.assertEdge("wakeup", self.WAKE_FETCH, self.RUN3)
        self.assertEdge("wakeup", self.WAKE_IDX, self.RUN2)
        self.assertNoEdge("wakeup", self.WAKE_FETCH, self.RUN2)

    def test_weak_edges(self):
        sl = self.slice(self.RUN3, weak=True)
        got = {(e["kind"], e["from_event"], e["to_event"]) for e in sl["edges"]}
        for wait, wake in ((self.WAIT2, self.WAKE_FETCH), (self.WAIT1, self.WAKE_IDX)):
            w, k = self.ev(*wait), self.ev(*wake)
            self.assertIn(("weak", w["id"], k["id"]), got, self._slice_text(sl))
            e = [x for x in sl["edges"] if (x["kind"], x["from_event"], x["to_event"]) == ("weak", w["id"], k["id"])][0]
            self.assertEqual((e["from"], e["to"]), (w["node"], k["node"]))

    def test_slice_without_weak(self):
        sl = self.slice(self.RUN3)
        self.assertReaches(sl, self.WAKE_FETCH)
        self.assertNotReaches(sl, self.RUN2, why="reached only through the weak edge")
        self.assertNotReaches(sl, self.WAKE_IDX)
        self.assertNotReaches(sl, self.WAIT1)

    def test_slice_with_weak(self):
        sl = self.slice(self.RUN3, weak=True)
        self.assertReaches(sl, self.WAKE_FETCH)
        self.assertReaches(sl, self.RUN2, why="weak: wait -> wakeup")
        self.assertReaches(sl, self.WAKE_IDX, why="then the wakeup that ended the first wait")
        self.assertReaches(sl, self.WAIT1, why="and weak again")


class WeakRegrouped(Weak):
    """Wakeups listed before the waits they end: pairing goes by time."""
    REGROUP = True


# ---------------------------------------------------------------------------
# 2.b mach messages: ipc and ipc_reply

class IpcKmsg(RuleCase):
    """ipc-kmsg.argus: receipts out of send order, paired by kmsg."""
    FIXTURE = "ipc-kmsg.argus"
    SEND_MSG, SEND_FT = (5601, 13000000), (5701, 13000100)
    RECV_FT, RECV_MSG = (1901, 13000200), (1901, 13001000)

    def test_pairing_by_kmsg(self):
        self.assertEdge("ipc", self.SEND_FT, self.RECV_FT)
        self.assertEdge("ipc", self.SEND_MSG, self.RECV_MSG)
        self.assertNoEdge("ipc", self.SEND_MSG, self.RECV_FT, why="FIFO would pair these; kmsg says otherwise")

    def test_slices(self):
        sl = self.slice(self.RECV_MSG)
        self.assertReaches(sl, self.SEND_MSG)
        self.assertNotReaches(sl, self.SEND_FT)
        sl = self.slice(self.RECV_FT)
        self.assertReaches(sl, self.SEND_FT)
        self.assertNotReaches(sl, self.SEND_MSG)


class IpcKmsgRegrouped(IpcKmsg):
    """The same trace with each thread's events together (receipts first in
    the file): pairing goes by the events, not by file order."""
    REGROUP = True


class IpcFifo(RuleCase):
    """ipc-fifo.argus: no kmsg; FIFO per destination port, after the send."""
    FIXTURE = "ipc-fifo.argus"
    OLD_RECV = (2001, 13980000)
    SLACK, ZOOM, SPOTIFY = (5801, 14000000), (5901, 14000100), (5951, 14000150)
    RECV_P2, RECV_P1_1, RECV_P1_2 = (2001, 14000200), (2001, 14000300), (2001, 14000400)

    def test_fifo_per_port(self):
        self.assertEdge("ipc", self.SPOTIFY, self.RECV_P2)
        self.assertEdge("ipc", self.SLACK, self.RECV_P1_1, why="earliest unmatched recv on P1 after the send")
        self.assertEdge("ipc", self.ZOOM, self.RECV_P1_2, why="only the send has a kmsg: FIFO")
        self.assertNoEdgeTo("ipc", self.OLD_RECV, why="it was received before any send in the trace")
        self.assertNoEdge("ipc", self.SLACK, self.RECV_P2, why="another port")

    def test_slices(self):
        sl = self.slice(self.RECV_P1_2)
        self.assertReaches(sl, self.ZOOM)
        self.assertNotReaches(sl, self.SLACK)
        self.assertNotReaches(sl, self.SPOTIFY)
        sl = self.slice(self.RECV_P1_1)
        self.assertReaches(sl, self.SLACK)
        self.assertNotReaches(sl, self.ZOOM)


class IpcFifoRegrouped(IpcFifo):
    REGROUP = True


class IpcReply(RuleCase):
    """ipc-reply.argus: lsd's listener receives, its worker replies."""
    FIXTURE = "ipc-reply.argus"
    PAGES_SEND, KEYNOTE_SEND = (6101, 15000100), (6201, 15000300)
    L_RECV_P, L_RECV_K = (2101, 15000200), (2101, 15000400)
    W_REPLY_P, W_REPLY_K = (2102, 15000900), (2102, 15001800)
    PAGES_GOT, KEYNOTE_GOT = (6101, 15001000), (6201, 15002000)

    def test_message_joins_a_node_with_an_empty_peer_set(self):
        self.assertSameNode((2102, 15000800), (2102, 15000850), self.W_REPLY_P, why="1.d: the set is empty")

    def test_edges(self):
        self.assertEdge("ipc", self.PAGES_SEND, self.L_RECV_P)
        self.assertEdge("ipc_reply", self.L_RECV_P, self.W_REPLY_P, why="recv with reply=R -> next send to R")
        self.assertEdge("ipc", self.W_REPLY_P, self.PAGES_GOT)
        self.assertEdge("ipc_reply", self.L_RECV_K, self.W_REPLY_K)
        self.assertNoEdge("ipc_reply", self.L_RECV_K, self.W_REPLY_P, why="that send goes to another reply port")

    def test_slice_from_pages_reply(self):
        sl = self.slice(self.PAGES_GOT)
        for e in (self.W_REPLY_P, self.L_RECV_P, self.PAGES_SEND):
            self.assertReaches(sl, e)
        self.assertNotReaches(sl, self.L_RECV_K)
        self.assertNotReaches(sl, self.KEYNOTE_SEND)

    def test_reused_reply_port(self):
        recv2, reply2, got2 = (2101, 15003200), (2102, 15003600), (6101, 15004000)
        self.assertEdge("ipc_reply", recv2, reply2)
        self.assertNoEdge("ipc_reply", self.L_RECV_P, reply2, why="the first receipt's next send to RP was the first reply")
        self.assertEqual(len([e for e in self.edges_into(self.W_REPLY_P, "ipc_reply")
                              if e["to_event"] == self.ev(*self.W_REPLY_P)["id"]]), 1)
        sl = self.slice(got2)
        self.assertReaches(sl, recv2)
        self.assertReaches(sl, (6101, 15003000))
        self.assertNotReaches(sl, self.L_RECV_P, why="the first request was answered already")
        self.assertNotReaches(sl, self.PAGES_SEND)

    def test_slice_from_keynote_reply(self):
        sl = self.slice(self.KEYNOTE_GOT)
        for e in (self.W_REPLY_K, self.L_RECV_K, self.KEYNOTE_SEND):
            self.assertReaches(sl, e)
        self.assertNotReaches(sl, self.PAGES_SEND)
        self.assertNotReaches(sl, self.L_RECV_P)


# ---------------------------------------------------------------------------
# 1.d the IPC peer set: WindowServer, vouchers, fontd

class WindowServerBatch(RuleCase):
    """windowserver-batch.argus: reply to Terminal + receive from Safari in
    one mach_msg_overwrite."""
    FIXTURE = "windowserver-batch.argus"
    T_SEND, S_SEND = (6011, 4000100), (6021, 4000600)
    WS_RECV_T, WS_REPLY_T, WS_RECV_S, WS_REPLY_S = (1601, 4000300), (1601, 4001210), (1601, 4001220), (1601, 4002000)
    T_GOT, S_GOT = (6011, 4001300), (6021, 4002100)

    def test_reply_joins_the_request_node_and_new_peer_splits(self):
        self.assertSameNode(self.WS_RECV_T, (1601, 4000900), (1601, 4001200), self.WS_REPLY_T,
                            why="Terminal is in the node's peer set")
        self.assertDistinctNodes(self.WS_REPLY_T, self.WS_RECV_S,
                                 why="1.d: Safari is not in the peer set: the receipt begins a new node")
        self.assertSameNode(self.WS_RECV_S, (1601, 4001230), self.WS_REPLY_S)

    def test_slice_from_terminal_reply(self):
        sl = self.slice(self.T_GOT)
        self.assertReaches(sl, self.WS_RECV_T)
        self.assertReaches(sl, self.T_SEND)
        self.assertNotReaches(sl, self.S_SEND, why="Safari's request only shared a system call")

    def test_slice_from_safari_reply(self):
        sl = self.slice(self.S_GOT)
        self.assertReaches(sl, self.WS_RECV_S)
        self.assertReaches(sl, self.S_SEND)
        self.assertNotReaches(sl, self.T_SEND)
        self.assertNotReaches(sl, self.WS_RECV_T)


class Voucher(RuleCase):
    """voucher.argus: nsurlsessiond messages trustd on behalf of Mail."""
    FIXTURE = "voucher.argus"
    MAIL_SEND, D_RECV, D_SEND, C_RECV = (5301, 6000000), (1401, 6000200), (1401, 6000700), (1451, 6000900)

    def test_voucher_keeps_one_node(self):
        self.assertSameNode(self.D_RECV, (1401, 6000210), (1401, 6000300), self.D_SEND,
                            why="the voucher says the work is for Mail, who is in the peer set")

    def test_trustd_reaches_mail(self):
        self.assertEdge("ipc", self.D_SEND, self.C_RECV)
        sl = self.slice(self.C_RECV)
        self.assertReaches(sl, self.D_RECV)
        self.assertReaches(sl, self.MAIL_SEND)


class NoVoucher(RuleCase):
    """voucher-none.argus: no voucher, or a voucher for a process outside
    the peer set."""
    FIXTURE = "voucher-none.argus"
    MAIL1, MAIL2 = (5301, 6000000), (5302, 6000100)
    D1_RECV, D1_SEND = (1401, 6000200), (1401, 6000700)
    D2_RECV, D2_SEND = (1402, 6000300), (1402, 6000800)
    C_RECV1, C_RECV2 = (1451, 6000900), (1451, 6001300)

    def test_message_to_a_new_peer_splits(self):
        self.assertSameNode(self.D1_RECV, (1401, 6000600))
        self.assertDistinctNodes(self.D1_RECV, self.D1_SEND, why="1.d: trustd is not in {Mail}, no voucher")

    def test_voucher_for_an_outsider_splits(self):
        self.assertSameNode(self.D2_RECV, (1402, 6000400))
        self.assertDistinctNodes(self.D2_RECV, self.D2_SEND,
                                 why="1.d: the voucher names Calendar, not a process in the peer set {Mail}")

    def test_trustd_does_not_reach_mail(self):
        for recv, send, d_recv, mail in ((self.C_RECV1, self.D1_SEND, self.D1_RECV, self.MAIL1),
                                         (self.C_RECV2, self.D2_SEND, self.D2_RECV, self.MAIL2)):
            with self.subTest(recv=recv):
                self.assertEdge("ipc", send, recv)
                sl = self.slice(recv)
                self.assertReaches(sl, send)
                self.assertNotReaches(sl, d_recv)
                self.assertNotReaches(sl, mail)


class FontdMigService(RuleCase):
    """fontd-mig-service.argus: one dispatch callout serving TextEdit (twice)
    and Preview through dispatch_mig_server."""
    FIXTURE = "fontd-mig-service.argus"
    ENQ = (882, 3000000)
    A1_SEND, A2_SEND, B_SEND = (1001, 3001100), (1005, 3001200), (2001, 3001400)
    S_A1, S_A2, S_B = (881, 3002200), (881, 3003010), (881, 3004010)
    R_A1, R_A2, R_B = (881, 3003000), (881, 3004000), (881, 3005000)
    A1_GOT, A2_GOT, B_GOT = (1001, 3003100), (1005, 3004100), (2001, 3005250)

    def test_every_service_is_its_own_node(self):
        self.assertDistinctNodes(self.S_A1, self.S_A2, self.S_B,
                                 why="paper/004: dispatch_mig_service isolates every service into its own node")
        for s in (self.S_A1, self.S_A2, self.S_B):
            self.assertKind(s, "service")

    def test_reply_goes_with_its_request(self):
        self.assertSameNode(self.S_A1, (881, 3002800), self.R_A1)
        self.assertSameNode(self.S_A2, (881, 3003900), self.R_A2)
        self.assertSameNode(self.S_B, (881, 3004900), self.R_B)

    def test_edges(self):
        self.assertEdge("ipc", self.B_SEND, self.S_B)
        self.assertEdge("ipc_reply", self.S_B, self.R_B)
        self.assertEdge("ipc", self.R_B, self.B_GOT)
        self.assertEdge("dispatch", self.ENQ, (881, 3002000))

    def test_slice_from_preview_reply(self):
        sl = self.slice(self.B_GOT)
        self.assertReaches(sl, self.S_B)
        self.assertReaches(sl, self.B_SEND, why="Preview's own request")
        self.assertNotReaches(sl, self.A1_SEND, why="TextEdit's request was only batched in the same callout")
        self.assertNotReaches(sl, self.A2_SEND)
        self.assertNotReaches(sl, self.S_A1)
        self.assertNotReaches(sl, self.S_A2)

    def test_slice_from_textedit_prefetch_reply(self):
        sl = self.slice(self.A2_GOT)
        self.assertReaches(sl, self.A2_SEND)
        self.assertNotReaches(sl, self.A1_SEND, why="same app, but another service")
        self.assertNotReaches(sl, self.B_SEND)


# ---------------------------------------------------------------------------
# 2.f shared flags

class NeedDisplay(RuleCase):
    """ca-need-display.argus: CoreAnimation's need_display flag."""
    FIXTURE = "ca-need-display.argus"
    W1, W2 = (6302, 16000400), (6302, 16002200)
    F0_X, F0_Z = (6301, 16000000), (6301, 16000010)
    F1_X, F1_Z, F1_CLEAR = (6301, 16001000), (6301, 16001010), (6301, 16001300)
    F2_X, F2_CLEAR, F3_X = (6301, 16003000), (6301, 16003100), (6301, 16004000)

    def test_write_to_read_of_the_written_value(self):
        self.assertEdge("flag", self.W1, self.F1_X)
        self.assertEdge("flag", self.W2, self.F2_X)

    def test_until_the_next_write(self):
        self.assertNoEdge("flag", self.W1, self.F2_X, why="superseded by later writes")
        self.assertEqual(len([e for e in self.edges_into(self.F2_X, "flag") if e["to_event"] == self.ev(*self.F2_X)["id"]]), 1)

    def test_reads_that_do_not_connect(self):
        self.assertNoEdgeTo("flag", self.F0_X, why="nothing was written before it")
        self.assertNoEdgeTo("flag", self.F0_Z)
        self.assertNoEdgeTo("flag", self.F1_Z, why="Z is never written")
        self.assertNoEdge("flag", self.W1, self.F3_X, why="it reads 0, not the 1 written")
        self.assertNoEdge("flag", self.W2, self.F3_X, why="it reads 0, not the 1 written")
        self.assertEdge("flag", self.F2_CLEAR, self.F3_X, why="the main thread's clear wrote the 0 it reads")

    def test_slice_from_frame_2(self):
        sl = self.slice(self.F2_X)
        self.assertReaches(sl, self.W2)
        self.assertNotReaches(sl, self.W1, why="frame 2 renders the second tile")
        self.assertNotReaches(sl, self.F1_X)

    def test_frame_0_has_no_cause(self):
        sl = self.slice(self.F0_X)
        self.assertEqual(sl["ids"], {self.node(*self.F0_X)}, self._slice_text(sl))


class NeedDisplayRegrouped(NeedDisplay):
    """Writes listed before the reads of another thread: pairing by time."""
    REGROUP = True


class SpinningCursor(RuleCase):
    """spinning-cursor.argus: sCGEventIsMainThreadSpinning (S) and
    sCGEventIsDispatchToMainThread (D)."""
    FIXTURE = "spinning-cursor.argus"
    E1_WRITE_D, E1_WAKE = (1002, 17000120), (1002, 17000130)
    E1_READ_S, E2_READ_S, E2_READ_D, E2_ARM = (1002, 17000110), (1002, 17500010), (1002, 17500020), (1002, 17500030)
    E3_BEGIN, E3_READ_D, E3_WRITE_S = (1002, 19500100), (1002, 19500110), (1002, 19500120)
    M1_FIRST, M1_READ_S, M1_WRITE_S, M1_WRITE_D = (1001, 17000200), (1001, 20500000), (1001, 20500020), (1001, 20500030)
    E4_READ_S, E4_READ_D = (1002, 20600010), (1002, 20600020)

    def test_nodes(self):
        self.assertSameNode(self.M1_FIRST, (1001, 20000000), self.M1_READ_S, self.M1_WRITE_S, self.M1_WRITE_D,
                            why="the hung main thread never waits")
        self.assertSameNode(self.E3_BEGIN, self.E3_READ_D, self.E3_WRITE_S)
        self.assertKind(self.E3_BEGIN, "timer")
        self.assertDistinctNodes(self.E1_WRITE_D, self.E2_ARM, self.E3_BEGIN, self.E4_READ_S)

    def test_flag_edges(self):
        self.assertEdge("flag", self.E3_WRITE_S, self.M1_READ_S, why="S = 1 read by the main thread")
        self.assertEdge("flag", self.E1_WRITE_D, self.E2_READ_D)
        self.assertEdge("flag", self.E1_WRITE_D, self.E3_READ_D)
        self.assertEdge("flag", self.M1_WRITE_S, self.E4_READ_S)
        self.assertEdge("flag", self.M1_WRITE_D, self.E4_READ_D)
        self.assertNoEdge("flag", self.E3_WRITE_S, self.E4_READ_S, why="it reads 0, and the main thread wrote since")
        self.assertNoEdge("flag", self.E1_WRITE_D, self.E4_READ_D)
        self.assertNoEdgeTo("flag", self.E1_READ_S, why="no write of S before it")
        self.assertNoEdgeTo("flag", self.E2_READ_S, why="no write of S before it")

    def test_other_edges(self):
        self.assertEdge("timer", self.E2_ARM, self.E3_BEGIN)
        self.assertEdge("wakeup", self.E1_WAKE, self.M1_FIRST)

    def test_slice_from_main_reading_spinning(self):
        sl = self.slice(self.M1_READ_S)
        self.assertReaches(sl, self.E3_WRITE_S, why="flag S")
        self.assertReaches(sl, self.E2_ARM, why="timer")
        self.assertReaches(sl, self.E1_WRITE_D, why="flag D and the wakeup")
        self.assertNotReaches(sl, self.E4_READ_S)

    def test_slice_from_timer_handler(self):
        sl = self.slice(self.E3_WRITE_S)
        self.assertReaches(sl, self.E2_ARM)
        self.assertReaches(sl, self.E1_WRITE_D)
        self.assertNotReaches(sl, self.M1_READ_S, why="the hung main thread did not cause the spin flag")



class SpinningCursorRegrouped(SpinningCursor):
    REGROUP = True


class FontdMigServiceRegrouped(FontdMigService):
    REGROUP = True


class IpcReplyRegrouped(IpcReply):
    REGROUP = True


if __name__ == "__main__":
    import unittest
    unittest.main()
