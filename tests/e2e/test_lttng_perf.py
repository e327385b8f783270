"""LTTng's CTF traces and perf (issue 20).

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
