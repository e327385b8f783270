"""Where each thread's time went, checked against the file itself:
on every trace of ../shared/foreign*, recorded by others, the sum of
`running` over a thread's nodes is its on-CPU time counted from the file's
sched_switch events, and the sum of `runnable` its time from wakeups and
preemptions to its switch-ins.

The figures are computed here from the file, not from argusq: the text
formats by a regular expression over their lines, trace.dat through
`trace-cmd report -R`, CTF through the `babeltrace2` command, Perfetto by a
walk of the protobuf wire format (field numbers from Perfetto's published
protos/perfetto/trace/ftrace/*.proto, compact_sched included).  From the
sched events alone, per CPU and in time order:

  on-CPU     from each switch-in (sched_switch next_pid=T) to the following
             switch-out (prev_pid=T) on that CPU
  runnable   from a wakeup -- the first sched_waking / sched_wakeup /
             sched_wakeup_new of a task that is neither on a CPU nor
             runnable already -- to its switch-in, and from a preempted
             switch-out (prev_state R, R+, or the number 0 or the
             preempted mark: 256 on 4.14+, 1024/2048/4096 before) to the
             next switch-in.  A trace that records no sched_wakeup_new
             has the child's sched_process_fork instead (kernel/fork.c
             wakes the new task right after that tracepoint); one that
             records it starts the child's runnable there, not at the fork
             (the task is TASK_NEW, on no run queue, in between).

What the file cannot say is allowed for, and only that (graph/sched.c's
model; docs/QUERY.md, node fields):

  head       a thread already on a CPU when the trace starts: argusq counts
             from its first event, the file says only that it ran before
             its first switch-out -- between 0 and (that switch-out - the
             trace's first event)
  tail       a thread still on a CPU when the trace ends: between 0 and
             (the trace's last event - its last switch-in); and the
             runnable stretch that ended in a switch-in after which the
             thread has no switch-out (its latency is charged to the node
             the thread opens next, and it may open none)

(A compact_sched switch does not name the task it switches out: it is the
CPU's previous switch-in, and for the CPU's first one the task of the
CPU's events before it.)

Everything else must be equal to the nanosecond, per thread, and per node
away from the edges: a node's running is the thread's time on a CPU since
its node before ended (the run up to its first event, whether from a
switch-in or from the end of a node it left while still running), its
runnable the thread's runnable time in that stretch -- so time counted
twice in one node cannot hide behind time lost in another.  The idle task
(tid 0, one per CPU) is not a thread and is not compared; nor are
interrupt, softirq and timer nodes (the time of the thread they landed on
is that thread's).

A trace with no sched_switch at all is skipped, and says so; one line that
contradicts itself (CONTRADICTIONS) leaves its two tids out.  The traces
are read from ../shared, never copied here.  `python3
test_foreign_sched.py` prints the per-trace table of differences.
"""
import collections
import functools
import os
import re
import shutil
import subprocess
import unittest
import zlib

from common import ROOT, ArchiveCase, pb_fields, pb_varint

SHARED = os.path.join(ROOT, "..", "shared")
DIRS = ("foreign", "foreign-more", "foreign-lttng", "foreign-perfetto")

# prev_state as a number (trace-cmd report -R, LTTng, Perfetto): 0 is R;
# the preempted mark is TASK_REPORT_MAX (256) on 4.14+, TASK_STATE_MAX
# (1024, 2048 or 4096 by version) before, alone: still on the run queue
RUNNABLE_NUMS = {0, 256, 1024, 2048, 4096}

# switch lines whose task column is not their prev_pid: the kernel logs a
# switch in prev's context, so such a line contradicts itself, and whose
# time it is the file cannot say.  Perfetto's hand-made parser test: line 5,
# `bar-269 ... prev_comm=bar prev_pid=2172`.  The tids of such lines are
# not compared; any other such line in any trace fails the test.
CONTRADICTIONS = {"foreign/perfetto-sched_blocked_systrace.txt": 1}

# switches whose prev is not the task the cpu switched in before (events
# lost, or an excerpt): that stretch is an edge.  trappy's systrace page is
# ten events cut out of a trace: CPU 2 switches from swapper to Binder_5
# (1158) at 514769.086339 and again at .086424.  Any other fails the test.
MISMATCHES = {"foreign/trappy-trace_systrace.txt": 1}

