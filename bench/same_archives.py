#!/usr/bin/env python3
"""bench/same_archives.py OLD NEW [PATH...]: do two argusq binaries write
the same archive for every trace?  The gate for a change that must not
change what argusq stores (a refactor, a fast path removed): each trace of
tests/traces and of ../shared (traces, foreign*) -- or the PATHs given --
is ingested by each binary into an archive of its own, and every LMDB
table of the two is compared as `mdb_dump` prints it (lmdb-utils).  The
catalog (the table `traces`) holds the time of the ingest, so it is
compared as `argusq traces --json` prints it, without `ingested_at`.

Prints a line per trace (`same`, or the tables that differ and the first
differing record) and exits 1 if any differs.  `make same-archives
BASE=REV` builds REV's argusq and runs this against build/argusq."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
SHARED = os.path.join(ROOT, "..", "shared")


def traces(paths):
    if paths:
        return paths
    out = []
    for d in [os.path.join(ROOT, "tests", "traces")] + sorted(
            os.path.join(SHARED, x) for x in os.listdir(SHARED) if x == "traces" or x.startswith("foreign")):
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if name.endswith((".md", ".py", ".tgids", ".sh")) or name.startswith("."):
                continue
            if os.path.isfile(p) or os.path.isfile(os.path.join(p, "metadata")) or d.endswith(("lttng", "more")):
                out.append(p)
    return out


def arch_of(path):
    """x86-64 for the text recorded here (tests/traces, ../shared/traces), as the tests say it"""
    here = [os.path.join(ROOT, "tests", "traces"), os.path.join(SHARED, "traces")]
    real = os.path.realpath(path)
    mine = any(real.startswith(os.path.realpath(d) + os.sep) for d in here)
    return ["--arch", "x86_64"] if mine and real.endswith((".txt", ".trace")) else []


def dump(db):
    """{table: its records as mdb_dump prints them}"""
    p = subprocess.run(["mdb_dump", "-n", "-a", db], capture_output=True, text=True, check=True)
    tables, cur = {}, None
    for line in p.stdout.split("\n"):
        if line.startswith("database="):
            cur = line[len("database="):]
            tables[cur] = []
        elif cur is not None and line.startswith(" "):
            tables[cur].append(line)
    return tables


def catalog(binary, db):
    p = subprocess.run([binary, "-d", db, "--json", "traces"], capture_output=True, text=True, check=True)
    doc = json.loads(p.stdout)
    for t in doc.get("traces", []):
        t.pop("ingested_at", None)
    return doc


def ingest(binary, path, db):
    p = subprocess.run([binary, "-d", db, "ingest", path, "--name", "t"] + arch_of(path),
                       capture_output=True, text=True)
    return p.returncode, p.stderr.strip().split("\n")[-1] if p.returncode else ""


def main(argv):
    if len(argv) < 3:
        sys.exit(__doc__)
    old, new = os.path.abspath(argv[1]), os.path.abspath(argv[2])
    if not shutil.which("mdb_dump"):
        sys.exit("same_archives: mdb_dump not found (apt-get install lmdb-utils)")
    tmp = tempfile.mkdtemp(prefix="argusq-same-")
    differ = 0
    try:
        for n, path in enumerate(traces(argv[3:])):
            a, b = os.path.join(tmp, "%d-old.db" % n), os.path.join(tmp, "%d-new.db" % n)
            ra, rb = ingest(old, path, a), ingest(new, path, b)
            shown = os.path.relpath(path, ROOT)
            if ra != rb:
                print("%s: DIFFERS: the ingests ended differently: %s / %s" % (shown, ra, rb))
                differ += 1
                continue
            if ra[0]:
                print("%s: same (both refused it: %s)" % (shown, ra[1]))
                continue
            da, db_ = dump(a), dump(b)
            bad = []
            for t in sorted(set(da) | set(db_)):
                if t == "traces":
                    continue
                x, y = da.get(t, []), db_.get(t, [])
                if x != y:
                    first = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
                    bad.append("%s (%d vs %d lines, first difference at line %d)" % (t, len(x), len(y), first + 1))
            if catalog(old, a) != catalog(new, b):
                bad.append("traces (the catalog)")
            print("%s: %s" % (shown, "same" if not bad else "DIFFERS: " + "; ".join(bad)))
            differ += bool(bad)
            os.unlink(a)
            os.unlink(b)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("%s" % ("every archive the same" if not differ else "%d traces differ" % differ))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
