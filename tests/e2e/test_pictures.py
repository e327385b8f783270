"""The pictures show the answer: `critical path ... --format
svg` is a timeline drawn by argusq (no Graphviz layout): a row per thread,
a bar per part colored by state, the large parts labeled with their state
and share, the chain of the wait as arrows.  The SVG is rendered to PNG by
rsvg-convert (librsvg), whose size and the SVG's elements are checked
against the critical path's JSON."""
import os
import shutil
import struct
import subprocess
import unittest
import xml.etree.ElementTree as ET

from common import ArchiveCase, trace

SVG = "{http://www.w3.org/2000/svg}"


class CriticalPathTimeline(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), "lock")
        self.ingest(trace(os.path.join("dist", "jitterpipe-anomaly-1.trace")), "pipe")

    def draw(self, name, stmt):
        doc = self.json("--trace", name, stmt)
        svg = self.ok("--trace", name, "--format", "svg", stmt).stdout
        root = ET.fromstring(svg)
        return doc, svg, root

    def check(self, name, stmt, culprit, state):
        doc, svg, root = self.draw(name, stmt)
        parts = [r for r in root.iter(SVG + "rect") if r.get("class") == "part"]
        self.assertEqual(len(parts), len(doc["parts"]))
        period = doc["period"]["ns"]
        # every part's bar spans its share of the plot, in time order
        xs = [float(r.get("x")) for r in parts]
        self.assertEqual(xs, sorted(xs))
        widths = sum(float(r.get("width")) for r in parts)
        self.assertAlmostEqual(widths, 900, delta=len(parts) * 1.0)
        # a row per thread, the victim's first, each named
        texts = [t.text or "" for t in root.iter(SVG + "text")]
        threads = []
        for p in doc["parts"]:
            if p["thread"] not in threads:
                threads.append(p["thread"])
        for t in threads:
            self.assertTrue(any(x.startswith(t) for x in texts), (t, texts))
        self.assertTrue(texts[1].startswith(doc["node"]["thread"]), texts[:3])
        # the culprit's part is labeled with its state and share
        big = max(doc["parts"], key=lambda p: p["ns"])
        self.assertEqual((big["thread"], big["state"]), (culprit, state))
        label = "%s %.1f%%" % (state, 100.0 * big["ns"] / period)
        self.assertIn(label, texts)
        # the chain: an arrow where the thread changes
        chain = [e for e in root.iter(SVG + "line") if e.get("class") == "chain"]
        changes = sum(1 for a, b in zip(doc["parts"], doc["parts"][1:]) if a["tid"] != b["tid"])
        self.assertGreater(len(chain), 0)
        self.assertLessEqual(len(chain), changes)
        return root, svg

    def render(self, svg, root):
        png = os.path.join(self.dir, "cp.png")
        src = os.path.join(self.dir, "cp.svg")
        with open(src, "w") as f:
            f.write(svg)
        p = subprocess.run(["rsvg-convert", src, "-o", png], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        with open(png, "rb") as f:
            head = f.read(24)
        self.assertEqual(head[:8], b"\x89PNG\r\n\x1a\n")
        w, h = struct.unpack(">II", head[16:24])
        self.assertEqual((w, h), (int(root.get("width")), int(root.get("height"))))

    @unittest.skipUnless(shutil.which("rsvg-convert"), "rsvg-convert (librsvg2-bin) is not installed")
    def test_the_timer_that_took_the_period(self):
        node = self.json("--trace", "lock", 'find nodes where thread = "ui-main" order by blocked desc limit 1')[
            "nodes"][0]["id"]
        root, svg = self.check("lock", "critical path of node %d" % node, "hog", "timer")
        self.render(svg, root)

    @unittest.skipUnless(shutil.which("rsvg-convert"), "rsvg-convert (librsvg2-bin) is not installed")
    def test_the_injected_run_beside_the_sleep(self):
        """jitterpipe: pipeline's timer is the largest part, indexer's run
        (the injected cause) is labeled too."""
        node = self.json("--trace", "pipe", 'find nodes where thread = "ui-main" order by blocked desc limit 1')[
            "nodes"][0]["id"]
        root, svg = self.check("pipe", "critical path of node %d" % node, "pipeline", "timer")
        doc = self.json("--trace", "pipe", "critical path of node %d" % node)
        run = [p for p in doc["parts"] if p["thread"] == "indexer" and p["state"] == "running"]
        self.assertTrue(run)
        share = 100.0 * max(p["ns"] for p in run) / doc["period"]["ns"]
        self.assertIn("running %.1f%%" % share, [t.text for t in root.iter(SVG + "text")])
        self.render(svg, root)


if __name__ == "__main__":
    unittest.main()
