"""The machine a trace was recorded on: `ingest --arch` names
raw syscall numbers by that machine's own table (x86_64, arm64, arm, i386,
riscv64, from the kernel's headers), a machine argusq has no table of is
refused with the list, a trace ingested without it keeps its numbers with
one warning that names the option and the machines, and the same run
ingested with and without --arch compares alike: the numbers of the trace
whose machine is not known are read with the other's table."""
import collections
import os
import re
import unittest

from common import ArchiveCase, trace, ROOT

FOREIGN = os.path.join(ROOT, "..", "shared", "foreign")
ARM = os.path.join(FOREIGN, "tc-trace-android-sched-irq-syscall.txt")  # 32-bit ARM (SOURCES.md)
# numbers read from the kernel's arch/arm/tools/syscall.tbl (EABI)
ARM_NAMES = {240: "futex", 96: "getpriority", 4: "write", 54: "ioctl", 172: "prctl"}


class Arch(ArchiveCase):
    def syscalls_by_name(self, name):
        rows = self.json(f'find events where type = "syscall" group by name compute count', "--trace", name)["groups"]
        return {r["name"]: r["count"] for r in rows}

    def test_arm_numbers_named_by_arm(self):
        if not os.path.isfile(ARM):
            self.skipTest(f"{ARM} is not there (../shared beside the project)")
        # what the file holds, read here: "sys_enter: NR 240 (" and "sys_exit: NR 240 = "
        want = collections.Counter()
        with open(ARM) as f:
            for line in f:
                m = re.search(r"sys_(?:enter|exit): NR (\d+)", line)
                if m:
                    want[int(m.group(1))] += 1
        p = self.ok("ingest", ARM, "--name", "arm", "--arch", "armv7l")
        self.assertNotIn("keep their number", p.stderr)
        got = self.syscalls_by_name("arm")
        for nr, name in ARM_NAMES.items():
            self.assertEqual(got.get(name), want[nr], f"NR {nr} ({name})")
        self.assertNotIn("mq_open", got)  # x86-64's 240, the wrong machine's
        labels = {t["name"]: t["labels"] for t in self.json("traces")["traces"]}
        self.assertEqual(labels["arm"].get("arch"), "arm")  # uname's armv7l, by its one name

        p = self.ok("ingest", ARM, "--name", "plain")
        unnamed = sum(want.values())
        self.assertEqual(p.stderr.count("argusq:"), 1, p.stderr)
        self.assertIn(f"{unnamed} syscall events keep their number without a name", p.stderr)
        self.assertIn("ingest --arch MACHINE names them (x86_64, arm64, arm, i386, riscv64)", p.stderr)
        self.assertEqual(self.json('find events where name = "futex" limit 5', "--trace", "plain")["events"], [])

        # the same run with and without --arch: every node's counterpart is itself, alike
        self.assert_alike("plain", "arm")
        self.assert_alike("arm", "plain")

    def test_unknown_machine_refused(self):
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), "--arch", "mips")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn('no syscall table of the machine "mips": argusq has those of x86_64, arm64, arm, i386, riscv64',
                      p.stderr)
        self.assertFalse(os.path.exists(self.db))  # nothing made
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), "--arch")
        self.assertEqual(p.returncode, 2)
        self.assertIn("missing machine (x86_64, arm64, arm, i386, riscv64) after --arch", p.stderr)

    def test_same_run_with_and_without_arch(self):
        path = trace("lockchain-anomaly.txt")
        self.ok("ingest", path, "--name", "named", "--arch", "x86_64")
        self.ok("ingest", path, "--name", "plain")
        self.assertIn("futex", self.syscalls_by_name("named"))
        self.assertNotIn("futex", self.syscalls_by_name("plain"))
        self.assert_alike("plain", "named")
        self.assert_alike("named", "plain")
        # compare says what the two have in common by name
        c = self.json("compare node 1 with node 1 in trace \"named\"", "--trace", "plain")
        self.assertEqual(c["score"], 1.0)
        self.assertEqual(c["only_a"], [])
        self.assertEqual(c["only_b"], [])
        self.assertTrue(any(f.startswith("syscall:") and not f[8:].isdigit() for f in c["common"]), c["common"])
        # diagnose against either finds the same cause
        d1 = self.json('diagnose thread "worker" against trace "named"', "--trace", "plain")
        d2 = self.json('diagnose thread "worker" against trace "named"', "--trace", "named")
        self.assertEqual([s["thread"] for s in d1["suspects"]], [s["thread"] for s in d2["suspects"]])

    def assert_alike(self, a, b):
        """Every node of trace a that made a syscall has its own copy in
        trace b (the same run) among its counterparts at score 1.00."""
        rows = self.json('find events where type = "syscall" group by node compute count', "--trace", a)["groups"]
        nodes = [r["node"] for r in rows]
        self.assertGreater(len(nodes), 5)
        for n in nodes:
            m = self.json(f'match node {n} in trace "{b}" limit 1000', "--trace", a)["nodes"]
            same = [x for x in m if x["id"] == n]
            self.assertTrue(same, f"node {n} of {a}: not among its counterparts in {b}")
            self.assertEqual(same[0]["score"], 1.0, f"node {n} of {a} against {b}")


if __name__ == "__main__":
    unittest.main()
