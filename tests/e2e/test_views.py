"""Views and habits (Perfetto export, graphs, man page, progress,
install, completion): the Perfetto JSON checked against the Trace Event
Format, the DOT rendered by Graphviz, --format svg, `export ... to`, the
man page rendered by man, `make install`, the progress bar under a
pseudo-terminal and its absence without one, and the bash completion."""
import json
import os
import pty
import re
import select
import shutil
import subprocess
import tempfile
import time
import xml.etree.ElementTree as ET

from common import ARGUSQ, ROOT, ArchiveCase, trace, arch_of

UI = 'find nodes where thread = "ui-main" order by blocked desc limit 1'
MAN = os.path.join(ROOT, "docs", "man", "argusq.1")
COMPLETION = os.path.join(ROOT, "contrib", "argusq.bash")


def is_num(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def check_trace_events(test, doc):
    """The Chrome Trace Event Format (JSON object form), as ui.perfetto.dev
    reads it: required keys per phase, names for every process and thread,
    slices that nest or are disjoint on each track, and flows whose start
    and end share id, cat and name and bind to slices of their tracks.
    Returns (the nodes' slices, flows by id, thread names, process names);
    the slices of threads' states and of a critical path (cat "state",
    "critical path") are checked with them and left out."""
    test.assertIsInstance(doc, dict)
    test.assertIsInstance(doc.get("traceEvents"), list)
    test.assertIn(doc.get("displayTimeUnit", "ms"), ("ms", "ns"))
    slices, flows, threads, procs = [], {}, {}, {}
    for ev in doc["traceEvents"]:
        test.assertIsInstance(ev, dict)
        ph = ev.get("ph")
        test.assertIn(ph, ("M", "X", "s", "f"), ev)
        test.assertIsInstance(ev.get("name"), str, ev)
        test.assertIsInstance(ev.get("pid"), int, ev)
        test.assertIsInstance(ev.get("tid"), int, ev)
        if ph == "M":
            test.assertIn(ev["name"], ("process_name", "thread_name", "process_sort_index"), ev)
            if ev["name"] == "process_sort_index":
                test.assertIsInstance(ev["args"]["sort_index"], int)
                continue
            test.assertIsInstance(ev["args"]["name"], str)
            test.assertTrue(ev["args"]["name"])
            if ev["name"] == "process_name":
                procs[ev["pid"]] = ev["args"]["name"]
            else:
                threads[(ev["pid"], ev["tid"])] = ev["args"]["name"]
            continue
        test.assertTrue(is_num(ev.get("ts")) and ev["ts"] >= 0, ev)
        test.assertIsInstance(ev.get("cat"), str, ev)
        if ph == "X":
            test.assertTrue(is_num(ev.get("dur")) and ev["dur"] > 0, ev)
            test.assertIsInstance(ev.get("args", {}), dict)
            slices.append(ev)
        else:
            test.assertIn("id", ev)
            if ph == "f":
                test.assertEqual(ev.get("bp"), "e", "a flow end binds to its enclosing slice")
            flows.setdefault(ev["id"], {}).setdefault(ph, []).append(ev)
    # every track and process is named
    for ev in slices + [e for f in flows.values() for l in f.values() for e in l]:
        test.assertIn((ev["pid"], ev["tid"]), threads, ev)
        test.assertIn(ev["pid"], procs, ev)
    # slices on one track nest or are disjoint (in ns, exactly)
    ns = lambda us: round(us * 1000)
    tracks = {}
    for x in slices:
        tracks.setdefault((x["pid"], x["tid"]), []).append((ns(x["ts"]), ns(x["ts"]) + ns(x["dur"])))
    for spans in tracks.values():
        spans.sort(key=lambda s: (s[0], -s[1]))
        stack = []
        for b, e in spans:
            while stack and stack[-1][1] <= b:
                stack.pop()
            if stack:
                test.assertLessEqual(e, stack[-1][1], f"slices overlap on a track: {stack[-1]} {(b, e)}")
            stack.append((b, e))

    def enclosing(ev):
        t = ns(ev["ts"])
        return [x for x in slices if (x["pid"], x["tid"]) == (ev["pid"], ev["tid"])
                and ns(x["ts"]) <= t < ns(x["ts"]) + ns(x["dur"])]

    for fid, f in flows.items():
        test.assertEqual(len(f.get("s", [])), 1, f"flow {fid}: one start")
        test.assertEqual(len(f.get("f", [])), 1, f"flow {fid}: one end")
        s, e = f["s"][0], f["f"][0]
        test.assertEqual((s["name"], s["cat"]), (e["name"], e["cat"]), "v1 flows match by id, cat and name")
        test.assertLessEqual(s["ts"], e["ts"])
        test.assertTrue(enclosing(s), f"flow {fid} starts inside a slice")
        test.assertTrue(enclosing(e), f"flow {fid} ends inside a slice")
    return [x for x in slices if x["cat"] not in ("state", "critical path")], flows, threads, procs


def state_slices(doc, cat):
    """The slices of one of the two drawings beside the nodes' ("state":
    each thread's wait before a node; "critical path"), in time order."""
    return sorted((e for e in doc["traceEvents"] if e.get("ph") == "X" and e.get("cat") == cat),
                  key=lambda e: (e["ts"], e["tid"]))


class Perfetto(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ui = self.json(UI)["nodes"][0]

    def perfetto(self, *args):
        return check_trace_events(self, json.loads(self.ok("--format", "perfetto", *args).stdout))

    def slice_of(self, flow, slices):
        """The node id of the slice a flow event binds to."""
        t = round(flow["ts"] * 1000)
        for x in slices:
            if (x["pid"], x["tid"]) == (flow["pid"], flow["tid"]) and \
                    round(x["ts"] * 1000) <= t < round(x["ts"] * 1000) + round(x["dur"] * 1000):
                return x["args"]["node"]
        return None

    def test_slice_is_a_trace_of_its_nodes_and_edges(self):
        stmt = f"slice back from node {self.ui['id']} depth 6"
        want = self.json(stmt)
        slices, flows, threads, procs = self.perfetto(stmt)
        nodes = {n["id"]: n for n in want["nodes"]}
        self.assertEqual(sorted(x["args"]["node"] for x in slices), sorted(nodes))
        for x in slices:
            n = nodes[x["args"]["node"]]
            # microseconds, on the node's thread and process
            self.assertAlmostEqual(x["ts"], n["begin"] / 1000, places=3)
            self.assertAlmostEqual(x["dur"], max(n["duration"], 1) / 1000, places=3)
            self.assertEqual((x["args"]["tid"], x["args"]["pid"]), (n["tid"], n["pid"]))
            self.assertEqual(x["cat"], n["kind"])
            self.assertTrue(x["name"].startswith(f"{n['kind']} #{n['id']}"), x["name"])
            self.assertEqual(x["args"]["blocked_ns"], n["blocked"])
            self.assertIsInstance(x["args"]["key_events"], list)
            if n["kind"] == "thread":
                self.assertEqual((x["pid"], x["tid"]), (n["pid"], n["tid"]))
                self.assertEqual(threads[(x["pid"], x["tid"])], n["thread"])
                self.assertEqual(procs[x["pid"]], n["proc"])
        start = [x for x in slices if x["args"].get("start")]
        self.assertEqual([x["args"]["node"] for x in start], [self.ui["id"]])
        # the start node's key events name why it ran
        self.assertIn("wait:sleep", start[0]["args"]["key_events"])
        self.assertIn("wait:sleep", start[0]["name"])
        # a flow per edge, from the source's slice to the target's, named by kind
        self.assertEqual(len(flows), len(want["edges"]))
        got = sorted((self.slice_of(f["s"][0], slices), self.slice_of(f["f"][0], slices), f["s"][0]["name"])
                     for f in flows.values())
        self.assertEqual(got, sorted((e["from"], e["to"], e["kind"]) for e in want["edges"]))
        self.assertIn("timer", {f["s"][0]["name"] for f in flows.values()})

    def test_waits_and_the_critical_path_are_drawn(self):
        """The answer at a glance: each thread's wait before a node as
        "blocked" (by what, from its edge) then "runnable", on its track;
        the critical path as a process of its own whose slices are the
        parts of the period, as the JSON gives them.  Before, the 283.9 ms
        wait was only in args.blocked_ns."""
        n = self.ui["id"]
        for stmt, key in ((f"critical path of node {n}", "parts"), (f"diagnose node {n}", "breakdown")):
            with self.subTest(stmt=stmt):
                want = self.json(stmt)
                doc = json.loads(self.ok("--format", "perfetto", stmt).stdout)
                slices, _, threads, procs = check_trace_events(self, doc)
                cp = state_slices(doc, "critical path")
                parts = [p for p in want[key] if p["ns"]]
                self.assertEqual([(x["args"]["thread"], x["args"]["state"], x["args"]["node"]) for x in cp],
                                 [(p["thread"], p["state"], p["node"]) for p in parts])
                self.assertEqual([(round(x["ts"] * 1000), round(x["dur"] * 1000)) for x in cp],
                                 [(p["begin"], p["ns"]) for p in parts])
                period = want["period"]
                self.assertEqual(sum(round(x["dur"] * 1000) for x in cp), period["end"] - period["begin"])
                self.assertTrue(all(x["name"] == f'{x["args"]["thread"]}: {x["args"]["state"]}' or
                                    x["args"]["state"] == "io" for x in cp))
                self.assertEqual(procs[cp[0]["pid"]], "critical path")
                # the wait of the node asked about, on its own thread's track
                waits = [x for x in state_slices(doc, "state") if x["args"]["node"] == n]
                self.assertEqual([x["args"]["state"] for x in waits], ["blocked", "runnable"])
                blocked, runnable = waits
                self.assertEqual((blocked["pid"], blocked["tid"]), (self.ui["pid"], self.ui["tid"]))
                self.assertEqual(round(blocked["ts"] * 1000), self.ui["begin"] - self.ui["blocked"])
                self.assertGreater(blocked["dur"], 283000)  # the 283.9 ms, drawn
                self.assertEqual(blocked["args"]["waker"], "worker")
                self.assertEqual(blocked["name"], "blocked: wakeup by worker")
                self.assertEqual(round((runnable["ts"]) * 1000), round((blocked["ts"] + blocked["dur"]) * 1000))
                self.assertLessEqual(round((runnable["ts"] + runnable["dur"]) * 1000), self.ui["begin"])
                node = [x for x in slices if x["args"]["node"] == n][0]
                self.assertEqual((node["pid"], node["tid"]), (blocked["pid"], blocked["tid"]))
        # a view without a critical path draws the waits, not the path
        doc = json.loads(self.ok("--format", "perfetto", f"slice back from node {n} depth 3").stdout)
        check_trace_events(self, doc)
        self.assertEqual(state_slices(doc, "critical path"), [])
        self.assertIn(n, [x["args"]["node"] for x in state_slices(doc, "state")])

    def test_every_statement_that_returns_nodes(self):
        n = self.ui["id"]
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        for stmt in (UI.replace("limit 1", "limit 5") + ' in trace "anomaly"',
                     'find nodes where kind = "timer" in trace "anomaly"',
                     f'show node {n} in trace "anomaly"',
                     f'transaction from node {n} in trace "anomaly"',
                     f'slice forward from node {n} depth 3 in trace "anomaly"',
                     f'slice back from node {n} with weak in trace "anomaly"',
                     f'diagnose node {n} in trace "anomaly"',
                     f'compare path (slice back from node {n} depth 3 in trace "anomaly") '
                     f'with (slice back from node {n} in trace "anomaly")'):
            with self.subTest(stmt=stmt):
                slices, _, _, _ = self.perfetto(stmt)
                self.assertTrue(slices)

    def test_diagnose_against_another_trace_keeps_the_runs_apart(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        stmt = 'diagnose thread "ui-main" against trace "normal"'
        d = self.json("--trace", "anomaly", stmt)
        slices, flows, threads, procs = self.perfetto("--trace", "anomaly", stmt)
        by_trace = {}
        for x in slices:
            by_trace.setdefault(x["args"]["trace"], set()).add(x["args"]["node"])
        self.assertEqual(by_trace["anomaly"], {n["id"] for n in d["anomaly_path"]})
        self.assertEqual(by_trace["normal"], {n["id"] for n in d["normal_path"]})
        # the two runs are different processes, named by their role
        pids = {t: {x["pid"] for x in slices if x["args"]["trace"] == t} for t in by_trace}
        self.assertFalse(pids["anomaly"] & pids["normal"])
        self.assertTrue(any(p.endswith("[normal]") for p in procs.values()))
        self.assertTrue(any(p.endswith("[anomaly]") for p in procs.values()))
        starts = {(x["args"]["trace"], x["args"]["node"]) for x in slices if x["args"].get("start")}
        self.assertIn(("anomaly", d["anomaly"]["id"]), starts)
        self.assertIn(("normal", d["baseline"]["id"]), starts)

    def test_statements_without_nodes_are_refused(self):
        for stmt in ("traces", f"events of node {self.ui['id']}", "find events limit 1"):
            with self.subTest(stmt=stmt):
                p = self.run_argusq("--format", "perfetto", stmt)
                self.assertEqual(p.returncode, 1)
                self.assertIn("--format perfetto", p.stderr)
                self.assertEqual(p.stdout, "")

    def test_export_to_a_file(self):
        out = os.path.join(self.dir, "chain.json")
        p = self.ok(f'export slice back from node {self.ui["id"]} to "{out}"')
        self.assertIn("chain.json", p.stdout)
        with open(out) as f:
            slices, _, _, _ = check_trace_events(self, json.load(f))
        self.assertEqual(len(slices), len(self.json(f"slice back from node {self.ui['id']}")["nodes"]))
        # --format decides when given; a statement without nodes exports JSON
        d = self.json(f'export traces to "{self.dir}/t.json"')
        self.assertEqual(d, {"export": f"{self.dir}/t.json", "format": "json"})
        with open(os.path.join(self.dir, "t.json")) as f:
            self.assertEqual(json.load(f)["traces"][0]["name"], "anomaly")
        self.ok(f'export traces to "{self.dir}/t2.json"')
        with open(os.path.join(self.dir, "t2.json")) as f:
            self.assertIn("traces", json.load(f))
        self.ok("--format", "dot", f'export show node {self.ui["id"]} to "{self.dir}/n.dot"')
        with open(os.path.join(self.dir, "n.dot")) as f:
            self.assertTrue(f.read().startswith("digraph"))
        self.ok("--format", "csv", f'export {UI} to "{self.dir}/n.csv"')
        with open(os.path.join(self.dir, "n.csv")) as f:
            self.assertTrue(f.readline().startswith("id,kind,thread"))
        # a failing statement leaves no file; nor does a nested export
        p = self.run_argusq('export slice back from node 999999 to "gone.json"')
        self.assertEqual(p.returncode, 1)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "gone.json")))
        p = self.run_argusq('export export traces to "a" to "b"')
        self.assertEqual(p.returncode, 1)
        self.assertIn("export", p.stderr)
        p = self.run_argusq(f'export traces to "{self.dir}/no/such/dir/x.json"')
        self.assertEqual(p.returncode, 1)
        self.assertIn("No such file", p.stderr)


