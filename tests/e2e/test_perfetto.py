"""Perfetto's protobuf traces.

Every file of ../shared/foreign-perfetto (SOURCES.md: origin, licence, and
event counts made by a walk of the protobuf wire format, independently of
argusq), used from there, never copied here.  The figures below are
SOURCES.md's:

  switches  sched_switch events (full FtraceEvents, or compact_sched's)
  wakeups   (event, count): sched_wakeup in the Android 11 trace, the
            compact form's sched_waking in the Android 13 one
  binder    binder_transaction (= binder_transaction_received) events

Which tasks the file names at all is found here by a wire walk of its own
(named_tids): a `<...>` thread is only right for a tid none of them is.
"""
import collections
import gzip
import os
import unittest
import zlib

from common import ROOT, ArchiveCase, pb_fields, pb_varint

PERFETTO = os.path.join(ROOT, "..", "shared", "foreign-perfetto")

FILES = {
    "ms-perftools-linux-android-test_trace.perfetto-trace":
        dict(switches=15267, wakeups=("sched_wakeup", 8743), binder=0, kernel="4.19.113", arch="aarch64"),
    "Perfetto-Skills-api32_startup_warm.perfetto-trace":
        dict(switches=11086, wakeups=("sched_waking", 6857), binder=1365, kernel="5.10.107", arch="aarch64"),
}


# ---- the protobuf wire walk (common.py's pb_fields), independent of the reader ----

def named_tids(path):
    """The tids the file gives a name (process_tree, and the comm fields of
    sched_switch, sched_wakeup/waking, task_newtask/rename and
    compact_sched), those task_rename renames, and how many events the
    file holds (FtraceEvents, compact switches and wakings)."""
    with open(path, "rb") as f:
        data = f.read()
    named, renamed = set(), set()
    events = [0]

    def msg(b):
        return {n: v for n, _, v in pb_fields(b)}

    def packet(b):
        for n, w, v in pb_fields(b):
            if n == 2 and w == 2:  # process_tree: processes 1 {pid 1, cmdline 3}, threads 2 {tid 1, name 2}
                for pn, pw, pv in pb_fields(v):
                    if pw != 2:
                        continue
                    m = msg(pv)
                    if pn == 1 and 3 in m:
                        named.add(m.get(1))
                    if pn == 2 and 2 in m:
                        named.add(m.get(1))
            elif n == 1 and w == 2:  # ftrace_events
                for bn, _, bv in pb_fields(v):
                    if bn == 2:
                        events[0] += 1
                        for en, ew, ev in pb_fields(bv):
                            if ew != 2:
                                continue
                            m = msg(ev) if en in (4, 17, 20, 114, 235, 236) else {}
                            if en == 4:  # sched_switch: prev_pid 2, next_pid 6
                                named.update({m.get(2), m.get(6)})
                            elif en in (17, 20, 114):
                                named.add(m.get(2))
                            elif en in (235, 236):
                                named.add(m.get(1))
                                if en == 236:
                                    renamed.add(m.get(1))
                    elif bn == 4:  # compact_sched: switch_next_pid 3, waking_pid 8 (packed)
                        for cn, _, cv in pb_fields(bv):
                            if cn in (3, 8):
                                i = 0
                                while i < len(cv):
                                    x, i = pb_varint(cv, i)
                                    named.add(x)
                                    events[0] += 1
            elif n == 50 and w == 2:
                trace(zlib.decompress(v))

    def trace(b):
        for n, w, v in pb_fields(b):
            if n == 1 and w == 2:
                packet(v)

    trace(data)
    return {t for t in named if t}, renamed, events[0]


# FtraceEvent's fields that ingest/perfetto/perfetto.proto (the subset protobuf-c
# unpacks) holds; the others' messages argusq reads from their bytes
SUBSET = {3, 4, 11, 13, 17, 18, 20, 24, 25, 36, 37, 45, 50, 51, 56, 57, 58, 59, 114, 125, 126,
          235, 236, 237, 238, 239, 240, 329, 330}

