"""The block layer's events: their positional text becomes
pairs (dev, rwbs, bytes, cmd, sector, nr_sector, ioprio, comm or error), in
the forms of this kernel and of older ones (no ioprio), and a request's
completion is joined (edge io) to the node that submitted it: the first of
block_bio_queue, block_rq_insert, block_rq_issue for its device and
sector."""
import os
import unittest

from common import ArchiveCase

TEXT = """\
# tracer: nop
#
            dd-4100    [000] .....   100.000100: sys_enter: NR 17 (3, 7f00, 1000, 0, 0, 0)
            dd-4100    [000] .....   100.000110: block_bio_queue: 254,0 RS 356115584 + 8 [dd]
            dd-4100    [000] .....   100.000111: block_rq_insert: 254,0 RS 4096 () 356115584 + 8 be,0,4 [dd]
   kworker/0:1-33      [000] .....   100.000120: block_rq_issue: 254,0 RS 4096 () 356115584 + 8 be,0,4 [kworker/0:1]
            dd-4100    [000] d..3.   100.000130: sched_switch: prev_comm=dd prev_pid=4100 prev_prio=120 prev_state=D ==> next_comm=swapper/0 next_pid=0 next_prio=120
        <idle>-0       [000] d.h2.   100.000900: irq_handler_entry: irq=25 name=virtio1-req.0
        <idle>-0       [000] d.h2.   100.000901: block_rq_complete: 8,0 R () 2048 + 8 [0]
        <idle>-0       [000] d.h2.   100.000902: block_rq_complete: 254,0 RS () 356115584 + 8 be,0,4 [0]
        <idle>-0       [000] d.h3.   100.000903: sched_wakeup: comm=dd pid=4100 prio=120 target_cpu=000
        <idle>-0       [000] d.h2.   100.000904: irq_handler_exit: irq=25 ret=handled
            dd-4100    [000] .....   100.000950: sys_exit: NR 17 = 4096
"""


class Block(ArchiveCase):
    def setUp(self):
        super().setUp()
        path = os.path.join(self.dir, "block.txt")
        with open(path, "w") as f:
            f.write(TEXT)
        self.ingest(path, name="b")

    def ev(self, name):
        return self.json("--trace", "b", f'find events where event = "{name}"')["events"]

    def test_pairs(self):
        q = self.ev("block_bio_queue")[0]
        self.assertEqual((q["dev"], q["rwbs"], q["sector"], q["nr_sector"], q["comm"]), ("254,0", "RS", 356115584, 8, "dd"))
        i = self.ev("block_rq_issue")[0]
        self.assertEqual((i["bytes"], i["cmd"], i["ioprio"], i["comm"]), (4096, "", "be,0,4", "kworker/0:1"))
        old, new = self.ev("block_rq_complete")
        self.assertEqual((old["dev"], old["sector"], old["error"]), ("8,0", 2048, 0))
        self.assertNotIn("ioprio", old)  # kernels before 6.x print none
        self.assertEqual((new["dev"], new["sector"], new["error"], new["ioprio"]), ("254,0", 356115584, 0, "be,0,4"))

    def test_completion_joins_the_submitter(self):
        edges = self.json("--trace", "b", 'find edges where kind = "io"')["edges"]
        self.assertEqual(len(edges), 1, edges)
        queue = self.ev("block_bio_queue")[0]
        done = [e for e in self.ev("block_rq_complete") if e["dev"] == "254,0"][0]
        self.assertEqual((edges[0]["from_event"], edges[0]["to_event"]), (queue["id"], done["id"]))
        # the wait of dd was for its own read: io, charged to dd
        dd = self.json("--trace", "b", 'find nodes where thread = "dd" order by begin desc limit 1')["nodes"][0]
        cp = self.json("--trace", "b", f"critical path of node {dd['id']}")
        io = [p for p in cp["parts"] if p["state"] == "io"]
        self.assertTrue(io and all(p["thread"] == "dd" for p in io), cp["parts"])


if __name__ == "__main__":
    unittest.main()