class Graphs(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ui = self.json(UI)["nodes"][0]

    def render(self, dot):
        self.assertIsNotNone(shutil.which("dot"), "graphviz is installed by the Makefile")
        p = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "", "Graphviz has no complaint")
        ET.fromstring(p.stdout)
        return p.stdout

    def test_dot_groups_by_process_labels_and_styles(self):
        stmt = f"slice back from node {self.ui['id']} depth 6 with weak"
        want = self.json(stmt)
        dot = self.ok("--format", "dot", stmt).stdout
        self.render(dot)
        procs = {(n["pid"], n["proc"]) for n in want["nodes"]}
        clusters = re.findall(r'subgraph cluster_0_(\d+) \{\s*label="([^"]*)"', dot)
        self.assertEqual({(int(p), l) for p, l in clusters}, {(p, f"{name} (pid {p})") for p, name in procs})
        # each node sits in its process's cluster
        for block in re.split(r"subgraph ", dot)[1:]:
            pid = int(re.match(r"cluster_0_(\d+)", block).group(1))
            ids = {int(i) for i in re.findall(r"^\s+n(\d+) \[label=", block, re.M)}
            self.assertEqual(ids, {n["id"] for n in want["nodes"] if n["pid"] == pid})
        # a label: thread, tid, kind, span, wait and telling events
        ui = re.search(rf'n{self.ui["id"]} \[label="([^"]*)"', dot).group(1)
        self.assertIn("ui-main (4122)", ui)
        self.assertIn("thread  1089.374974 +7.0us", ui)
        self.assertIn("blocked 283.9ms", ui)
        self.assertIn("wait:sleep", ui)
        self.assertRegex(dot, rf'n{self.ui["id"]} \[label="[^"]*"[^]]*color=red')
        # edges styled by kind
        kinds = {e["kind"] for e in want["edges"]}
        self.assertTrue({"wakeup", "timer", "weak"} <= kinds, kinds)
        # one arrow per pair of nodes, labeled with every kind between them
        arrows = re.findall(r'n(\d+) -> n(\d+) \[label="([^"]*)"', dot)
        pairs = [(int(a), int(b)) for a, b, _ in arrows]
        self.assertEqual(len(pairs), len(set(pairs)), "two arrows between the same two nodes")
        labels = {(int(a), int(b)): [k.split(" x")[0] for k in lab.split(" + ")] for a, b, lab in arrows}
        for e in want["edges"]:
            self.assertIn(e["kind"], labels[(e["from"], e["to"])])
        self.assertEqual(sum(len(k) for k in labels.values()), len({(e["from"], e["to"], e["kind"]) for e in want["edges"]}))
        self.assertRegex(dot, r'\[label="[^"]*timer[^"]*", style=dotted')
        self.assertRegex(dot, r'\[label="weak", style=dashed')
        self.assertRegex(dot, r'\[label="weak \+ preempt", style=bold')  # the preemption shown, not the weak

    def test_long_chains_fold_and_parallel_edges_merge(self):
        """A depth-20 slice back from ui-main runs through hog and its timer
        nine times over: the first and the last stay, the seven between are
        one node that says so, and the picture is a third as wide.  Edges
        of several kinds between the same two nodes are one arrow."""
        stmt = f"slice back from node {self.ui['id']} depth 20"
        want = self.json(stmt)
        dot = self.ok("--format", "dot", stmt).stdout
        self.render(dot)
        # the chain, from the JSON: hog and timer/hrtimer_wakeup taking turns
        names = {n["id"]: n["thread"] for n in want["nodes"]}
        hogs = [n for n in want["nodes"] if n["thread"] == "hog"]
        self.assertGreaterEqual(len(hogs), 9)
        drawn = {int(i) for i in re.findall(r"^\s+n(\d+) \[label=", dot, re.M)}
        folds = re.findall(r'^\s+n(\d+) \[label="(\d+) more x \(([^)]*)\)\\nfolded: ', dot, re.M)
        self.assertEqual(len(folds), 1, dot)
        fid, count, pattern = folds[0]
        self.assertEqual(pattern, "timer/hrtimer_wakeup -> hog")
        # every node is drawn, or folded into the count
        self.assertEqual(len(drawn - {int(fid)}) + 2 * int(count), len(want["nodes"]))
        self.assertEqual(int(count), len(hogs) - 1 - 2)  # the leaf hog is not in the chain; its first and last stay
        self.assertIn(self.ui["id"], drawn)
        self.assertIn(f" -> n{fid} [", dot)  # the chain goes through the fold
        self.assertIn(f"n{fid} -> ", dot)
        # the whole is narrower than the strip it was (about 6,900 pt)
        svg = self.ok("--format", "svg", stmt).stdout
        width = float(re.search(r'<svg width="([\d.]+)pt"', svg).group(1))
        self.assertLess(width, 3500)
        # JSON and Perfetto keep every node
        self.assertEqual(len(want["nodes"]), len(set(names)))
        # diagnose: the wakeup and the preemption from node 1 to node 2 are one arrow
        dot = self.ok("--format", "dot", f"diagnose node {self.ui['id']}").stdout
        arrows = re.findall(r'(n\d+) -> (n\d+) \[label="([^"]*)"', dot)
        self.assertEqual(len(arrows), len({(a, b) for a, b, _ in arrows}))
        self.assertIn("wakeup + preempt", [lab for _, _, lab in arrows])

    def test_dot_of_diagnose_and_find_renders(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        dot = self.ok("--trace", "anomaly", "--format", "dot",
                      'diagnose thread "ui-main" against trace "normal"').stdout
        self.render(dot)
        self.assertIn('label="normal: ', dot)
        self.assertIn('label="anomaly: ', dot)
        self.render(self.ok("--trace", "anomaly", "--format", "dot", "find nodes").stdout)

    def test_svg_through_graphviz(self):
        p = self.ok("--format", "svg", f"slice back from node {self.ui['id']} depth 4")
        root = ET.fromstring(p.stdout)
        self.assertTrue(root.tag.endswith("svg"))
        self.assertIn("ui&#45;main (pid 4122)", p.stdout)
        self.ok("--format", "svg", f'export show node {self.ui["id"]} to "{self.dir}/n.svg"')
        with open(os.path.join(self.dir, "n.svg")) as f:
            self.assertTrue(ET.fromstring(f.read()).tag.endswith("svg"))

    def test_svg_without_graphviz_says_so(self):
        p = self.run_argusq("--format", "svg", f"show node {self.ui['id']}", env={"PATH": self.dir})
        self.assertEqual(p.returncode, 1)
        self.assertIn("graphviz", p.stderr.lower())
        self.assertIn("dot", p.stderr)
        self.assertEqual(p.stdout, "")


class Manual(ArchiveCase):
    def test_help_and_man_page_list_the_same_statements(self):
        """`help` and the man page's STATEMENTS say the same: each statement
        `help` lists starts with a verb the man page has an entry for and
        every keyword of its syntax is in that section, and each entry of
        the man page is a statement `help` lists (the two are kept apart,
        so this is what keeps them one)."""
        p = subprocess.run(["man", "-l", MAN], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="250", MANPAGER="cat", PAGER="cat"))
        text = re.sub(r".\x08", "", p.stdout)
        section = text[text.index("\nSTATEMENTS\n"):text.index("\n   Expressions\n")]
        entries = [l.strip() for l in section.split("\n") if re.match(r"^       [a-z]", l)]
        self.assertGreater(len(entries), 20)
        placeholders = re.compile(r'^[A-Z0-9_]+$|^".*"$|^\(|^\[|^\.\.\.|^[A-Z]')
        def keywords(syntax):
            return {w for w in re.findall(r'[A-Za-z_][A-Za-z_0-9.]*|"[^"]*"', syntax.replace("|", " "))
                    if not placeholders.match(w)}
        lines = [l.strip() for l in self.ok("help", db=False).stdout.splitlines()[1:] if l.strip()]
        self.assertGreater(len(lines), 20)
        man_words = set(re.findall(r"[a-z_]+", section))
        man_verbs = {e.split()[0] for e in entries}
        for line in lines:
            self.assertIn(line.split()[0], man_verbs, line)
            self.assertLessEqual(keywords(line), man_words, line)
        help_verbs = {l.split()[0] for l in lines}
        for e in entries:
            # an entry, or a field list of the section's end (`nodes  id, tid, ...`)
            if e.split()[0] in ("nodes", "events", "edges") and "," in e.split(None, 1)[1][:12]:
                continue
            self.assertIn(e.split()[0], help_verbs, e)
        # the statements of two words: both say the second
        for l in lines:
            two = l.split()[:2]
            if len(two) == 2 and re.match(r"^[a-z]+$", two[1]) and two[0] not in ("find", "traces", "help"):
                self.assertTrue(any(e.split()[:2] == two or re.search(rf"\b{two[0]}\b.*\|\s*{two[1]}\b", e)
                                    for e in entries), l)

    def test_man_page_renders_without_warnings(self):
        self.assertIsNotNone(shutil.which("man"), "man-db is installed by the Makefile")
        p = subprocess.run(["man", "-l", MAN], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stderr, "")
        if shutil.which("groff"):
            g = subprocess.run(["groff", "-man", "-ww", "-z", MAN], capture_output=True, text=True)
            self.assertEqual((g.returncode, g.stderr), (0, ""))
        text = re.sub(r".\x08", "", p.stdout)
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "STATEMENTS",
                        "OUTPUT FORMATS", "FILES", "ENVIRONMENT", "EXIT STATUS", "EXAMPLES"):
            self.assertRegex(text, rf"(?m)^{section}$")
        # every command and option
        for word in ("ingest FILE", "record", "-o, --output", "--max-mb", "--events", "--watch", "-d, --db",
                     "--trace",
                     "--json", "--format", "-f SCRIPT", "--name", "--rules", "--help", "--version",
                     "ARGUSQ_DB", "perfetto", "svg"):
            self.assertIn(word, text)
        # every option of the usage
        usage = self.ok("--help", db=False).stdout
        for opt in set(re.findall(r"(?:^|(?<=[\s\[|]))(--?[a-z][a-z-]*)", usage)):
            self.assertIn(opt, text)
        # every statement of `help`
        self.ingest(trace("lockchain-normal.txt"))
        for line in self.ok("help").stdout.splitlines()[1:]:
            words = line.split()
            if words:
                self.assertIn(" ".join(words[:2]) if words[0] in ("use", "show", "events", "drop", "rebuild",
                                                                   "match", "compare") else words[0], text)

    def test_help_and_version(self):
        p = self.ok("--version", db=False)
        self.assertRegex(p.stdout, r"^argusq \d+\.\d+\.\d+\n$")
        p = self.ok("--help", db=False)
        self.assertIn("perfetto", p.stdout)
        self.assertIn("usage:", p.stdout)

    def test_make_install(self):
        dest = tempfile.mkdtemp(prefix="argusq-install-")
        self.addCleanup(shutil.rmtree, dest, True)
        env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE") and k != "MFLAGS"}
        p = subprocess.run(["make", "-s", "-C", ROOT, "install", f"DESTDIR={dest}", "PREFIX=/opt/aq"],
                           capture_output=True, text=True, env=env, timeout=600)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        root = os.path.join(dest, "opt", "aq")
        binary = os.path.join(root, "bin", "argusq")
        self.assertTrue(os.access(binary, os.X_OK))
        self.assertEqual(subprocess.run([binary, "--version"], capture_output=True, text=True).returncode, 0)
        with open(os.path.join(root, "share", "man", "man1", "argusq.1")) as f, open(MAN) as g:
            self.assertEqual(f.read(), g.read())
        with open(os.path.join(root, "share", "bash-completion", "completions", "argusq")) as f, \
                open(COMPLETION) as g:
            self.assertEqual(f.read(), g.read())