# Some of those messages, from Perfetto's published schema
# (protos/perfetto/trace/ftrace/{power,kmem,binder,dma_fence,oom}.proto):
# FtraceEvent field -> (event, {field: key}), and the signed fields
# (int32/int64: two's complement varints)
OTHER = {
    16: ("clock_set_rate", {1: "name", 2: "state", 3: "cpu_id"}),
    313: ("rss_stat", {1: "member", 2: "size", 3: "curr", 4: "mm_id"}),
    52: ("binder_set_priority", {1: "proc", 2: "thread", 3: "old_prio", 4: "new_prio", 5: "desired_prio"}),
    417: ("dma_fence_wait_start", {1: "context", 2: "driver", 3: "seqno", 4: "timeline"}),
    326: ("oom_score_adj_update", {1: "comm", 2: "oom_score_adj", 3: "pid"}),
}
SIGNED = {(313, 1), (313, 2), (52, 1), (52, 2), (326, 2), (326, 3)}

# The pairs argusq's text reader gives for the tracefs line the kernel
# prints for each (its TP_printk: include/trace/events/power.h, kmem.h,
# dma_fence.h, oom.h; Android's drivers/android/binder_trace.h), from the
# fields: a format that starts without a key is kept whole as raw=, a bare
# word extends the value before it (binder_set_priority's `=>`)
MM_PAGES = ["MM_FILEPAGES", "MM_ANONPAGES", "MM_SWAPENTS", "MM_SHMEMPAGES"]
TEXT = {
    "clock_set_rate": lambda f: {"raw": f"{f['name']} state={f['state']} cpu_id={f['cpu_id']}"},
    "rss_stat": lambda f: {"mm_id": f["mm_id"], "curr": f["curr"], "type": MM_PAGES[f["member"]],
                           "size": f"{f['size']}B"},
    "binder_set_priority": lambda f: {"proc": f["proc"], "thread": f["thread"], "old": f"{f['old_prio']} =>",
                                      "new": f["new_prio"], "desired": f["desired_prio"]},
    "dma_fence_wait_start": lambda f: {k: f[k] for k in ("driver", "timeline", "context", "seqno")},
    "oom_score_adj_update": lambda f: {k: f[k] for k in ("pid", "comm", "oom_score_adj")},
}


def other_events(path):
    """The FtraceEvents of messages outside SUBSET, by a wire walk of the
    file: {field number: count}, generic's {event_name: count}, and for
    OTHER's messages {event: [(ts, tid, {key: value})]}."""
    with open(path, "rb") as f:
        data = f.read()
    counts, generic = collections.Counter(), collections.Counter()
    decoded = collections.defaultdict(list)

    def value(en, fn, w, v):
        if w == 2:
            return v.decode().rstrip("\n")
        if (en, fn) in SIGNED and v >= 1 << 63:
            v -= 1 << 64
        return v

    def packet(b):
        for n, w, v in pb_fields(b):
            if n == 1 and w == 2:  # ftrace_events: event 2 {timestamp 1, pid 2, the event}
                for bn, _, bv in pb_fields(v):
                    if bn != 2:
                        continue
                    head = {}
                    for en, ew, ev in pb_fields(bv):
                        if en in (1, 2) and ew == 0:
                            head[en] = ev
                        elif ew == 2 and en not in SUBSET:
                            counts[en] += 1
                            if en == 327:  # generic: event_name 1
                                generic[dict((fn, fv) for fn, _, fv in pb_fields(ev)).get(1, b"").decode()] += 1
                            if en in OTHER:
                                name, keys = OTHER[en]
                                decoded[name].append(
                                    (head.get(1), head.get(2),
                                     {keys[fn]: value(en, fn, fw, fv) for fn, fw, fv in pb_fields(ev)}))
            elif n == 50 and w == 2:
                trace(zlib.decompress(v))

    def trace(b):
        for n, w, v in pb_fields(b):
            if n == 1 and w == 2:
                packet(v)

    trace(data)
    return counts, generic, decoded


