"""--format csv is CSV: RFC 4180 that Python's csv module reads
back, one table per statement (every row as wide as the header), numbers
as numbers, and the same values as the JSON -- for find nodes (every
field of the JSON's node), show node (the node and its neighbours in one
table), critical path (share a fraction, device and requester in columns
of their own) and diagnose (the suspects, not prose).  On the lockchain
recording and the disk-reading one."""
import csv
import io
import unittest

from common import ArchiveCase, trace


class Csv(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), "lock")
        self.ingest(trace("diskio-anomaly.dat"), "disk")

    def table(self, *args):
        text = self.ok("--format", "csv", *args).stdout
        rows = list(csv.reader(io.StringIO(text, newline="")))
        self.assertTrue(rows, args)
        head = rows[0]
        for r in rows[1:]:
            self.assertEqual(len(r), len(head), (args, r))  # one table
        return [dict(zip(head, r)) for r in rows[1:]], head

    def worst(self, name, thread):
        return self.json("--trace", name, 'find nodes where thread = "%s" order by blocked desc limit 1' % thread)[
            "nodes"][0]["id"]

    def test_nodes_hold_every_json_field(self):
        rows, head = self.table("--trace", "lock", "find nodes limit 50")
        nodes = self.json("--trace", "lock", "find nodes limit 50")["nodes"]
        self.assertEqual(len(rows), len(nodes))
        for r, n in zip(rows, nodes):
            for k, v in n.items():
                col = "id" if k == "id" else k
                self.assertIn(col, head)
                self.assertEqual(r[col], str(v), (k, r, n))
            if "cpu" not in n:
                self.assertEqual(r["cpu"], "")

    def test_events_hold_every_json_key(self):
        """An event's attributes are columns of their own, as its JSON keys
        are (the header the union of the rows' keys; a row leaves empty what
        it does not have), beside the one `attributes` column kept as it was."""
        for name, stmt in (("lock", "find events limit 400"), ("disk", 'find events where type = "raw" or type = "interrupt" limit 300'),
                           ("lock", f"events of node {self.worst('lock', 'ui-main')}")):
            with self.subTest(stmt=stmt):
                rows, head = self.table("--trace", name, stmt)
                events = self.json("--trace", name, stmt)["events"]
                self.assertTrue(events)
                self.assertEqual(len(rows), len(events))
                self.assertEqual(head[:7], ["id", "ts", "tid", "node", "type", "event", "attributes"])
                keys = set()
                for r, e in zip(rows, events):
                    for k, v in e.items():
                        if k == "attributes":  # the JSON's object of names that clash with fields
                            continue
                        keys.add(k)
                        self.assertIn(k, head)
                        self.assertEqual(r[k], str(v), (k, r, e))
                    for k in head[7:]:
                        if k not in e:
                            self.assertEqual(r[k], "", (k, r, e))
                self.assertEqual(set(head) - {"attributes"}, keys)  # no column the JSON has not
                self.assertGreater(len(head), 10)

    def test_show_node_is_one_table(self):
        node = self.worst("lock", "ui-main")
        rows, head = self.table("--trace", "lock", "show node %d" % node)
        doc = self.json("--trace", "lock", "show node %d" % node)
        self.assertEqual(rows[0]["dir"], "node")
        self.assertEqual(int(rows[0]["id"]), node)
        self.assertEqual(int(rows[0]["blocked"]), doc["node"]["blocked"])
        edges = [("in", e["from"], e) for e in doc["in"]] + [("out", e["to"], e) for e in doc["out"]]
        self.assertEqual(len(rows) - 1, len(edges))
        self.assertGreater(len(edges), 0)
        for r, (d, other, e) in zip(rows[1:], edges):
            self.assertEqual((r["dir"], int(r["id"]), r["edge"], int(r["from_event"]), int(r["to_event"])),
                             (d, other, e["kind"], e["from_event"], e["to_event"]))

    def test_critical_path_numbers(self):
        for name, thread in (("lock", "ui-main"), ("disk", "ui-main")):
            with self.subTest(trace=name):
                node = self.worst(name, thread)
                rows, head = self.table("--trace", name, "critical path of node %d" % node)
                doc = self.json("--trace", name, "critical path of node %d" % node)
                period = doc["period"]["ns"]
                self.assertEqual(len(rows), len(doc["parts"]))
                for r, p in zip(rows, doc["parts"]):
                    self.assertEqual((r["thread"], int(r["tid"]), int(r["node"]), r["state"], int(r["begin"]),
                                      int(r["ns"])),
                                     (p["thread"], p["tid"], p["node"], p["state"], p["begin"], p["ns"]))
                    self.assertAlmostEqual(float(r["share"]), p["ns"] / period, places=6)
                    self.assertEqual(r["device"], p.get("device", ""))
                    if "for" in p:
                        self.assertEqual((r["for"], int(r["for_tid"]), int(r["for_node"])),
                                         (p["for"]["thread"], p["for"]["tid"], p["for"]["node"]))
                self.assertAlmostEqual(sum(float(r["share"]) for r in rows), 1.0, places=4)

    def test_diagnose_is_its_suspects(self):
        node = self.worst("lock", "ui-main")
        rows, head = self.table("--trace", "lock", "diagnose node %d" % node)
        doc = self.json("--trace", "lock", "diagnose node %d" % node)
        self.assertEqual(head[:8], ["rank", "thread", "proc", "tid", "node", "state", "ns", "share"])
        self.assertEqual(len(rows), len(doc["suspects"]))
        for i, (r, x) in enumerate(zip(rows, doc["suspects"])):
            self.assertEqual((int(r["rank"]), r["thread"], int(r["node"]), r["state"], int(r["ns"]), r["reason"]),
                             (i + 1, x["thread"], x["node"], x["state"], x["ns"], x["reason"]))
        self.assertEqual(rows[0]["thread"], "hog")


if __name__ == "__main__":
    unittest.main()
