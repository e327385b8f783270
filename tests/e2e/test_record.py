"""Recording on Linux: `argusq record`, trace.dat ingest, the argus.h
marker API and --watch flags, end to end.

The trace.dat tests run everywhere.  The recording tests trace the real
machine (as root); they skip, saying why, only when argusq itself reports
that this machine cannot trace (exit status 3: not root, no tracefs)."""
import json
import os
import time
import shutil
import subprocess

from common import ROOT, ArchiveCase, trace, arch_of

WORKLOADS = os.path.join(ROOT, "tests", "workloads")
INCLUDE = os.path.join(ROOT, "include")
TRACING = "/sys/kernel/tracing"


class TraceDat(ArchiveCase):
    """argusq ingest FILE.dat reads trace-cmd's binary file directly."""

    def test_dat_gives_the_events_of_its_report_text(self):
        """The same events, nodes and edges as `trace-cmd report -l` of the
        file printed with libtraceevent's plugins and without them, but
        with the records' nanoseconds where the text has microseconds."""
        a = self.ingest(trace("lockchain-anomaly.dat"), name="dat")
        self.assertEqual(a["events"], 1105)
        self.assertEqual(a["skipped"], 0)
        ea = self.json("find events in trace \"dat\"")["events"]
        self.assertGreater(sum(e["ts"] % 1000 != 0 for e in ea), len(ea) * 9 // 10)
        for text in ("lockchain-anomaly.txt", "lockchain-anomaly-noplugin.txt"):
            with self.subTest(text=text):
                b = self.ingest(trace(text), name=text)
                for k in ("events", "processes", "threads", "nodes", "edges"):
                    self.assertEqual(a[k], b[k], k)
                self.assertEqual(b["skipped"], 1)  # its cpus=2 header
                eb = self.json(f"find events in trace \"{text}\"")["events"]
                self.assertEqual(len(ea), len(eb))
                for x, y in zip(ea, eb):
                    self.assertEqual((x["ts"] + 500) // 1000 * 1000, y["ts"], x)
                    self.assertEqual(dict(x, ts=0), dict(y, ts=0))
                na = self.json("find nodes in trace \"dat\"")["nodes"]
                nb = self.json(f"find nodes in trace \"{text}\"")["nodes"]
                self.assertEqual([(n["id"], n["kind"], n["tid"], n["events"]) for n in na],
                                 [(n["id"], n["kind"], n["tid"], n["events"]) for n in nb])
                # report -l cuts the comm column to 8 characters; the .dat has it whole
                for x, y in zip(na, nb):
                    self.assertTrue(x["thread"].startswith(y["thread"]), (x, y))
        info = {t["name"]: t for t in self.json("traces")["traces"]}
        self.assertEqual(info["dat"]["format"], "trace-dat")

    def test_dat_slice_reaches_worker_and_hog(self):
        self.ingest(trace("lockchain-anomaly.dat"), name="t")
        slice_from_ui_main(self)

    def test_cut_and_garbage_files_fail_with_the_file_name(self):
        with open(trace("lockchain-anomaly.dat"), "rb") as f:
            data = f.read()
        cases = {"cut7.dat": data[:7], "cut.dat": data[:len(data) - 10000],
                 "junk.dat": data[:10] + bytes(range(256)) * 8}
        self.ingest(trace("lockchain-normal.txt"))
        before = self.json("traces")
        for name, content in cases.items():
            with self.subTest(file=name):
                path = os.path.join(self.dir, name)
                with open(path, "wb") as f:
                    f.write(content)
                p = self.run_argusq("ingest", path)
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn(name + ":", p.stderr)
                self.assertNotIn("runtime error", p.stderr)
        self.assertIn("offset 7:", self.run_argusq("ingest", os.path.join(self.dir, "cut7.dat")).stderr)
        self.assertEqual(self.json("traces"), before)


SHARED = os.path.join(ROOT, "..", "shared")
# Records in each .dat (the event lines `trace-cmd report` prints for it);
# recorded here (traces/) and by others on other kernels, architectures
# and trace-cmd versions (foreign/, see its SOURCES.md).
FIELD_DATS = {
    "traces/ipcdaemon.dat": 1034, "traces/lockchain-normal.dat": 874,
    "traces/lockchain-anomaly.dat": 1105, "traces/pipeline.dat": 277372,
    "foreign/labsisop-trace.dat": 293, "foreign/langraph-trace.dat": 41400,
    "foreign/trappy-raw_trace.dat": 757, "foreign/trappy-trace_idle.dat": 43,
}


class TraceDatFields(ArchiveCase):
    """Every .dat of ../shared, read from its records' fields: every
    record is an event, with its nanosecond timestamp."""

    def test_every_record_with_nanoseconds(self):
        for rel, records in FIELD_DATS.items():
            path = os.path.join(SHARED, rel)
            if not os.path.exists(path):
                self.skipTest(f"{path} is not there (../shared beside the project)")
            with self.subTest(dat=rel):
                name = os.path.basename(rel)
                info = self.ingest(path, name=name)
                self.assertEqual(info["events"], records)
                ev = self.json(f'find events in trace "{name}"')["events"]
                self.assertEqual(len(ev), records)
                self.assertGreater(sum(e["ts"] % 1000 != 0 for e in ev), records * 9 // 10)
                self.assertEqual([e["ts"] for e in ev], sorted(e["ts"] for e in ev))

    def test_state_letters_come_from_the_kernels_own_table(self):
        """An old kernel (trappy-trace_idle.dat, ARM) numbers task states
        otherwise than 4.14+: bit 64 is "x" (TASK_DEAD) in its print format;
        a modern kernel marks a preempted task "R+" (pipeline.dat)."""
        old = os.path.join(SHARED, "foreign", "trappy-trace_idle.dat")
        new = os.path.join(SHARED, "traces", "pipeline.dat")
        if not (os.path.exists(old) and os.path.exists(new)):
            self.skipTest("../shared is not beside the project")
        self.ingest(old, name="old")
        sw = self.json('find events where event = "sched_switch" in trace "old"')["events"]
        self.assertEqual(sw[0]["state"], "x")
        self.assertEqual(sw[0]["reason"], "x")
        self.assertEqual(sw[0]["prev_comm"], "trace-cmd")
        self.ingest(new, name="new")
        sw = self.json('find events where event = "sched_switch" in trace "new"')["events"]
        states = {e["state"] for e in sw}
        self.assertLessEqual({"R", "R+", "S", "D"}, states)
        self.assertTrue(all(e["type"] == "raw" for e in sw if e["state"] in ("R", "R+")))


class TwoCores(ArchiveCase):
    """ingest reads the file in a second thread while this one builds the
    graph, and a third writes the archive (ingest/pipe.c, db/wqueue.c);
    ARGUSQ_THREADS=1 and ARGUSQ_WRITER_THREAD=0 keep it all in one.  Both
    give the same trace, event for event."""

    def test_threaded_ingest_is_the_single_threaded_one(self):
        files = [trace("lockchain-anomaly.dat"), trace("lockchain-anomaly.txt"), trace("markers.trace")]
        big = os.path.join(ROOT, "..", "shared", "traces", "pipeline.dat")
        if os.path.exists(big):  # many batches through the queue
            files.append(big)
        for i, path in enumerate(files):
            with self.subTest(file=os.path.basename(path)):
                a = self.ingest(path, name=f"two{i}")
                p = self.run_argusq("ingest", path, "--name", f"one{i}", "--json", *arch_of(path),
                                    env={"ARGUSQ_THREADS": "1", "ARGUSQ_WRITER_THREAD": "0"})
                self.assertEqual(p.returncode, 0, p.stderr)
                b = json.loads(p.stdout)
                for k in ("events", "threads", "processes", "nodes", "edges", "skipped"):
                    self.assertEqual(a[k], b[k], k)
                for what in ("events", "nodes", "edges"):
                    x = self.run_argusq("--json", f'find {what} in trace "two{i}"').stdout
                    y = self.run_argusq("--json", f'find {what} in trace "one{i}"').stdout
                    self.assertEqual(x, y, what)


def slice_from_ui_main(case, lo=250_000_000, hi=330_000_000):
    """The reference analysis: ui-main's longest wait, sliced back, reaches
    worker (wakeup) and hog (wakeup on unlock)."""
    nodes = case.json('find nodes where thread = "ui-main" order by blocked desc limit 1')["nodes"]
    case.assertEqual(len(nodes), 1)
    n = nodes[0]
    case.assertGreater(n["blocked"], lo)
    case.assertLess(n["blocked"], hi)
    sl = case.json(f"slice back from node {n['id']} depth 6")
    threads = [x["thread"] for x in sl["nodes"]]
    case.assertIn("worker", threads)
    case.assertIn("hog", threads)
    by_id = {x["id"]: x for x in sl["nodes"]}
    first = [by_id[e["from"]]["thread"] for e in sl["edges"] if e["to"] == n["id"] and e["kind"] == "wakeup"]
    case.assertIn("worker", first)
    return n


def tracing_state():
    """The tracefs settings argusq record changes, to check it restores them."""
    files = ["tracing_on", "trace_clock", "set_event", "saved_cmdlines_size", "options/record-tgid",
             "options/overwrite"]
    cpus = sorted(d for d in os.listdir(os.path.join(TRACING, "per_cpu")) if d.startswith("cpu"))
    files += [f"per_cpu/{c}/buffer_size_kb" for c in cpus]
    state = {}
    for f in files:
        try:
            with open(os.path.join(TRACING, f)) as fh:
                state[f] = fh.read()
        except OSError:
            state[f] = None
    return state


class Record(ArchiveCase):
    """argusq record on this machine.  Each test compiles its workload."""

    def setUp(self):
        super().setUp()
        probe = self.run_argusq("record", "-o", os.path.join(self.dir, "probe.dat"), "--", "true")
        if probe.returncode == 3:
            self.skipTest("this machine cannot trace: " + probe.stderr.strip())
        self.assertEqual(probe.returncode, 0, probe.stderr)

    def build(self, name, *extra):
        exe = os.path.join(self.dir, name)
        src = os.path.join(WORKLOADS, name + ".c")
        subprocess.run(["cc", "-std=c11", "-O2", "-pthread", "-Wall", "-Werror", "-I", INCLUDE, "-o", exe, src]
                       + list(extra), check=True)
        return exe

    def record(self, *args):
        p = self.run_argusq("record", *args)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn("runtime error", p.stderr)
        return p

    def test_lockchain_anomaly_recorded_and_sliced(self):
        exe = self.build("lockchain")
        out = os.path.join(self.dir, "lc.dat")
        before = tracing_state()
        p = self.record("-o", out, "--", exe, "anomaly")
        self.assertEqual(tracing_state(), before, "argusq record left tracefs changed")
        self.assertIn("exited with status 0", p.stderr)
        with open(out, "rb") as f:
            self.assertEqual(f.read(10), b"\x17\x08\x44tracing")
        s = self.ingest(out, name="t")
        self.assertGreater(s["events"], 500)
        n = slice_from_ui_main(self)
        self.assertEqual(n["proc"], "ui-main")
        # every thread of the workload is in its process
        ths = self.json('find nodes where proc = "ui-main"')["nodes"]
        self.assertEqual({x["thread"] for x in ths} >= {"ui-main", "worker", "hog"}, True)
        self.assertEqual({x["pid"] for x in ths}, {n["pid"]})

    def test_a_recording_labels_its_trace(self):
        """What the recording knows about itself (the machine from the
        trace.dat header; the command, start, run time and exit status from
        record's own last marker) becomes the trace's labels."""
        out = os.path.join(self.dir, "lab.dat")
        self.record("-o", out, "--", "sh", "-c", "sleep 0.2; exit 3")
        self.ingest(out, name="t")
        got = self.json("traces")["traces"][0]["labels"]
        self.assertEqual(got["command"], "sh -c sleep 0.2; exit 3")
        self.assertEqual(got["status"], "3")
        self.assertGreaterEqual(float(got["duration"]), 0.2)
        self.assertLess(float(got["duration"]), 30)
        self.assertRegex(got["started"], r"^20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(got["host"], os.uname().nodename)
        self.assertEqual(got["kernel"], os.uname().release)
        self.assertEqual(got["arch"], os.uname().machine)
        self.assertEqual(int(got["cpus"]), os.cpu_count())
        self.assertEqual(got["recorder"], "argusq " + self.ok("--version", db=False).stdout.split()[1])
        found = self.json('traces where label.status = 3 and label.host = "%s"' % os.uname().nodename)
        self.assertEqual([t["name"] for t in found["traces"]], ["t"])

    def test_threads_started_before_the_recording_keep_their_process(self):
        exe = self.build("bgthreads")
        bg = subprocess.Popen([exe])
        try:
            time.sleep(0.3)
            out = os.path.join(self.dir, "bg.dat")
            self.record("-o", out, "--", "sleep", "0.3")
            self.assertTrue(os.path.exists(out + ".tgids"))
            self.ingest(out, name="bg")
            n = self.json('find nodes where thread = "bg-helper" limit 1')["nodes"]
            self.assertTrue(n, "the helper thread ran during the recording")
            self.assertEqual(n[0]["pid"], bg.pid)
            self.assertNotEqual(n[0]["tid"], bg.pid)
        finally:
            bg.kill()
            bg.wait()

    def test_markers_give_dispatch_edges(self):
        exe = self.build("dispatchq")
        out = os.path.join(self.dir, "q.dat")
        self.record("-o", out, "--", exe)
        self.ingest(out, name="q")
        ui = self.json('find nodes where thread = "ui-main" limit 1')["nodes"][0]
        enq = self.json(f'find events where event = "dispatch_enqueue" and tid = {ui["tid"]}')["events"]
        self.assertEqual(len(enq), 6)
        runs = self.json('find nodes where thread = "q-worker" and kind = "dispatch"')["nodes"]
        self.assertEqual(len(runs), 6)
        for node in runs:
            shown = self.json(f"show node {node['id']}")
            came = [e for e in shown["in"] if e["kind"] == "dispatch"]
            self.assertEqual(len(came), 1, shown)
            src = self.json(f"show node {came[0]['from']}")["node"]
            self.assertEqual(src["thread"], "ui-main")

    def watchpoints_fire(self):
        """Whether a hardware write watchpoint fires on this machine, asked
        of perf, not of argusq: `perf stat -e mem:ADDR:w` on a program that
        writes a global 1,000 times counts 1,000, or 0 where the machine
        (a VM whose hypervisor keeps the debug registers) fires none."""
        src = os.path.join(self.dir, "wp.c")
        exe = os.path.join(self.dir, "wp")
        with open(src, "w") as f:
            f.write("volatile int target;\nint main(void) { for (int i = 0; i < 1000; i++) target = i; return 0; }\n")
        subprocess.run(["cc", "-O1", "-no-pie", "-o", exe, src], check=True)
        nm = subprocess.run(["nm", exe], capture_output=True, text=True, check=True).stdout
        addr = [l.split()[0] for l in nm.splitlines() if l.split()[-1:] == ["target"]][0]
        p = subprocess.run(["perf", "stat", "-x,", "-e", f"mem:0x{addr}:w", exe], capture_output=True, text=True)
        counts = [l.split(",")[0] for l in p.stderr.splitlines() if f"mem:0x{addr}" in l]
        if p.returncode != 0 or not counts or not counts[0].isdigit():
            self.skipTest(f"perf stat cannot count a watchpoint here: {p.stderr.strip()[-200:]}")
        return int(counts[0]) >= 1000

    def test_watch_where_watchpoints_do_not_fire(self):
        exe = self.build("flagwatch")
        if self.watchpoints_fire():
            self.skipTest("hardware watchpoints fire here (test_watched_flag_gives_a_flag_edge checks them)")
        out = os.path.join(self.dir, "f.dat")
        p = self.run_argusq("record", "-o", out, "--watch", "ready", "--", exe)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("hardware watchpoints do not fire on this machine", p.stderr)
        self.assertIn("argus_flag_write() and argus_flag_read() of include/argus/argus.h", p.stderr)
        self.assertNotIn("watching ready", p.stderr)
        self.assertFalse(os.path.exists(out))

    def test_watched_flag_gives_a_flag_edge(self):
        exe = self.build("flagwatch")
        if not self.watchpoints_fire():
            self.skipTest("hardware watchpoints do not fire here (test_watch_where_watchpoints_do_not_fire)")
        out = os.path.join(self.dir, "f.dat")
        p = self.record("-o", out, "--watch", "ready", "--watch", "generation", "--", exe)
        self.assertIn("watching ready at 0x", p.stderr)
        self.ingest(out, name="f")
        writes = self.json('find events where type = "flag_write"')["events"]
        ready_w = [e for e in writes if e["sym"] == "ready"]
        gen_w = [e for e in writes if e["sym"] == "generation"]
        # one event per write: the access watchpoint does not repeat it as a read
        self.assertEqual([(e["value"], self.thread(e["tid"])) for e in ready_w], [(1, "setter")])
        self.assertEqual([e["value"] for e in gen_w], [1, 2])
        reads = self.json('find events where type = "flag_read"')["events"]
        self.assertEqual({e["sym"] for e in reads}, {"ready"})
        self.assertEqual({self.thread(e["tid"]) for e in reads}, {"poller"})
        self.assertGreater(len([e for e in reads if e["value"] == 0]), 5)
        seen = [e for e in reads if e["value"] == 1]
        self.assertEqual(len(seen), 1)
        self.assertGreater(seen[0]["ts"], ready_w[0]["ts"])
        self.assertEqual(ready_w[0]["addr"], seen[0]["addr"])
        shown = self.json(f"show node {seen[0]['node']}")
        flags = [e for e in shown["in"] if e["kind"] == "flag"]
        self.assertEqual([(e["from"], e["from_event"], e["to_event"]) for e in flags],
                         [(ready_w[0]["node"], ready_w[0]["id"], seen[0]["id"])])

    def thread(self, tid):
        nodes = self.json(f"find nodes where tid = {tid} limit 1")["nodes"]
        return nodes[0]["thread"] if nodes else None

    def test_max_mb_keeps_the_newest_events(self):
        out = os.path.join(self.dir, "m.dat")
        p = self.record("-o", out, "--max-mb", "1", "--", "sh", "-c",
                        "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); echo > /dev/null; done")
        self.assertIn("oldest events were overwritten", p.stderr)
        # 1 MiB of events, compressed, plus the headers (kallsyms, formats)
        self.assertLess(os.path.getsize(out), 4 << 20)
        s = self.ingest(out, name="m")
        self.assertGreater(s["events"], 1000)

    def test_events_option(self):
        out = os.path.join(self.dir, "e.dat")
        self.record("-o", out, "--events", "sched:sched_switch,sched:sched_wakeup", "--", "sleep", "0.05")
        self.ingest(out, name="e")
        names = {e["event"] for e in self.json('find events where tid > 0 limit 2000')["events"]}
        self.assertTrue(names <= {"sched_switch", "sched_wakeup", "print", "tracing_mark_write"}, names)
        self.assertIn("sched_switch", names)


class RecordUsage(ArchiveCase):
    """Errors that need no tracing."""

    def test_usage(self):
        for args, code, msg in [
            (["record"], 2, "needs a command"),
            (["record", "--max-mb", "x", "--", "true"], 2, "--max-mb"),
            (["record", "--bogus", "--", "true"], 2, "unknown record option"),
            (["record", "-o", "x.dat", "--", "/nonexistent/cmd"], 1, "/nonexistent/cmd"),
            (["record", "--watch", "nosuch", "--", shutil.which("true") or "/bin/true"], 1, "nosuch"),
        ]:
            with self.subTest(args=args):
                p = self.run_argusq(*args)
                self.assertEqual(p.returncode, code, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertNotIn("runtime error", p.stderr)

    def test_help_lists_default_events(self):
        p = self.run_argusq("record", "-h", db=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        head, _, tail = p.stdout.partition("The default events (--events default):\n")
        self.assertIn("argusq record [-o FILE]", head)
        listed = [w.strip() for w in tail.replace("\n", " ").split(",") if w.strip()]
        self.assertIn("sched:sched_switch", listed)
        self.assertIn("raw_syscalls:sys_enter", listed)
        self.assertEqual(len(listed), len(set(listed)))
        for ev in listed:
            system, _, name = ev.partition(":")
            self.assertTrue(system and name, ev)
        # each is a tracepoint of this kernel, where tracefs is mounted
        events = "/sys/kernel/tracing/events"
        if os.path.isdir(events):
            missing = [ev for ev in listed if not os.path.isdir(os.path.join(events, *ev.split(":")))]
            self.assertEqual(missing, [])

    def test_help_mentions_record(self):
        p = self.run_argusq("--help", db=False)
        self.assertIn("argusq record [-o FILE] [--max-mb N] [--events LIST] [--watch SYMBOL]...", p.stdout)
