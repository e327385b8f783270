"""The archive's invariants under long random sequences of every write
statement and admin command, checked against a model kept by the test
(stateful testing, in the manner of SQLite's and Hypothesis's): ingest,
rebuild graph, rules added and dropped, drop, rename, labels, compact,
dump and restore, backup (continuing in the copy), and an archive of an
old format migrated at the start.

After every step:
- `traces` lists each trace of the model once, in the model's order, and
  nothing else; `info` counts the sum of its parts;
- the traces the step touched (and one other) answer as a fresh ingest of
  the same file with the same applied rules does in an archive of its
  own: the catalog's counts, the top nodes, a slice, the rules and labels;
- a dropped or renamed-away name answers nowhere.
Every 25 steps every trace is checked.

A short run is part of `make test` (ARGUSQ_STATEFUL_STEPS, default 60;
ARGUSQ_STATEFUL_SEEDS, default "1"); `make stateful` runs 10,000 steps
with several seeds on the optimized build.  A failure prints the seed and
the steps that led to it, and the same seed replays them."""
import gzip
import json
import os
import random
import shutil
import subprocess
import tempfile
import unittest

from common import ARGUSQ, ROOT, trace

SOURCES = ["lockchain-normal.txt", "timerchain-normal.txt", "pipechain-normal.txt", "markers.txt"]
LABEL_KEYS = ["run", "host", "build"]
TOP = "find nodes order by blocked desc limit 3"
FULL_CHECK_EVERY = 25


class Failure(AssertionError):
    pass


class Model:
    """What the archive should hold: traces in listing order, each with the
    file it came from, the rules it was last built with, its rules as
    listed (number -> text) and its labels."""

    def __init__(self):
        self.traces = []  # dicts: name, source, applied, rules, labels
        self.gone = set()  # names dropped or renamed away, not reused since

    def get(self, name):
        return next(t for t in self.traces if t["name"] == name)

    def names(self):
        return [t["name"] for t in self.traces]


