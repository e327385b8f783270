"""LTTng's CTF traces and perf.

Every folder of ../shared/foreign-lttng (SOURCES.md: origin, licence, and
event counts made with babeltrace2, independently of argusq), used from
there, never copied here.  The figures below are SOURCES.md's:

  events    all events of the trace (babeltrace2 FOLDER | wc -l)
  switches  sched_switch events
  wakeups   sched_waking + sched_wakeup
  renamed   processes the trace names twice (read with babeltrace2): a
            fork's child by its parent's comm, then by the program it
            exec'd (sched_process_exec; in many-threads, which does not
            trace exec, the comm of the child's next sched_switch)

perf: tests/traces/pipechain-{normal,anomaly}.perf.txt are `perf script`
of tests/workloads/pipechain.c recorded here (tests/traces/README.md says
how), and pipechain-anomaly.perf.data the anomaly's perf.data itself; the
diagnosis must name the root cause the ftrace recordings of the same
workload name (`backend`, tests/e2e/test_diagnose.py).
"""
import collections
import glob
import json
import os
import shutil
import struct
import unittest

from common import ROOT, ArchiveCase, trace

LTTNG = os.path.join(ROOT, "..", "shared", "foreign-lttng")

# renamed: the processes that carry two names in the file, each checked
# against `babeltrace2 FOLDER`: a process forked under its parent's name
# and renamed by exec (bug446190's 526: "sh", then /usr/bin/lttng;
# perf-taskset2's 1834: "perf", taskset, then /bin/ls; simple-kernel's 2032
# and 2033: ls and lttng; many-threads' 2673 "genKernelTraces" then
# "multithread", 10704 "sudo" then "genKernelTraces", 10705 "sudo" and
# "lttng"), so "one name per process" allows exactly these.

FOLDERS = {
    "tracecompass-test-traces-many-threads": dict(events=240644, switches=28325, wakeups=13486,
                                                  recorder="lttng-modules 2.8.0", renamed={2673, 10704, 10705}),
    "tracecompass-test-traces-bug446190": dict(events=31556, switches=1052, wakeups=566,
                                               recorder="lttng-modules 2.5.0", renamed={526}),
    "babeltrace-lttng-tracefile-rotation-kernel": dict(events=12305, switches=4687, wakeups=4756,
                                                       recorder="lttng-modules 2.10.8"),
    "tracevizlab-simple-kernel": dict(events=11980, switches=774, wakeups=826, recorder="lttng-modules 2.11.0",
                                      renamed={2032, 2033}),
    "tracecompass-test-traces-perf-taskset2": dict(events=1500, switches=562, wakeups=346, recorder="perf",
                                                   renamed={1834}),
}