class Progress(ArchiveCase):
    def ingest_on_pty(self, path):
        return self.on_pty("-d", self.db, "ingest", path, "--name", "p", *arch_of(path))

    def on_pty(self, *args):
        master, slave = pty.openpty()
        p = subprocess.Popen([ARGUSQ] + list(args), stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=slave, cwd=self.dir)
        os.close(slave)
        err = b""
        end = time.time() + 120
        while time.time() < end:
            r, _, _ = select.select([master], [], [], 0.2)
            if r:
                try:
                    chunk = os.read(master, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                err += chunk
            elif p.poll() is not None:
                break
        out = p.communicate(timeout=60)[0]
        os.close(master)
        return p.returncode, out.decode(), err.decode(errors="replace")

    def test_bar_on_a_terminal(self):
        rc, out, err = self.ingest_on_pty(trace("lockchain-anomaly.txt"))
        self.assertEqual(rc, 0, err)
        self.assertIn("ingested", out)
        self.assertRegex(err, r"ingest \[[#.]+\] +\d+%")
        self.assertIn("ev/s", err)
        self.assertIn("left", err)
        self.assertIn("building the graph", err)
        self.assertTrue(err.endswith("\r\x1b[K"), "the bar is erased at the end")
        self.assertNotIn("runtime error", err)

    def test_recording_shows_progress_on_a_terminal(self):
        out = os.path.join(self.dir, "r.dat")
        rc, _, err = self.on_pty("record", "-o", out, "--", "sleep", "1")
        if rc == 3:
            self.skipTest("this machine cannot trace: " + err.strip()[-200:])
        self.assertEqual(rc, 0, err)
        self.assertRegex(err, r"record +[\d.]+k? events +[\d.]+k? ev/s")
        # the bar is erased before the summary lines
        self.assertRegex(err, r"\r\x1b\[Kargusq: .*exited with status 0")
        p = self.run_argusq("record", "-o", os.path.join(self.dir, "q.dat"), "--", "true")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertNotIn(" ev/s", p.stderr)  # no bar without a terminal

    def test_nothing_without_a_terminal(self):
        p = self.run_argusq("ingest", trace("lockchain-anomaly.txt"), *arch_of(trace("lockchain-anomaly.txt")))
        self.assertEqual(p.returncode, 0)
        self.assertEqual(p.stderr, "")
        self.assertIn("ingested", p.stdout)


class Completion(ArchiveCase):
    def complete(self, *words):
        """COMPREPLY for the command line `words` (the last one being completed)."""
        script = (f". {COMPLETION}\n"
                  "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); COMPREPLY=()\n"
                  "_argusq\n"
                  "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
        p = subprocess.run(["bash", "--norc", "--noprofile", "-c", script, "bash", ARGUSQ] + list(words),
                           capture_output=True, text=True, cwd=self.dir,
                           env={k: v for k, v in os.environ.items() if k != "ARGUSQ_DB"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stderr, "")
        return [w for w in p.stdout.split("\n") if w]

    def test_commands_options_statements_and_traces(self):
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        first = self.complete("")
        for w in ("ingest", "record", "find", "slice", "diagnose", "export", "traces"):
            self.assertIn(w, first)
        self.assertEqual(self.complete("sl"), ["slice"])
        self.assertEqual(set(self.complete("--fo")), {"--format"})
        self.assertIn("--version", self.complete("--"))
        self.assertEqual(set(self.complete("--format", "")), {"table", "json", "csv", "dot", "svg", "perfetto"})
        self.assertEqual(self.complete("--format", "p"), ["perfetto"])
        self.assertEqual(sorted(self.complete("-d", self.db, "--trace", "")), ["anomaly", "normal"])
        self.assertEqual(self.complete("-d", self.db, "--trace", "no"), ["normal"])
        # in a statement: a trace name is a string
        self.assertEqual(sorted(self.complete("-d", self.db, "find", "nodes", "in", "trace", "")),
                         ['\\"anomaly\\"', '\\"normal\\"'])
        # statement keywords and edge kinds
        self.assertIn("where", self.complete("find", "nodes", "wh"))
        self.assertIn("timer", self.complete("slice", "back", "from", "node", "3", "via", ""))
        # every kind `help slice` names, and every statement `help` lists
        via = set(self.complete("slice", "back", "from", "node", "3", "via", ""))
        help_slice = self.ok("help", "slice", db=False).stdout
        kinds = set(re.findall(r"\b(wakeup|weak|ipc_reply|ipc|dispatch|runloop|timer|flag|user|preempt|io)\b", help_slice))
        self.assertTrue({"preempt", "io", "user"} <= kinds, help_slice)
        self.assertLessEqual(kinds, via)
        verbs = {l.split()[0] for l in self.ok("help", db=False).stdout.splitlines()[1:] if l.strip()}
        self.assertLessEqual(verbs, set(first))
        # ingest takes a file
        open(os.path.join(self.dir, "mytrace.txt"), "w").close()
        self.assertEqual(self.complete("ingest", "mytr"), ["mytrace.txt"])
        # no archive: no trace names, and no noise
        self.assertEqual(self.complete("-d", os.path.join(self.dir, "none.db"), "--trace", ""), [])

    def test_archive_from_environment(self):
        self.ingest(trace("lockchain-normal.txt"), name="normal")
        os.environ["ARGUSQ_DB"] = self.db
        try:
            script = (f". {COMPLETION}\nCOMP_WORDS=({ARGUSQ} --trace ''); COMP_CWORD=2; _argusq\n"
                      "printf '%s\\n' \"${COMPREPLY[@]}\"\n")
            p = subprocess.run(["bash", "--norc", "-c", script], capture_output=True, text=True, cwd=self.dir)
        finally:
            del os.environ["ARGUSQ_DB"]
        self.assertEqual(p.stdout.split(), ["normal"])