class Runner:
    def __init__(self, seed, steps, workdir, binary):
        self.rng = random.Random(seed)
        self.seed, self.steps, self.dir, self.bin = seed, steps, workdir, binary
        self.db = os.path.join(workdir, "a.db")
        self.model = Model()
        self.refs = {}  # (source, applied rules) -> answers of a fresh ingest
        self.log = []
        self.counter = 0
        self.tids = {}  # source -> tids of its threads (for rules)

    # ---- running argusq ----
    def run(self, *args, db=None, ok=True):
        cmd = [self.bin, "-d", db or self.db] + list(args)
        env = dict(os.environ)
        env.pop("ARGUSQ_DB", None)
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=self.dir, env=env, timeout=300)
        if "runtime error" in p.stderr or "AddressSanitizer" in p.stderr:
            self.fail(f"sanitizer report from {' '.join(args)}:\n{p.stderr}")
        if ok and p.returncode != 0:
            self.fail(f"argusq {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
        return p

    def json(self, *args, db=None):
        return json.loads(self.run("--json", *args, db=db).stdout)

    def fail(self, msg):
        steps = "\n".join(f"  {i + 1}: {s}" for i, s in enumerate(self.log[-30:]))
        raise Failure(f"seed {self.seed}, step {len(self.log)}: {msg}\nlast steps:\n{steps}")

    def fresh_name(self):
        self.counter += 1
        return self.rng.choice(["run", "trace", "t", "baseline"]) + f"-{self.counter}"

    def batch(self, statements, db=None):
        """Statements run by one argusq (a script on stdin), one JSON answer
        each: a process per step, not per question."""
        if not statements:
            return []
        cmd = [self.bin, "-d", db or self.db, "--json"]
        p = subprocess.run(cmd, input="".join(st + ";\n" for st in statements), capture_output=True, text=True,
                           cwd=self.dir, timeout=300)
        if p.returncode != 0 or "runtime error" in p.stderr:
            self.fail(f"argusq failed ({p.returncode}) on {statements}:\n{p.stderr}")
        out = [json.loads(line) for line in p.stdout.splitlines() if line.strip()]
        if len(out) != len(statements):
            self.fail(f"{len(statements)} statements gave {len(out)} answers: {p.stdout[:500]}")
        return out

    # ---- the reference: a fresh ingest of the same file, same rules ----
    def answers(self, names, db=None):
        """What the invariants compare, of each trace of `names`: the
        catalog's counts, the top nodes, a slice from the first, the rules
        and the labels; and the whole listing."""
        first = self.batch(["traces"] + [f'{TOP} in trace "{n}"' for n in names] +
                           [f'rules in trace "{n}"' for n in names], db=db)
        listed, tops, rules = first[0]["traces"], first[1:1 + len(names)], first[1 + len(names):]
        slices = self.batch([f'slice back from node {top["nodes"][0]["id"]} depth 4 in trace "{n}"'
                             for n, top in zip(names, tops) if top["nodes"]], db=db)
        out = {}
        for n, top, r in zip(names, tops, rules):
            entry = [t for t in listed if t["name"] == n]
            if len(entry) != 1:
                self.fail(f"trace {n!r} listed {len(entry)} times")
            t = entry[0]
            out[n] = {"counts": {k: t[k] for k in ("events", "nodes", "edges", "threads", "processes", "skipped",
                                                   "first_ts", "last_ts", "format")},
                      "top": top["nodes"], "slice": slices.pop(0) if top["nodes"] else None,
                      "rules": {x["rule"]: x["text"] for x in r["rules"]},
                      "labels": {k: v for k, v in t["labels"].items() if k in LABEL_KEYS}}
        return out, listed

    def reference(self, source, applied):
        key = (source, tuple(applied))
        if key not in self.refs:
            ref = os.path.join(self.dir, f"ref-{len(self.refs)}.db")
            args = ["ingest", source, "--name", "ref", "--arch", "x86_64"]
            if applied:
                rules = os.path.join(self.dir, f"ref-{len(self.refs)}.rules")
                with open(rules, "w") as f:
                    f.write("".join(r + ";\n" for r in applied))
                args += ["--rules", rules]
            self.run(*args, db=ref)
            got = self.answers(["ref"], db=ref)[0]["ref"]
            self.refs[key] = {k: got[k] for k in ("counts", "top", "slice")}
            os.unlink(ref)
        return self.refs[key]

    def tids_of(self, source):
        if source not in self.tids:
            ref = self.reference(source, ())
            self.tids[source] = sorted({n["tid"] for n in ref["top"] if n["tid"] > 0}) or [1]
        return self.tids[source]

    # ---- the invariants ----
    def check(self, names, newly_gone):
        got, listed = self.answers(names)
        if [t["name"] for t in listed] != self.model.names():
            self.fail(f"traces lists {[t['name'] for t in listed]}, the model {self.model.names()}")
        if self.rng.random() < 0.2 or newly_gone:
            info = self.json("info")
            sums = {k: sum(t[k] for t in listed) for k in ("events", "nodes", "edges")}
            if info["traces"] != len(listed) or any(info[k] != v for k, v in sums.items()):
                self.fail(f"info {info} is not the sum of its traces {sums}, {len(listed)} traces")
        for name in names:
            m = self.model.get(name)
            want = dict(self.reference(m["source"], m["applied"]), rules=m["rules"], labels=m["labels"])
            if m.get("restored"):  # the dump file itself has no line to skip
                want["counts"] = dict(want["counts"], skipped=got[name]["counts"]["skipped"])
            for part in want:
                if got[name][part] != want[part]:
                    self.fail(f"trace {name!r} ({m['source']}, rules {m['applied']}) answers otherwise than the "
                              f"model and a fresh ingest: its {part} is\n{json.dumps(got[name][part])[:1500]}\n"
                              f"not\n{json.dumps(want[part])[:1500]}")
        for name in newly_gone:
            if name in self.model.names():
                continue
            p = self.run("find", "nodes", "limit", "1", "in", "trace", name, ok=False)
            if p.returncode == 0:
                self.fail(f"trace {name!r} is gone but answers: {p.stdout[:200]}")

    # ---- the steps ----
    def step_ingest(self):
        source = trace(self.rng.choice(SOURCES))
        name = self.fresh_name()
        self.log.append(f"ingest {os.path.basename(source)} --name {name}")
        self.run("ingest", source, "--name", name, "--arch", "x86_64")
        self.model.traces.append({"name": name, "source": source, "applied": (), "rules": {}, "labels": {},
                                  "restored": False})
        self.model.gone.discard(name)
        return [name]

    def step_ingest_taken_name(self, t):
        self.log.append(f"ingest again under the taken name {t['name']}")
        p = self.run("ingest", trace(SOURCES[0]), "--name", t["name"], "--arch", "x86_64", ok=False)
        if p.returncode == 0 or "already exists" not in p.stderr:
            self.fail(f"a second ingest named {t['name']!r} was not refused: {p.returncode} {p.stderr}")
        return [t["name"]]

    def step_rebuild(self, t):
        self.log.append(f"rebuild graph in trace {t['name']}")
        self.run("--trace", t["name"], "rebuild graph")
        t["applied"] = tuple(t["rules"][k] for k in sorted(t["rules"]))
        return [t["name"]]

    def step_rule(self, t):
        tid = self.rng.choice(self.tids_of(t["source"]))
        text = self.rng.choice([f"rule ignore wakeup where tid = {tid}",
                                'rule boundary syscall where name = "nanosleep"',
                                f"rule boundary syscall where tid = {tid}"])
        self.log.append(f"{text} in trace {t['name']}")
        out = self.json("--trace", t["name"], text)
        t["rules"][out["rule"]] = text
        return [t["name"]]

    def step_drop_rule(self, t):
        if not t["rules"]:
            return self.step_rule(t)
        n = self.rng.choice(sorted(t["rules"]))
        self.log.append(f"drop rule {n} in trace {t['name']}")
        self.run("--trace", t["name"], f"drop rule {n}")
        del t["rules"][n]
        return [t["name"]]

    def step_label(self, t):
        key = self.rng.choice(LABEL_KEYS)
        if key in t["labels"] and self.rng.random() < 0.5:
            self.log.append(f"label trace {t['name']} unset {key}")
            self.run(f'label trace "{t["name"]}" unset {key}')
            del t["labels"][key]
        else:
            value = self.rng.choice(["slow", "normal", "x1", "42"])
            self.log.append(f"label trace {t['name']} set {key} = {value}")
            self.run(f'label trace "{t["name"]}" set {key} = "{value}"')
            t["labels"][key] = value
        return [t["name"]]

    def step_drop(self, t):
        self.log.append(f"drop trace {t['name']}")
        self.run(f'drop trace "{t["name"]}"')
        self.model.traces.remove(t)
        self.model.gone.add(t["name"])
        return []

    def step_rename(self, t):
        new = self.fresh_name()
        self.log.append(f"rename trace {t['name']} to {new}")
        self.run(f'rename trace "{t["name"]}" to "{new}"')
        self.model.gone.add(t["name"])
        t["name"] = new
        return [new]

    def step_compact(self):
        self.log.append("compact")
        self.run("compact")
        return []

    def step_dump_restore(self, t):
        path = os.path.join(self.dir, "dump.argus")
        name = self.fresh_name()
        self.log.append(f"dump {t['name']} and ingest it as {name}")
        self.run("dump", "--trace", t["name"], "-o", path)
        self.run("ingest", path, "--name", name)
        os.unlink(path)
        # the dump carries the labels and the user rules; its ingest builds
        # the graph with every rule it carries
        rules = {i + 1: t["rules"][k] for i, k in enumerate(sorted(t["rules"]))}
        self.model.traces.append({"name": name, "source": t["source"], "applied": tuple(rules.values()),
                                  "rules": rules, "labels": dict(t["labels"]), "restored": True})
        self.model.gone.discard(name)
        return [name]

    def step_backup(self):
        copy = os.path.join(self.dir, f"backup-{len(self.log)}.db")
        self.log.append(f"backup to {os.path.basename(copy)} and go on in the copy")
        self.run("backup", copy)
        old = self.db
        self.db = copy
        for suffix in ("", "-lock"):
            if os.path.exists(old + suffix):
                os.unlink(old + suffix)
        return self.model.names()

    def start(self):
        """An empty archive, or (one seed in three) an archive of an old
        format, migrated on its first open."""
        fmt = self.rng.choice([None, None, 4, 5, 6])
        if fmt is None:
            return
        fixtures = os.path.join(ROOT, "tests", "fixtures", "formats")
        with gzip.open(os.path.join(fixtures, f"format-{fmt}.db.gz")) as src, open(self.db, "wb") as dst:
            shutil.copyfileobj(src, dst)
        self.log.append(f"start from format {fmt}")
        listed = self.json("traces")["traces"]
        for t in listed:
            rules = {r["rule"]: r["text"] for r in self.json("--trace", t["name"], "rules")["rules"]}
            if not os.path.exists(t["source"]):  # recorded on the fixture's machine: its own reference
                mine = trace(os.path.basename(t["source"]))
                t["source"] = mine if os.path.exists(mine) else None
            if t["source"] is None:
                continue
            self.model.traces.append({"name": t["name"], "source": t["source"],
                                      "applied": tuple(rules[k] for k in sorted(rules)), "rules": rules,
                                      "labels": {k: v for k, v in t["labels"].items() if k in LABEL_KEYS}})
        for t in listed:  # a trace the test cannot reproduce is dropped at once
            if t["name"] not in self.model.names():
                self.run(f'drop trace "{t["name"]}"')

    def go(self):
        self.start()
        gone = set(self.model.gone)
        for i in range(self.steps):
            ts = self.model.traces
            r = self.rng.random()
            if not ts or (r < 0.14 and len(ts) < 8):
                touched = self.step_ingest()
            else:
                t = self.rng.choice(ts)
                step = self.rng.choices(
                    [self.step_rebuild, self.step_rule, self.step_drop_rule, self.step_label, self.step_drop,
                     self.step_rename, lambda t: self.step_compact(), self.step_dump_restore,
                     lambda t: self.step_backup(), self.step_ingest_taken_name],
                    weights=[16, 16, 8, 10, 5, 6, 3, 4, 2, 2])[0]
                touched = step(t)
            if ts and (i + 1) % FULL_CHECK_EVERY == 0:
                touched = self.model.names()
            elif ts:
                touched = list(dict.fromkeys(touched + [self.rng.choice(ts)["name"]]))
            self.check([n for n in touched if n in self.model.names()], self.model.gone - gone)
            gone = set(self.model.gone)


class Stateful(unittest.TestCase):
    def test_random_sequences_keep_the_invariants(self):
        steps = int(os.environ.get("ARGUSQ_STATEFUL_STEPS", "60"))
        seeds = [int(s) for s in os.environ.get("ARGUSQ_STATEFUL_SEEDS", "1").split()]
        binary = os.environ.get("ARGUSQ_STATEFUL_BIN", ARGUSQ)
        for seed in seeds:
            with self.subTest(seed=seed), tempfile.TemporaryDirectory() as d:
                print(f"stateful: seed {seed}, {steps} steps", flush=True)
                Runner(seed, steps, d, binary).go()


if __name__ == "__main__":
    unittest.main()