# the traces with no sched_switch at all, and what they hold instead
NO_SWITCH = {
    "foreign/perfetto-bad_print.txt": "three print events",
    "foreign/tc-trace-func-graph.txt": "funcgraph_entry/exit only",
    "foreign/trappy-trace_sched.txt": "EAS load-tracking and sched_wakeup(_new), no sched_switch",
}


def traces():
    """Every trace of ../shared/foreign*: text, trace.dat, systrace page,
    CTF folder, Perfetto file; as paths relative to ../shared."""
    out = []
    for d in DIRS:
        top = os.path.join(SHARED, d)
        if not os.path.isdir(top):
            continue
        for f in sorted(os.listdir(top)):
            p = os.path.join(top, f)
            if os.path.isdir(p) or f.endswith((".txt", ".dat", ".html", ".perfetto-trace")):
                out.append(f"{d}/{f}")
    return out


def runnable_state(s):
    """prev_state, as letters (R, R+, S, D|K...) or a number: still runnable?"""
    s = s.strip()
    if re.fullmatch(r"\d+|0x[0-9a-fA-F]+", s):
        return int(s, 0) in RUNNABLE_NUMS
    return s == "R" or s.endswith("+")


def ns(sec, frac):
    return int(sec) * 1_000_000_000 + int((frac + "000000000")[:9])


# ---- the readers: events (ts, cpu, kind, ...), in file order ----
#   ("S", prev, prev_runnable, next)   sched_switch (prev None: unknown)
#   ("W", tid)                         sched_waking/_wakeup
#   ("N", tid)                         sched_wakeup_new
#   ("F", child)                       sched_process_fork
#   ("X", tid or None)                 any other event (the trace's span;
#                                      for Perfetto, who runs on the cpu)
#   ("?", task, prev)                  a text sched_switch whose task column
#                                      is not its prev_pid (the kernel logs
#                                      the switch as prev: the file
#                                      contradicts itself)

LINE = re.compile(r"-(\d+)\s+(?:\([ \d-]*\)\s+)?\[(\d+)\]\s+(?:\S+\s+)?(\d+)\.(\d+):\s+(?:([\w:]+):\s?)?(.*)")
SWITCH = re.compile(r"prev_pid=(-?\d+) prev_prio=\S+ prev_state=(\S+) (?:==> )?"
                    r"next_comm=.* next_pid=(-?\d+) next_prio=")
WAKE = re.compile(r"(?:^|\s)pid=(\d+) prio=")
FORK = re.compile(r"child_pid=(\d+)")


def text_events(lines):
    out = []
    for line in lines:
        m = LINE.search(line)
        if not m:
            continue
        tid, cpu, ts, name, body = int(m.group(1)), int(m.group(2)), ns(m.group(3), m.group(4)), m.group(5), m.group(6)
        if ts == 0 and "trace_event_clock_sync" in body:
            continue  # systrace's synthetic last line (`dummy-0000 [000] 0.0:`), no event
        if name == "sched_switch":
            s = SWITCH.search(body)
            if s:
                out.append((ts, cpu, "S", int(s.group(1)), runnable_state(s.group(2)), int(s.group(3))))
                if tid != int(s.group(1)):
                    out.append((ts, cpu, "?", tid, int(s.group(1))))
                continue
        elif name in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            w = WAKE.search(body)
            if w:
                out.append((ts, cpu, "N" if name == "sched_wakeup_new" else "W", int(w.group(1))))
                continue
        elif name == "sched_process_fork":
            f = FORK.search(body)
            if f:
                out.append((ts, cpu, "F", int(f.group(1))))
                continue
        out.append((ts, cpu, "X", tid))
    return out


def read_text(path):
    # a legacy systrace page's lines end in a JavaScript string's `\n\`
    with open(path, errors="replace") as f:
        return text_events(line.rstrip("\n").removesuffix("\\n\\") for line in f)


def read_dat(path):
    p = subprocess.run(["trace-cmd", "report", "-R", "-t", path], capture_output=True, text=True,
                       errors="replace", check=True)
    return text_events(p.stdout.splitlines())


CTF = re.compile(r"^\[(\d+)\.(\d+)\] \(.*?\) (?:\S+ )?(?:sched:)?(\w+): (.*)$")


def ctf_field(body, name):
    m = re.search(r"[{,] " + name + r" = (-?\d+)", body)
    return int(m.group(1)) if m else None