class Perfetto(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(PERFETTO):
            self.skipTest(f"{PERFETTO} is not there (../shared beside the project)")
        super().setUp()

    def test_every_file_is_listed(self):
        self.assertEqual({f for f in os.listdir(PERFETTO) if f.endswith(".perfetto-trace")}, set(FILES))

    def check(self, name, want, path=None, source=None):
        s = self.ingest(path or os.path.join(PERFETTO, name), name=name)
        self.assertEqual(s["format"], "perfetto")
        self.assertIn("erfetto", s["recorder"])
        q = lambda stmt: self.json("--trace", name, stmt)
        t = [t for t in self.json("traces")["traces"] if t["name"] == name][0]
        self.assertEqual(t["format"], "perfetto")
        self.assertTrue(t["labels"]["kernel"].startswith(want["kernel"]), t["labels"]["kernel"])
        self.assertEqual(t["labels"]["arch"], want["arch"])
        switches = q('find events where event = "sched_switch"')["events"]
        self.assertEqual(len(switches), want["switches"])
        ev, n = want["wakeups"]
        self.assertEqual(len(q(f'find events where event = "{ev}"')["events"]), n)
        self.assertTrue(q('find edges where kind = "wakeup" limit 1')["edges"], "wakeup edges")
        self.assert_one_cpu_at_a_time(switches)
        # a switch's task is the one the switch before it on its CPU put there
        last = {}
        for e in switches:
            if e["cpu"] in last:
                self.assertEqual(e["tid"], last[e["cpu"]], f"switch {e['id']}")
            last[e["cpu"]] = e["next_pid"]
        ts = [e["ts"] for e in switches]
        self.assertEqual(ts, sorted(ts))
        self.assertTrue(any(x % 1000 for x in ts), "nanoseconds")
        nodes = q("find nodes")["nodes"]
        named, renamed, events = named_tids(os.path.join(PERFETTO, source or name))
        self.assertEqual((s["events"], s["skipped"]), (events, 0), "every event stored")
        unnamed = {n["tid"] for n in nodes if n["thread"] == "<...>"}
        self.assertEqual(unnamed & named, set(), "<...> only for a task the file names nowhere")
        procs = collections.defaultdict(set)
        for n in nodes:
            procs[n["pid"]].add(n["proc"])
        self.assertEqual({p for p, v in procs.items() if len(v) > 1} - renamed, set(),
                         "one name per process, but where task_rename renames it")
        worst = max(nodes, key=lambda n: n["blocked"])
        self.ok("--trace", name, f"slice back from node {worst['id']} depth 10")
        self.ok("--trace", name, f"diagnose node {worst['id']}")
        return s

    def test_each_file(self):
        for name, want in sorted(FILES.items()):
            with self.subTest(file=name):
                self.check(name, want)

    def test_gzip_wrapped(self):
        name = "ms-perftools-linux-android-test_trace.perfetto-trace"
        gz = os.path.join(self.dir, name + ".gz")
        with open(os.path.join(PERFETTO, name), "rb") as f, gzip.open(gz, "wb") as g:
            g.write(f.read())
        a = self.check("gz", FILES[name], path=gz, source=name)
        b = self.ingest(os.path.join(PERFETTO, name), name="plain")
        for k in ("events", "nodes", "edges", "threads", "processes"):
            self.assertEqual(a[k], b[k], k)

    def test_binder_messages(self):
        name = "Perfetto-Skills-api32_startup_warm.perfetto-trace"
        self.ingest(os.path.join(PERFETTO, name), name=name)
        q = lambda stmt: self.json("--trace", name, stmt)
        sends = {e["id"]: e for e in q('find events where event = "binder_transaction"')["events"]}
        recvs = {e["id"]: e for e in q('find events where event = "binder_transaction_received"')["events"]}
        self.assertEqual((len(sends), len(recvs)), (1365, 1365))
        self.assertEqual({(e["type"], e["phase"]) for e in sends.values()}, {("mach_msg", "send")})
        edges = q('find edges where kind = "ipc"')["edges"]
        self.assertEqual(len(edges), 1365, "every transaction, received, is a message edge")
        for e in edges:
            s, r = sends[e["from_event"]], recvs[e["to_event"]]
            self.assertEqual(s["transaction"], r["transaction"])
        # a reply's edge goes back to the thread that sent the request
        replies = [e for e in edges if sends[e["from_event"]]["binder_reply"] == 1]
        self.assertGreater(len(replies), 400)
        requests = collections.defaultdict(list)  # (requester, server) -> request times
        for e in edges:
            s, r = sends[e["from_event"]], recvs[e["to_event"]]
            if s["binder_reply"] == 0 and s["oneway"] == 0:
                requests[(s["tid"], r["tid"])].append(r["ts"])
        for e in replies:
            s, r = sends[e["from_event"]], recvs[e["to_event"]]
            self.assertEqual(r["tid"], s["dest_thread"])
            self.assertTrue(any(ts <= s["ts"] for ts in requests[(r["tid"], s["tid"])]),
                            f"reply {s['transaction']}: no request from {r['tid']} to {s['tid']} before it")
        self.assertTrue(q('find edges where kind = "ipc_reply" limit 1')["edges"])
        # atrace slices are found by name; sched_blocked_reason goes on waits
        frames = q('find events where slice = "Choreographer#doFrame"')["events"]
        self.assertTrue(frames and all(f["atrace"] == "B" and f["node"] for f in frames))
        self.assertEqual(len(q('find events where event = "print"')["events"]), 13062)
        self.assertEqual(len(q('find events where event = "sched_blocked_reason"')["events"]), 1253)
        self.assertTrue(q('find events where type = "wait" and blocked_caller != "" limit 1')["events"])

    def test_compact_first_switch_names_its_prev(self):
        """The compact form leaves a switch's prev implied by the switch
        before it on its CPU; the first one's prev is the task an earlier
        event there showed (named as the file names it elsewhere), or idle
        (swapper/CPU); <...> only where the CPU showed nothing before."""
        name = "Perfetto-Skills-api32_startup_warm.perfetto-trace"
        self.ingest(os.path.join(PERFETTO, name), name=name)
        q = lambda stmt: self.json("--trace", name, stmt)
        switches = q('find events where event = "sched_switch"')["events"]
        cpus = sorted({e["cpu"] for e in switches})
        self.assertEqual(len(cpus), 8)
        unknown = [e for e in switches if e["prev_comm"] == "<...>"]
        for e in unknown:
            # before it on its CPU, only compact wakings, whose waker is
            # the same implied task
            before = q(f"find events where cpu = {e['cpu']} and ts < {e['ts']}")["events"]
            self.assertEqual({(b["event"], b["tid"]) for b in before} - {("sched_waking", 0)}, set(),
                             f"switch {e['id']}: its CPU showed its prev before")
        # CPU 0 begins with a compact waking and switch (nothing names the
        # task running there); the other CPUs' first switches come after
        # full events of theirs
        self.assertEqual([e["cpu"] for e in unknown], [0])
        for e in switches:
            if e["prev_pid"] == 0 and e not in unknown:
                self.assertEqual(e["prev_comm"], f"swapper/{e['cpu']}", f"switch {e['id']}")
        # tid 7773 ran on CPU 2 before its first switch there; the file
        # names it only in its sched_process_exit (comm=cat)
        cat = q('find events where event = "sched_switch" and prev_pid = 7773')["events"]
        self.assertEqual([(e["cpu"], e["prev_comm"]) for e in cat], [(2, "cat")])
        self.assertEqual({n["thread"] for n in q("find nodes where tid = 7773")["nodes"]}, {"cat"})

    def test_bad_files(self):
        name = "ms-perftools-linux-android-test_trace.perfetto-trace"
        with open(os.path.join(PERFETTO, name), "rb") as f:
            whole = f.read()
        i = 0  # the first packet boundary past 200000 bytes
        while i < 200000:
            _, i = pb_varint(whole, i)
            ln, i = pb_varint(whole, i)
            i += ln
        data = whole[:i]
        cut = os.path.join(self.dir, "cut.perfetto-trace")
        with open(cut, "wb") as f:
            f.write(whole[:len(whole) // 2])
        badvarint = os.path.join(self.dir, "varint.perfetto-trace")
        with open(badvarint, "wb") as f:
            f.write(data + b"\x0a" + b"\xff" * 11)
        toolong = os.path.join(self.dir, "long.perfetto-trace")
        with open(toolong, "wb") as f:
            f.write(data + b"\x0a\x80\x80\x04" + b"\x08\x01")
        # a packet whose own fields are corrupt: a bundle's length past the packet
        inner = os.path.join(self.dir, "inner.perfetto-trace")
        with open(inner, "wb") as f:
            f.write(data + b"\x0a\x04\x0a\x10\x08\x01")
        for path, want in ((cut, "(truncated)"), (badvarint, "bad varint"),
                           (toolong, "runs past the end of the file"), (inner, "packet")):
            with self.subTest(path=os.path.basename(path)):
                p = self.run_argusq("ingest", path)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(os.path.basename(path) + ": byte ", p.stderr)
                self.assertIn(want, p.stderr)
                self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")

    def test_fields_of_other_messages(self):
        """Events whose message perfetto.proto leaves out carry their
        fields, by Perfetto's published schema (ingest/perfetto/perfetto_other*.c),
        as decoded here by the wire walk, in the pairs of the tracefs text
        the kernel prints for them (TEXT): signed values with their sign,
        strings without a trailing newline."""
        name = "Perfetto-Skills-api32_startup_warm.perfetto-trace"
        path = os.path.join(PERFETTO, name)
        self.ingest(path, name=name)
        q = lambda stmt: self.json("--trace", name, stmt)
        counts, generic, decoded = other_events(path)
        self.assertEqual(sum(counts.values()), 17166)
        self.assertEqual(counts[313], 6413)
        for ev, fields in sorted(decoded.items()):
            with self.subTest(event=ev):
                want = [(ts, tid, TEXT[ev](f)) for ts, tid, f in fields]
                got = q(f'find events where event = "{ev}"')["events"]
                self.assertEqual(len(got), len(want))
                # pid and type are also an event's own fields (its
                # process, its kind): such an attribute is in the JSON's
                # "attributes", unless it says what the field says
                keys = {k for _, _, f in want for k in f}
                val = lambda e, k: e.get("attributes", {}).get(k, e.get(k))
                mine = sorted((e["ts"], e["tid"], tuple(str(val(e, k)) for k in sorted(keys))) for e in got)
                theirs = sorted((ts, tid, tuple(str(f.get(k)) for k in sorted(keys))) for ts, tid, f in want)
                self.assertEqual(mine, theirs)
        # a few values as the kernel has them
        csr = q('find events where event = "clock_set_rate" limit 1')["events"][0]
        self.assertEqual(csr["raw"], "device_throughput state=200000 cpu_id=3")
        rss = self.ok("--trace", name, 'find events where event = "rss_stat" limit 1').stdout
        self.assertIn("mm_id=2396046776 curr=1 type=MM_FILEPAGES size=2007040B", rss)
        oom = q('find events where event = "oom_score_adj_update" and comm = "gle.android.gms"')["events"]
        self.assertEqual(sorted({e["oom_score_adj"] for e in oom})[:2], [0, 100])
        table = self.ok("--trace", name, 'find events where event = "oom_score_adj_update" limit 1').stdout
        self.assertIn("pid=25240", table)
        # the process whose score changed, not the one that changed it
        self.assertEqual({(e["pid"], e["attributes"]["pid"]) for e in oom}, {(455, 25240)})
        rssj = q('find events where event = "rss_stat" limit 1')["events"][0]
        self.assertEqual((rssj["type"], rssj["attributes"]["type"]), ("raw", "MM_FILEPAGES"))
        # the file holds no negative value in these messages (the unit
        # tests have them); a uint32 past 2^31 stays unsigned
        self.assertIn(2396046776, {e["mm_id"] for e in q('find events where event = "rss_stat"')["events"]})
        # generic events go by the name they carry, with their fields
        for ev, n in generic.items():
            with self.subTest(generic=ev):
                got = q(f'find events where event = "{ev}"')["events"]
                self.assertEqual(len(got), n)
        self.assertEqual(q('find events where event = "mali_pm_status" limit 1')["events"][0]["gpu_id"], 0)
        # no event of these messages is left without fields, nor named by number
        fixed = {"id", "ts", "tid", "pid", "type", "node", "event", "cpu", "phase"}
        raw = q('find events where type = "raw"')["events"]
        self.assertEqual([e for e in raw if not set(e) - fixed], [])
        self.assertEqual([e for e in raw if e["event"].startswith("ftrace_event_")], [])


if __name__ == "__main__":
    unittest.main()