class Lttng(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(LTTNG):
            self.skipTest(f"{LTTNG} is not there (../shared beside the project)")
        super().setUp()

    def test_every_folder_is_listed(self):
        self.assertEqual({d for d in os.listdir(LTTNG) if os.path.isdir(os.path.join(LTTNG, d))}, set(FOLDERS))

    def count(self, name, where):
        return len(self.json("--trace", name, f"find events where {where}")["events"])

    def check(self, name, want):
        s = self.ingest(os.path.join(LTTNG, name), name=name)
        self.assertEqual(s["events"], want["events"])
        self.assertEqual(s["skipped"], 0, "every event's task is known")
        q = lambda stmt: self.json("--trace", name, stmt)
        t = [t for t in self.json("traces")["traces"] if t["name"] == name][0]
        self.assertEqual(t["format"], "ctf")
        self.assertEqual(t["labels"]["recorder"], want["recorder"])
        switches = q('find events where event = "sched_switch"')["events"]
        self.assertEqual(len(switches), want["switches"])
        self.assertEqual(self.count(name, 'event = "sched_wakeup" or event = "sched_waking"'), want["wakeups"])
        self.assertTrue(q('find edges where kind = "wakeup" limit 1')["edges"], "wakeup edges")
        self.assert_one_cpu_at_a_time(switches)
        # time order and nanoseconds
        ts = [e["ts"] for e in switches]
        self.assertEqual(ts, sorted(ts))
        self.assertTrue(any(x % 1000 for x in ts), "nanoseconds")
        nodes = q("find nodes")["nodes"]
        self.assertEqual({n["tid"] for n in nodes if n["thread"] == "<...>"}, set(), "every task is named")
        procs = collections.defaultdict(set)
        for n in nodes:
            procs[n["pid"]].add(n["proc"])
        self.assertEqual({p for p, v in procs.items() if len(v) > 1}, want.get("renamed", set()),
                         "one name per process, but where the trace renames it")
        worst = max(nodes, key=lambda n: n["blocked"])
        self.ok("--trace", name, f"slice back from node {worst['id']} depth 10")
        self.ok("--trace", name, f"diagnose node {worst['id']}")

    def test_each_folder(self):
        for name, want in sorted(FOLDERS.items()):
            with self.subTest(folder=name):
                self.check(name, want)

    def test_folder_with_a_trailing_slash_is_named_by_the_folder(self):
        """`argusq ingest DIR/` (as a shell completes a folder) names the trace DIR."""
        name = "tracevizlab-simple-kernel"
        s = self.ingest(os.path.join(LTTNG, name) + "//")
        self.assertEqual(s["trace"], name)
        self.assertEqual([t["name"] for t in self.json("traces")["traces"]], [name])

    def test_syscalls_by_both_namings(self):
        """syscall_entry_X/syscall_exit_X (2.6+) and sys_X/exit_syscall (before)."""
        for name in ("tracevizlab-simple-kernel", "tracecompass-test-traces-bug446190"):
            self.ingest(os.path.join(LTTNG, name), name=name)
            ev = self.json("--trace", name, 'find events where type = "syscall" limit 400')["events"]
            self.assertEqual(len(ev), 400)
            self.assertTrue(all(e.get("name") for e in ev), "every syscall named")
            self.assertEqual({e["event"].split("_")[1] for e in ev}, {"enter", "exit"})

    def test_bad_folders(self):
        src = os.path.join(LTTNG, "tracevizlab-simple-kernel")
        cut = os.path.join(self.dir, "cutmeta")
        shutil.copytree(src, cut)
        with open(os.path.join(cut, "metadata"), "r+b") as f:
            f.truncate(3000)
        missing = os.path.join(self.dir, "missing")
        shutil.copytree(src, missing)
        os.unlink(os.path.join(missing, "k_3"))
        garbled = os.path.join(self.dir, "garbled")
        shutil.copytree(src, garbled)
        with open(os.path.join(garbled, "k_2"), "r+b") as f:
            f.truncate(70000)  # past its end: zeros where a packet should start
        empty = os.path.join(self.dir, "empty")
        os.mkdir(empty)
        for path, want in ((cut, "cutmeta/metadata:36: not a CTF trace"),  # babeltrace2: unexpected end
                           (missing, "missing/k_3: stream file missing"),
                           (garbled, "garbled/k_2: not a CTF stream"),
                           (empty, "empty/metadata: cannot open")):
            with self.subTest(path=os.path.basename(path)):
                p = self.run_argusq("ingest", path)
                self.assertNotEqual(p.returncode, 0)
                self.assertIn(want, p.stderr)
                self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")


    def copy(self, name, to):
        dst = os.path.join(self.dir, to)
        shutil.copytree(os.path.join(LTTNG, name), dst)
        for f in os.listdir(dst):
            os.chmod(os.path.join(dst, f), 0o644)
        return dst

    def refused(self, path, *want):
        """The ingest fails with every string of want on stderr and leaves
        the archive as it was."""
        before = self.json("traces")["traces"]
        p = self.run_argusq("ingest", path)
        self.assertEqual(p.returncode, 1, p.stderr)
        for w in want:
            self.assertIn(w, p.stderr)
        self.assertEqual(self.json("traces")["traces"], before, "archive unchanged")
        return p.stderr

    def test_damaged_metadata_names_its_line(self):
        """babeltrace2 2.0 gives only "Cannot create trace" as its error;
        the metadata parser's complaint, with its line, is in its log."""
        self.ingest(trace("lockchain-normal.txt"), name="kept")
        # text metadata (perf's CTF conversion): line 10 of the file
        text = self.copy("tracecompass-test-traces-perf-taskset2", "textmeta")
        meta = os.path.join(text, "metadata")
        with open(meta) as f:
            orig = f.read()
        lines = orig.split("\n")
        self.assertIn("uuid[16];", lines[9])
        lines[9] = "\tbyte_order = le; garbage;"
        with open(meta, "w") as f:
            f.write("\n".join(lines))
        self.refused(text, f"{meta}:10: not a CTF trace babeltrace2 can read: syntax error",
                     'token="byte_order"')
        # a value the parser takes and babeltrace2's IR visitor refuses
        lines = orig.split("\n")
        self.assertEqual(lines[6], "\tbyte_order = le;")
        lines[6] = "\tbyte_order = xx;"
        with open(meta, "w") as f:
            f.write("\n".join(lines))
        self.refused(text, f"{meta}:7: not a CTF trace babeltrace2 can read:", 'value="xx"')
        # packetized metadata (LTTng's): line 5000 of the text in its
        # packets, found here by walking the packet headers
        pk = self.copy("tracevizlab-simple-kernel", "packetmeta")
        meta = os.path.join(pk, "metadata")
        with open(meta, "rb") as f:
            data = bytearray(f.read())
        off, line, at, packet, npackets = 0, 1, None, None, 0
        while off + 37 <= len(data):
            magic, = struct.unpack_from("<I", data, off)
            self.assertEqual(magic, 0x75D11D57)
            content, size = struct.unpack_from("<II", data, off + 24)
            npackets += 1
            for i in range(off + 37, off + content // 8):
                if line == 5000 and at is None:
                    at, packet = i, npackets
                line += data[i] == 10
            off += size // 8
        semi = data.index(b";", at)
        self.assertLess(semi, data.index(b"\n", at), "a ; on line 5000")
        data[semi] = ord("@")
        with open(meta, "wb") as f:
            f.write(data)
        self.refused(pk, f"{meta}:5000: not a CTF trace babeltrace2 can read: Invalid character",
                     f"holds in {npackets} packets: packet {packet}, byte {at})")


MORE = os.path.join(ROOT, "..", "shared", "foreign-more")
CTF_FIXTURES = os.path.join(ROOT, "tests", "fixtures", "ctf")


class Session(ArchiveCase):
    """An LTTng session folder (kernel/ and ust/... under one folder, each a
    CTF trace) read as one trace, as babeltrace2 reads it; LTTng-UST events
    on the thread of their vtid context; LTTng 2.0 and 2.1 kernel traces.
    ../shared/foreign-more's figures are its SOURCES.md's (babeltrace2
    2.0.4); the fixtures' are tests/fixtures/ctf/README.md's
    (babeltrace2 FOLDER, and the events make-ctf.py lists)."""

    def need_more(self):
        if not os.path.isdir(MORE):
            self.skipTest(f"{MORE} is not there (../shared beside the project)")

    def q(self, name, stmt):
        return self.json("--trace", name, stmt)

    def test_session_folder_is_one_trace_of_every_trace_in_it(self):
        self.need_more()
        session = os.path.join(MORE, "tracevizlab-cat-kern-ust")
        s = self.ingest(session, name="session")
        # babeltrace2 reads 102,305 events: the kernel's 100,420 are stored,
        # the UST trace's 1,885 (no vtid context) skipped, and said why
        self.assertEqual(s["events"] + s["skipped"], 102305)
        self.assertEqual((s["events"], s["skipped"]), (100420, 1885))
        self.assertEqual((s["userspace"], s["userspace_skipped"]), (1885, 1885))
        self.assertEqual(s["recorder"], "lttng-modules 2.11.0, lttng-ust 2.10")
        self.assertEqual(len(self.q("session", 'find events where event = "sched_switch"')["events"]), 4390)
        wakeups = self.q("session", 'find events where event = "sched_wakeup" or event = "sched_waking"')
        self.assertEqual(len(wakeups["events"]), 4444)
        self.assertTrue(self.q("session", 'find edges where kind = "wakeup" limit 1')["edges"])
        # the kernel trace alone gives the same graph: the UST events change nothing of it
        k = self.ingest(os.path.join(session, "cat-kernel"), name="kernel")
        self.assertEqual((k["userspace"], k["userspace_skipped"], k["skipped"]), (0, 0, 0))
        for key in ("events", "threads", "processes", "nodes", "edges"):
            self.assertEqual(s[key], k[key], key)
        # the summary's words
        out = self.ok("ingest", session, "--name", "again").stdout
        self.assertIn("100420 events,", out)
        self.assertIn("1885 userspace events (LTTng-UST), 1885 of them skipped: their UST trace records no vtid "
                      "context (lttng add-context -u -t vtid -t vpid)", out)
        self.assertIn("(ctf, lttng-modules 2.11.0, lttng-ust 2.10,", out)

    def test_a_kernel_trace_beside_the_session_still_reads(self):
        self.need_more()
        s = self.ingest(os.path.join(MORE, "tracevizlab-pacman"), name="pacman")
        self.assertEqual((s["events"], s["skipped"], s["userspace"]), (83649, 0, 0))
        self.assertEqual(len(self.q("pacman", 'find events where event = "sched_switch"')["events"]), 3109)
        wakeups = self.q("pacman", 'find events where event = "sched_wakeup" or event = "sched_waking"')
        self.assertEqual(len(wakeups["events"]), 3180)
        self.assertNotIn("userspace events", self.ok("ingest", os.path.join(MORE, "tracevizlab-pacman")).stdout)

    def test_ust_events_on_the_thread_of_their_vtid(self):
        """LTTng 2.1 session: kernel/ and ust/myapp-4242-.../ with vtid,
        vpid and procname contexts (make-ctf.py, lttng_21_session)."""
        session = os.path.join(CTF_FIXTURES, "lttng-2.1-session")
        s = self.ingest(session, name="s")
        self.assertEqual((s["events"], s["skipped"], s["userspace"], s["userspace_skipped"]), (20, 0, 4, 0))
        self.assertEqual(s["recorder"], "lttng-modules 2.1.0, lttng-ust 2.1")
        ust = self.q("s", 'find events where event = "myapp:request_begin" or event = "myapp:request_end"')["events"]
        self.assertEqual([(e["event"], e["tid"], e["pid"], e["cpu"]) for e in ust],
                         [("myapp:request_begin", 4242, 4242, 0), ("myapp:request_begin", 4243, 4242, 1),
                          ("myapp:request_end", 4243, 4242, 1), ("myapp:request_end", 4242, 4242, 0)])
        self.assertEqual([e["type"] for e in ust], ["raw"] * 4)
        self.assertEqual((ust[1]["what"], ust[1]["attributes"]["id"]), ("work", 2))
        nodes = {n["id"]: n for n in self.q("s", "find nodes")["nodes"]}
        self.assertEqual({(nodes[e["node"]]["thread"], nodes[e["node"]]["tid"]) for e in ust},
                         {("myapp", 4242), ("myapp-worker", 4243)})
        # each lands in the node of its thread the kernel's sched events
        # make: the worker's in the node main's wakeup leads to, main's
        # end in the node the worker's wakeup leads to
        ev = {e["id"]: e for e in self.q("s", "find events")["events"]}
        wake = {(ev[x["from_event"]]["tid"], ev[x["to_event"]]["tid"]): x
                for x in self.q("s", 'find edges where kind = "wakeup"')["edges"]}
        self.assertEqual(set(wake), {(4242, 4243), (4243, 4242)})
        self.assertEqual(wake[(4242, 4243)]["to"], ust[1]["node"])
        self.assertEqual(ust[1]["node"], ust[2]["node"])
        self.assertEqual(wake[(4243, 4242)]["to"], ust[3]["node"])
        self.assertNotEqual(ust[0]["node"], ust[3]["node"], "main slept between its two events")
        # i686: the timer's 32-bit address in decimal, read as the number it is
        timers = self.q("s", 'find events where type = "timer_arm" or type = "timer_cancel"')["events"]
        self.assertEqual([e["timer"] for e in timers], ["0xf5a3c0e0"] * 2)
        out = self.ok("ingest", session, "--name", "again").stdout
        self.assertIn("4 userspace events (LTTng-UST), each on the thread of its vtid context", out)
        # the UST trace alone: its threads, without the kernel's
        u = self.ingest(os.path.join(session, "ust"), name="ust")
        self.assertEqual((u["events"], u["threads"], u["processes"], u["userspace"]), (4, 2, 1, 4))

    def test_lttng_2_0_kernel_trace(self):
        """lttng-modules 2.0.0 (make-ctf.py, lttng_20): 64-bit pointers in
        decimal; its first event, hrtimer_cancel, was once refused."""
        s = self.ingest(os.path.join(CTF_FIXTURES, "lttng-2.0-kernel"), name="old")
        self.assertEqual((s["events"], s["skipped"], s["recorder"]), (19, 0, "lttng-modules 2.0.0"))
        ev = self.q("old", "find events")["events"]
        names = collections.Counter(e["event"] for e in ev)
        self.assertEqual((names["sched_switch"], names["sched_wakeup"], names["sched_wakeup_new"]), (3, 2, 1))
        self.assertEqual(ev[0]["event"], "hrtimer_cancel")
        self.assertEqual({e["timer"] for e in ev if e["event"].startswith("hrtimer")}, {"0xffff88003a5c7e28"})
        byid = {e["id"]: e for e in ev}
        edges = self.q("old", "find edges")["edges"]
        kinds = collections.Counter(x["kind"] for x in edges)
        # the timer: worker's arm -> the callout; the callout's wakeup ->
        # worker's return from nanosleep; the fork -> the child's first event
        timer = [x for x in edges if x["kind"] == "timer"]
        self.assertEqual([(byid[x["from_event"]]["event"], byid[x["to_event"]]["event"]) for x in timer],
                         [("hrtimer_start", "hrtimer_expire_entry")])
        woke = {(byid[x["from_event"]]["event"], byid[x["to_event"]]["tid"], byid[x["to_event"]]["event"])
                for x in edges if x["kind"] == "wakeup"}
        self.assertEqual(woke, {("sched_wakeup", 2001, "sys_exit_nanosleep"), ("sched_process_fork", 2003,
                                                                                 "sched_wakeup")})
        self.assertEqual(kinds["wakeup"], 2, "the wakeup 2.0 says woke nothing (success 0) joins nothing")
        # irq and softirq contexts of 2.0's naming
        self.assertEqual({e["type"] for e in ev if e["event"].startswith(("irq_", "softirq_"))}, {"interrupt"})

    def test_a_damaged_trace_of_a_session_is_named(self):
        src = os.path.join(CTF_FIXTURES, "lttng-2.1-session")
        bad = os.path.join(self.dir, "session")
        shutil.copytree(src, bad)
        meta = os.path.join(bad, "ust", "myapp-4242-20130110-101500", "metadata")
        with open(meta) as f:
            lines = f.read().split("\n")
        at = lines.index("typealias integer { size = 5; align = 1; signed = false; } := uint5_t;")
        lines[at] = "typealias integer { size = 5; align = 1; signed = false; } := ;"
        with open(meta, "w") as f:
            f.write("\n".join(lines))
        p = self.run_argusq("ingest", bad)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"{meta}:{at + 1}: not a CTF trace babeltrace2 can read: syntax error", p.stderr)
        self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")
        os.unlink(os.path.join(bad, "kernel", "metadata"))
        shutil.rmtree(os.path.join(bad, "ust"))
        p = self.run_argusq("ingest", bad)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("session/metadata: cannot open: No such file or directory, and no folder below it holds a "
                      "CTF trace", p.stderr)

    def test_a_stream_without_time_is_refused(self):
        """A CTF trace whose events have no timestamp at all: babeltrace2
        gives them no clock snapshot (where a timestamp has no clock, it
        makes one up, and the trace reads); the reader says so rather than
        reading a snapshot that is not there."""
        folder = os.path.join(self.dir, "notime")
        os.mkdir(folder)
        uuid = "2a6422d0-6cee-11e0-8c08-cb07d7b3a564"
        with open(os.path.join(folder, "metadata"), "w") as f:
            f.write("/* CTF 1.8 */\n"
                    "typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
                    "typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
                    "typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
                    f'trace {{ major = 1; minor = 8; uuid = "{uuid}"; byte_order = le;\n'
                    "  packet.header := struct { uint32_t magic; uint8_t uuid[16]; uint32_t stream_id; }; };\n"
                    "stream { id = 0; event.header := struct { uint16_t id; };\n"
                    "  packet.context := struct { uint32_t content_size; uint32_t packet_size; uint32_t cpu_id; }; };\n"
                    "event { name = ping; id = 0; stream_id = 0; fields := struct { uint32_t _n; }; };\n")
        body = b"".join(struct.pack("<HI", 0, n) for n in range(3))
        head = struct.pack("<I", 0xC1FC1FC1) + bytes.fromhex(uuid.replace("-", "")) + struct.pack("<I", 0)
        size = (len(head) + 12 + len(body)) * 8
        with open(os.path.join(folder, "chan_0"), "wb") as f:
            f.write(head + struct.pack("<III", size, size, 0) + body)
        p = self.run_argusq("ingest", folder)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("notime: event 1 (ping): its stream has no clock: its events have no time", p.stderr)
        self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")


class Perf(ArchiveCase):
    def test_perf_script_diagnosis_names_the_ftrace_culprit(self):
        s = self.ingest(trace("pipechain-normal.perf.txt"), name="normal")
        self.assertEqual(s["events"], 249)
        self.ingest(trace("pipechain-anomaly.perf.txt"), name="anomaly")
        t = {t["name"]: t for t in self.json("traces")["traces"]}
        self.assertEqual(t["anomaly"]["format"], "perf-script")
        self.assertEqual(t["anomaly"]["labels"]["recorder"], "perf")
        d = self.json("--trace", "anomaly", 'diagnose thread "ui-main" against trace "normal"')
        self.assertEqual(d["suspects"][0]["thread"], "backend")  # as pipechain-anomaly.txt (ftrace) gives
        self.assertGreater(d["anomaly"]["blocked"] if "blocked" in d["anomaly"] else 250e6, 200e6)

    def test_perf_data_reads_as_its_text(self):
        if not shutil.which("perf") and not any(f.startswith("perf_") for f in os.listdir("/usr/bin")):
            self.skipTest("perf is not installed (Debian: linux-perf)")
        data = self.ingest(trace("pipechain-anomaly.perf.data"), name="data")
        text = self.ingest(trace("pipechain-anomaly.perf.txt"), name="text")
        for k in ("events", "nodes", "edges"):
            self.assertEqual(data[k], text[k], k)
        # ingest --json says the format and the recorder, as the summary does
        self.assertEqual((data["format"], text["format"], text["recorder"]), ("perf-data", "perf-script", "perf"))
        self.assertTrue(data["recorder"].startswith("perf "), data["recorder"])
        t = {t["name"]: t for t in self.json("traces")["traces"]}
        self.assertEqual(t["data"]["format"], "perf-data")
        self.assertTrue(t["data"]["labels"]["recorder"].startswith("perf "))
        self.ingest(trace("pipechain-normal.perf.txt"), name="normal")
        d = self.json("--trace", "data", 'diagnose thread "ui-main" against trace "normal"')
        self.assertEqual(d["suspects"][0]["thread"], "backend")
        out = self.ok("ingest", trace("pipechain-anomaly.perf.data"), "--name", "again").stdout
        self.assertIn("(perf-data, perf ", out, "the summary says the format and the recorder")

    def test_bad_perf_files(self):
        fake = os.path.join(self.dir, "fake.data")
        with open(fake, "wb") as f:
            f.write(b"PERFILE2" + b"\0" * 100)
        p = self.run_argusq("ingest", fake)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("fake.data: offset 0: ", p.stderr)
        p = self.run_argusq("ingest", trace("pipechain-anomaly.perf.data"), env={"ARGUSQ_PERF": "/nonexistent/perf"})
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("apt-get install linux-perf", p.stderr)
        with open(trace("pipechain-anomaly.perf.txt")) as f:
            lines = f.read().splitlines()
        cut = os.path.join(self.dir, "cut.txt")
        with open(cut, "w") as f:
            f.write("\n".join(lines[:10] + ["this is not perf's", lines[10]]) + "\n")
        p = self.run_argusq("ingest", cut)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("cut.txt:11: not a perf script line", p.stderr)
        self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")

    def fake_perf(self, name, without_header):
        """A perf that crashes (SIGSEGV) given --header, and otherwise runs
        without_header (shell text)."""
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do case "$a" in --header*) kill -SEGV $$;; esac; done\n'
                    + without_header + "\n")
        os.chmod(path, 0o755)
        return path

    def test_perf_that_crashes_on_the_header(self):
        """Some perf builds crash printing a file's header (exit 139) and read
        it whole without --header: argusq says how perf ended and reads it
        without, losing only the header's labels."""
        real = sorted(glob.glob("/usr/bin/perf_[0-9]*")) or [shutil.which("perf")]
        if not real[-1]:
            self.skipTest("perf is not installed (Debian: linux-perf)")
        fake = self.fake_perf("perf", f'exec {real[-1]} "$@"')
        data = trace("pipechain-anomaly.perf.data")
        p = self.ok("--json", "ingest", data, "--name", "crashed", env={"ARGUSQ_PERF": fake})
        crashed = json.loads(p.stdout)
        self.assertIn(f"perf.data: {fake} script --header was killed by signal 11 (Segmentation fault)", p.stderr)
        self.assertIn("read without --header", p.stderr)
        whole = self.ingest(data, name="whole")
        for k in ("events", "threads", "processes", "nodes", "edges"):
            self.assertEqual(crashed[k], whole[k], k)
        t = {t["name"]: t for t in self.json("traces")["traces"]}
        self.assertEqual(t["crashed"]["labels"], {"recorder": "perf"}, "nothing of the header")
        self.assertEqual(t["whole"]["labels"]["host"], "vm")

    def test_perf_that_fails_both_ways(self):
        data = trace("pipechain-anomaly.perf.data")
        fake = self.fake_perf("perf", "echo 'perf: something broke' >&2; exit 3")
        p = self.run_argusq("ingest", data, env={"ARGUSQ_PERF": fake})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"perf.data: offset 0: not a perf.data file perf can read ({fake} script --header was killed "
                      f"by signal 11 (Segmentation fault), without a message; {fake} script exited with status 3: "
                      "perf: something broke)", p.stderr)
        fake = self.fake_perf("perf2", "kill -SEGV $$")
        p = self.run_argusq("ingest", data, env={"ARGUSQ_PERF": fake})
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("script --header was killed by signal 11 (Segmentation fault), without a message; the same "
                      "without --header", p.stderr)
        self.assertEqual(self.json("traces")["traces"], [], "nothing half-ingested")


if __name__ == "__main__":
    unittest.main()