def read_ctf(path):
    p = subprocess.run(["babeltrace2", "--clock-seconds", path], capture_output=True, text=True,
                       errors="replace", check=True)
    out = []
    for line in p.stdout.splitlines():
        m = CTF.match(line)
        if not m:
            continue
        ts, name, body = ns(m.group(1), m.group(2)), m.group(3), m.group(4)
        cpu = ctf_field(body, "cpu_id")
        if cpu is None:
            cpu = ctf_field(body, "perf_cpu")

        def pick(*keys):  # LTTng says tid, perf pid
            return next((v for v in (ctf_field(body, k) for k in keys) if v is not None), None)

        if name == "sched_switch":
            state = ctf_field(body, "prev_state")
            out.append((ts, cpu, "S", pick("prev_tid", "prev_pid"), state in RUNNABLE_NUMS,
                        pick("next_tid", "next_pid")))
        elif name in ("sched_waking", "sched_wakeup", "sched_wakeup_new"):
            out.append((ts, cpu, "N" if name == "sched_wakeup_new" else "W", pick("tid", "pid")))
        elif name == "sched_process_fork":
            out.append((ts, cpu, "F", pick("child_tid", "child_pid")))
        else:
            out.append((ts, cpu, "X", None))
    return out


def _signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def read_perfetto(path):
    """Trace {packet 1}; TracePacket {ftrace_events 1, compressed_packets 50
    (a zlib-compressed Trace)}; FtraceEventBundle {cpu 1, event 2,
    compact_sched 4}; FtraceEvent {timestamp 1, pid 2, sched_switch 4
    {prev_pid 2, prev_state 4, next_pid 6}, sched_wakeup 17 / sched_waking 20
    / sched_wakeup_new 114 {pid 2}, sched_process_fork 239 {child_pid 4}};
    CompactSched {switch_timestamp 1, switch_prev_state 2, switch_next_pid
    3, waking_timestamp 7, waking_pid 8}, packed, the timestamps
    delta-encoded within the bundle.  A compact switch's prev is the cpu's
    previous next_pid (unknown for the cpu's first: None)."""
    with open(path, "rb") as f:
        data = f.read()
    out = []
    last_next = {}

    def bundle(b):
        cpu, compact = None, None
        events = []
        for n, w, v in pb_fields(b):
            if n == 1 and w == 0:
                cpu = v
            elif n == 2 and w == 2:
                events.append(v)
            elif n == 4 and w == 2:
                compact = v
        for ev in events:
            ts = pid = body = None
            for en, ew, v in pb_fields(ev):
                if en == 1 and ew == 0:
                    ts = v
                elif en == 2 and ew == 0:
                    pid = v
                elif ew == 2 and en in (4, 17, 20, 114, 239):
                    body = (en, {fn: _signed(fv) for fn, fw, fv in pb_fields(v) if fw == 0})
            en, m = body if body else (None, {})
            if en == 4:
                out.append((ts, cpu, "S", m.get(2, 0), m.get(4, 0) in RUNNABLE_NUMS, m.get(6, 0)))
            elif en in (17, 20, 114):
                out.append((ts, cpu, "N" if en == 114 else "W", m.get(2, 0)))
            elif en == 239:
                out.append((ts, cpu, "F", m.get(4, 0)))
            else:
                out.append((ts, cpu, "X", pid))
        if compact is not None:
            arr = collections.defaultdict(list)
            for cn, cw, cv in pb_fields(compact):
                if cn in (1, 2, 3, 7, 8):
                    if cw == 2:
                        i = 0
                        while i < len(cv):
                            v, i = pb_varint(cv, i)
                            arr[cn].append(_signed(v))
                    elif cw == 0:
                        arr[cn].append(_signed(cv))
            t = 0
            for d, state, nxt in zip(arr[1], arr[2], arr[3]):
                t += d
                out.append((t, cpu, "S", last_next.get(cpu), state in RUNNABLE_NUMS, nxt))
                last_next[cpu] = nxt
            t = 0
            for d, tid in zip(arr[7], arr[8]):
                t += d
                out.append((t, cpu, "W", tid))

    def trace(b):
        for n, w, v in pb_fields(b):
            if n == 1 and w == 2:
                for pn, pw, pv in pb_fields(v):
                    if pn == 1 and pw == 2:
                        bundle(pv)
                    elif pn == 50 and pw == 2:
                        trace(zlib.decompress(pv))

    trace(data)
    return out


@functools.lru_cache(maxsize=None)
def sched_events(path):
    """The trace's events, as the readers above give them (a tuple: read
    once per run)."""
    return tuple(_read(path))


