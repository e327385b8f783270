"""The catalog lists each trace once, whatever was done to it:
a write into a rebuilt trace -- a rule added or dropped, a label -- once
gave it a second slot in the listing, so `traces` and `info` counted it
twice.  tests/e2e/test_stateful.py checks this and the other invariants
under random sequences; these are the cases as users met them."""
import gzip
import os
import shutil

from common import ROOT, ArchiveCase, trace

FIXTURE = os.path.join(ROOT, "tests", "fixtures", "catalog", "repeated-slot.db.gz")


class Catalog(ArchiveCase):
    def names(self):
        return [t["name"] for t in self.json("traces")["traces"]]

    def assert_once(self, events):
        self.assertEqual(self.names(), ["anomaly"])
        info = self.json("info")
        self.assertEqual((info["traces"], info["events"]), (1, events))

    def test_a_rule_after_a_rebuild(self):
        events = self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")["events"]
        self.ok("rebuild graph")
        self.ok("rule ignore wakeup where tid = 4124")
        self.assert_once(events)
        self.ok("rebuild graph")
        self.ok("drop rule 1")
        self.assert_once(events)
        for _ in range(3):  # rounds of rules and rebuilds
            self.ok("rule ignore wakeup where tid = 4124")
            self.ok("rebuild graph")
            self.ok('label trace "anomaly" set run = "slow"')
        self.assert_once(events)
        self.assertEqual(len(self.json("rules")["rules"]), 3)
        self.ok('drop trace "anomaly"')
        self.assertEqual(self.names(), [])
        self.assertEqual(self.json("info")["traces"], 0)

    def test_an_archive_that_lists_a_trace_twice_is_read_once_and_repaired(self):
        with gzip.open(FIXTURE) as src, open(self.db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        # read: listed once, in the place it was ingested in
        self.assertEqual(self.names(), ["m", "n"])
        self.assertEqual(self.json("info")["traces"], 2)
        # the next write deletes the second slot: a drop leaves nothing of m
        self.ok('label trace "n" set run = "normal"')
        self.assertEqual(self.names(), ["m", "n"])
        self.ok('drop trace "m"')
        self.assertEqual(self.names(), ["n"])
        self.ok("rename trace \"n\" to \"m\"")
        self.assertEqual(self.names(), ["m"])
        self.assertEqual(self.json("info")["traces"], 1)