def _read(path):
    if os.path.isdir(path):
        return read_ctf(path)
    if path.endswith(".dat"):
        return read_dat(path)
    if path.endswith(".perfetto-trace"):
        return read_perfetto(path)
    return read_text(path)


# ---- the accounting ----

class Figures:
    def __init__(self):
        self.running = 0        # complete stretches, switch-in to switch-out
        self.head = 0           # at most this much more: on a cpu at the start
        self.tail = 0           # ... and still on one at the end
        self.runnable = 0       # wakeup/preemption to a switch-in that a switch-out follows
        self.runnable_tail = 0  # ... to the last switch-in, when none follows
        self.on = []            # [from, to) on a cpu (from None: the trace's start; to None: its end)
        self.ready = []         # [from, to) runnable, ending in a switch-in
        self.unsure = []        # [from, to] the edges above span

    def edges(self):
        return self.head or self.tail or self.runnable_tail


class Accounts(dict):
    """tid -> Figures, from a trace's sched events; .switches, .first and
    .last (the trace's first and last event), .contradicted and
    .contradictions (the tids of switch lines whose task is not their
    prev_pid, and how many lines), .mismatches (switches whose prev is not
    the cpu's task switched in before)."""


def account(events):
    """Events are taken in time order (file order within a timestamp: a
    text trace out of order, CTF and Perfetto bundles, each per cpu)."""
    events = sorted(events, key=lambda e: e[0])
    acc = Accounts()
    acc.switches, acc.contradicted, acc.contradictions, acc.mismatches = 0, set(), 0, 0
    acc.first = events[0][0] if events else 0
    acc.last = events[-1][0] if events else 0
    use_fork = not any(e[2] == "N" for e in events)
    # who is on each cpu before its first switch: the switch's prev (for a
    # compact switch, which does not say, the pid of the cpu's events)
    seen_pid, cur, on = {}, {}, {}
    for e in events:
        if e[2] == "X" and e[3] is not None:
            seen_pid[e[1]] = e[3]
        elif e[2] == "S" and e[1] not in cur:
            prev = e[3] if e[3] is not None else seen_pid.get(e[1])
            cur[e[1]] = (prev, None)
            if prev:
                on[prev] = e[1]
    fig = collections.defaultdict(Figures)
    since, fork_since = {}, set()
    pending = {}  # tid -> its last switch-in's runnable stretch, until a switch-out follows
    for e in events:
        ts, cpu, kind = e[0], e[1], e[2]
        if kind == "?":
            acc.contradictions += 1
            acc.contradicted |= {e[3], e[4]}
            continue
        if kind in "WNF":
            t = e[3]
            if not t or t in on or (kind == "F" and not use_fork):
                continue
            if t not in since or (t in fork_since and kind == "N"):
                since[t] = ts
                fork_since.discard(t)
                if kind == "F":
                    fork_since.add(t)
            continue
        if kind != "S":
            continue
        acc.switches += 1
        _, _, _, prev, pre, nxt = e
        who, start = cur.get(cpu, (prev, None))
        if prev is None:
            prev = who
        if prev and who == prev:
            if start is None:
                fig[prev].head += ts - acc.first
                fig[prev].unsure.append((acc.first, ts))
            else:
                fig[prev].running += ts - start
            fig[prev].on.append((start, ts))
        elif who != prev:
            # the cpu's task switched in before is not the one switched
            # out (events lost, or an excerpt): whether `who` ran until
            # now the file cannot say -- counted as an edge
            acc.mismatches += 1
            if who:
                fig[who].head += ts - (acc.first if start is None else start)
                fig[who].unsure.append((acc.first if start is None else start, ts))
                on.pop(who, None)
        if prev:
            on.pop(prev, None)
            p = pending.pop(prev, None)
            if p:
                fig[prev].runnable += p[1] - p[0]
                fig[prev].ready.append(p)
            if pre:
                since[prev] = ts
            else:
                since.pop(prev, None)
            fork_since.discard(prev)
        if nxt:
            pending[nxt] = (since.pop(nxt), ts) if nxt in since else None
            fork_since.discard(nxt)
            on[nxt] = cpu
        cur[cpu] = (nxt, ts)
    for t, p in pending.items():
        if p:
            fig[t].runnable_tail += p[1] - p[0]
            fig[t].ready.append(p)
            fig[t].unsure.append((p[0], acc.last))
    for cpu, (t, start) in cur.items():
        if t and start is not None:
            fig[t].tail += acc.last - start
            fig[t].on.append((start, None))
            fig[t].unsure.append((start, acc.last))
    fig.pop(0, None)
    acc.update(fig)
    return acc


# node kinds that are a thread's own (the others are isolated contexts:
# interrupt, softirq, timer, timeshare)
OWN = {"thread", "dispatch", "runloop", "service"}


def within(spans, lo, hi, first, last):
    """ns of the [from, to) spans inside [lo, hi)."""
    n = 0
    for a, b in spans:
        a = first if a is None else a
        b = last if b is None else b
        n += max(0, min(b, hi) - max(a, lo))
    return n


def compare(acc, nodes):
    """What is out of bounds, as (tid, figure, argusq's, the file's low,
    high, node or the number of the tid's nodes).  Per thread, the sums
    over its nodes; and per node that the trace's edges do not touch,
    exactly the thread's time since its node before ended (its running on
    a cpu; its runnable from a wakeup or preemption to a switch-in): a node
    may take the time between it and the node before -- the wakeup
    latency, the run up to its first event -- and no other, so time
    counted twice in one node and lost in another fails too."""
    mine = collections.defaultdict(list)
    for n in nodes:
        if n["kind"] in OWN and n["tid"] != 0 and n["tid"] not in acc.contradicted:
            mine[n["tid"]].append(n)
    bad = []
    for t in sorted((set(acc) | set(mine)) - acc.contradicted):
        f = acc.get(t, Figures())
        own = sorted(mine[t], key=lambda n: (n["begin"], n["id"]))
        run, rbl = sum(n["running"] for n in own), sum(n["runnable"] for n in own)
        if not f.running <= run <= f.running + f.head + f.tail:
            bad.append((t, "running", run, f.running, f.running + f.head + f.tail, len(own)))
        if not f.runnable <= rbl <= f.runnable + f.runnable_tail:
            bad.append((t, "runnable", rbl, f.runnable, f.runnable + f.runnable_tail, len(own)))
        lo = acc.first
        for n in own:
            hi = n["end"]
            if any(a <= hi and lo <= b for a, b in f.unsure):
                lo = hi
                continue
            want = within(f.on, lo, hi, acc.first, acc.last)
            if n["running"] != want:
                bad.append((t, "node running", n["running"], want, want, n["id"]))
            want = within(f.ready, lo, hi, acc.first, acc.last)
            if n["runnable"] != want:
                bad.append((t, "node runnable", n["runnable"], want, want, n["id"]))
            lo = hi
    return bad


class ForeignSched(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(os.path.join(SHARED, "foreign")):
            self.skipTest(f"{SHARED}/foreign is not there (../shared beside the project)")
        super().setUp()

    def tools(self, path):
        need = "trace-cmd" if path.endswith(".dat") else "babeltrace2" if os.path.isdir(path) else None
        if need and not shutil.which(need):
            self.skipTest(f"{need} is not installed (Debian: {need}; the Makefile's DEBS has it)")

    def nodes(self, path, name):
        self.ingest(path, name=name)
        return self.json("--trace", name, "find nodes limit 100000000")["nodes"]

    def check(self, rel):
        path = os.path.join(SHARED, rel)
        self.tools(path)
        acc = account(sched_events(path))
        if not acc.switches:
            self.assertIn(rel, NO_SWITCH, f"{rel} has no sched_switch: say so in NO_SWITCH")
            self.skipTest(f"{rel}: no sched_switch at all ({NO_SWITCH[rel]})")
        self.assertNotIn(rel, NO_SWITCH)
        self.assertEqual(acc.contradictions, CONTRADICTIONS.get(rel, 0),
                         f"{rel}: switch lines whose task is not their prev_pid")
        self.assertEqual(acc.mismatches, MISMATCHES.get(rel, 0),
                         f"{rel}: switches whose prev is not the cpu's task switched in before")
        nodes = self.nodes(path, os.path.basename(rel))
        bad = compare(acc, nodes)
        self.assertEqual(bad, [], f"{rel}: (tid, figure, argusq's, the file's low and high bounds, "
                                  f"node or the tid's nodes)")
        # the edges are a thread or two per cpu at most: nearly every
        # thread is compared exactly
        cpus = {e[1] for e in sched_events(path) if e[2] == "S"}
        self.assertLessEqual(sum(1 for f in acc.values() if f.edges()), 3 * len(cpus), rel)
        return [f for t, f in acc.items() if not f.edges() and t not in acc.contradicted]

    def test_every_trace(self):
        names = traces()
        self.assertGreaterEqual(len(names), 28, names)
        exact = []
        for rel in names:
            with self.subTest(trace=rel):
                exact += self.check(rel)
        # not vacuous: thousands of threads, seconds of cpu and of waiting
        # for one, each to the nanosecond
        self.assertGreater(len(exact), 9000)
        self.assertGreater(sum(f.running for f in exact), 10 * 10**9)
        self.assertGreater(sum(f.runnable for f in exact), 4 * 10**9)

    def test_a_wrong_figure_fails(self):
        """The comparison is not vacuous: a node given 1 µs more running or
        less runnable, time moved between two nodes of a thread, or a node
        given to another thread, is caught."""
        rel = "foreign/tc-trace-android-sched-irq.txt"
        path = os.path.join(SHARED, rel)
        acc = account(sched_events(path))
        nodes = self.nodes(path, "x")
        self.assertEqual(compare(acc, nodes), [])
        exact = [n for n in nodes if n["kind"] in OWN and n["tid"] and n["running"] and n["runnable"]
                 and not acc[n["tid"]].edges()]
        self.assertTrue(exact)
        n = exact[0]

        def caught(wrong):
            return {(b[0], b[1]) for b in compare(acc, wrong)}

        for field, delta in (("running", 1000), ("running", -1000), ("runnable", -1000), ("runnable", 1000)):
            wrong = [dict(m, **{field: m[field] + delta}) if m is n else m for m in nodes]
            self.assertIn((n["tid"], field), caught(wrong), (field, delta))
        # the same sum, moved from one node of the thread to another
        m2 = next(m for m in exact if m["tid"] == n["tid"] and m is not n)
        moved = [dict(m, running=m["running"] + 1000) if m is n else
                 dict(m, running=m["running"] - 1000) if m is m2 else m for m in nodes]
        self.assertIn((n["tid"], "node running"), caught(moved))
        other = next(m for m in exact if m["tid"] != n["tid"])
        given = [dict(m, tid=other["tid"]) if m is n else m for m in nodes]
        self.assertEqual({b[0] for b in compare(acc, given)}, {n["tid"], other["tid"]})
        # and the file's side: one switch of the thread misread
        ev = list(sched_events(path))
        i = next(i for i, e in enumerate(ev) if e[2] == "S" and e[3] == n["tid"])
        self.assertTrue(compare(account(ev[:i] + ev[i + 1:]), nodes))
        self.assertTrue(compare(account(ev[:i] + [ev[i][:4] + (not ev[i][4],) + ev[i][5:]] + ev[i + 1:]), nodes))


def measure():
    """The per-trace table (python3 test_foreign_sched.py): threads
    compared, and the largest and total difference from the file's
    figures, for running and runnable (a thread's sum outside its bounds)."""
    import json
    import tempfile
    argusq = os.path.abspath(os.environ.get("ARGUSQ", os.path.join(ROOT, "build", "argusq")))
    print(f"{'trace':66} {'threads':>7} {'edges':>5} {'run max':>9} {'run total':>9} {'rbl max':>9} "
          f"{'rbl total':>9} {'nodes off':>9}")
    for rel in traces():
        path = os.path.join(SHARED, rel)
        acc = account(sched_events(path))
        if not acc.switches:
            print(f"{rel:66} no sched_switch")
            continue
        with tempfile.TemporaryDirectory() as d:
            db = os.path.join(d, "db")
            subprocess.run([argusq, "-d", db, "ingest", path, "--name", "x"], check=True, capture_output=True)
            nodes = json.loads(subprocess.run([argusq, "-d", db, "--json", "find nodes limit 100000000"],
                                              check=True, capture_output=True, text=True).stdout)["nodes"]
        bad = compare(acc, nodes)
        tids = ({n["tid"] for n in nodes if n["kind"] in OWN and n["tid"]} | set(acc)) - acc.contradicted

        def off(b):
            return b[2] - b[3] if b[2] < b[3] else b[2] - b[4]

        row = [rel, len(tids), sum(1 for t in tids if t in acc and acc[t].edges())]
        for what in ("running", "runnable"):
            d = [abs(off(b)) for b in bad if b[1] == what]
            row += [max(d, default=0), sum(d)]
        row.append(sum(1 for b in bad if b[1].startswith("node")))
        print(" ".join([f"{row[0]:66}"] + [f"{x:>{w}}" for x, w in zip(row[1:], (7, 5, 9, 9, 9, 9, 9))]))


if __name__ == "__main__":
    measure()
