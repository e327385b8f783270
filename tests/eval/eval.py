#!/usr/bin/env python3
"""The diagnosis evaluation: how often `diagnose` names the
right culprit, on every workload of tests/workloads, recorded here.

For each workload of tests/eval/workloads.tsv (its victim thread, the
culprit a correct diagnosis names first, and the state it names it in:
the truth, from how the program is written), it

  - compiles tests/workloads/SOURCE.c,
  - records `normal` and `anomaly` once with `argusq record` (a trace.dat:
    recorder "dat") and once with tests/workloads/record-raw.sh (tracefs
    text: recorder "text"),
  - ingests each pair into a fresh archive and runs
    `diagnose thread "VICTIM"` alone and `against trace "NORMAL"`,

and prints one table: the culprit's rank among the suspects alone and
with the baseline, the state it is named in (ok when it is the expected
one), whether each breakdown partitions its period, who came first, and
a summary per group (the workloads the tests had before, the new shapes).

    python3 tests/eval/eval.py                      # record (as root) and evaluate
    python3 tests/eval/eval.py --keep DIR           # keep the recordings in DIR
    python3 tests/eval/eval.py --wait-idle 60       # on a shared machine: record when it is idle
    python3 tests/eval/eval.py --from tests/traces  # the committed recordings, no recording
    python3 tests/eval/eval.py --from DIR --only faultio,svc-own --recorders text -v

With --from DIR, the recordings are DIR/NAME-anomaly.dat (recorder dat)
and the first of DIR/NAME-anomaly.trace, NAME-anomaly-raw.trace,
NAME-anomaly.txt (recorder text); the normal run is NAME-normal.dat for a
.dat when there is one, else the text normal (NAME-normal.trace or .txt).
A workload without a recording for a recorder gets no row for it.
Exit status 0 whatever the ranks (the table is the result); 2 on usage
errors or when recording is impossible (not root).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
WORKLOADS = os.path.join(ROOT, "tests", "workloads")
RECORD_RAW = os.path.join(WORKLOADS, "record-raw.sh")
MANIFEST = os.path.join(HERE, "workloads.tsv")
RECORDERS = ("dat", "text")
NORMAL, ANOMALY = "NORMAL", "A"


def commit():
    """The repository's commit, or ? (a machine without git: the fresh check's)."""
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip() or "?"
    except OSError:
        return "?"


def load_manifest(path):
    rows = []
    with open(path) as f:
        for ln, line in enumerate(f, 1):
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            if len(cols) != 8:
                sys.exit(f"{path}:{ln}: {len(cols)} columns, want 8 (name source victim culprit state args group why)")
            name, source, victim, culprit, state, args, group, why = cols
            rows.append({"name": name, "source": source, "victim": victim, "culprits": culprit.split("|"),
                         "culprit": culprit, "state": state, "args": [] if args == "-" else args.split(),
                         "group": group, "why": why})
    return rows


def run(cmd, timeout=120, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as e:
        return subprocess.CompletedProcess(cmd, -1, e.stdout or "", f"timed out after {timeout}s")


def last_line(s):
    lines = [x for x in (s or "").strip().splitlines() if x.strip()]
    return lines[-1] if lines else ""


# ---- recording ----

def compile_workload(w, bindir):
    exe = os.path.join(bindir, w["source"])
    if not os.path.exists(exe):
        p = run(["cc", "-O2", "-pthread", "-o", exe, os.path.join(WORKLOADS, w["source"] + ".c")])
        if p.returncode != 0:
            raise RuntimeError(f"cc {w['source']}.c: {last_line(p.stderr)}")
    return exe


def cpu_busy(seconds):
    """The share of the machine's CPU time used in the next `seconds` (from /proc/stat)."""
    def sample():
        with open("/proc/stat") as f:
            v = [int(x) for x in f.readline().split()[1:9]]
        return sum(v), v[3] + v[4]
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(1, t1 - t0)


def wait_idle(limit):
    """Wait (at most `limit` seconds) until the machine has been idle (< 12% busy) for 2 s."""
    end = time.time() + limit
    while time.time() < end and cpu_busy(2) >= 0.12:
        pass


def record(argusq, w, exe, recorder, mode, outdir, idle=0):
    """Record one run of the workload; return the file."""
    if idle:
        wait_idle(idle)
    args = [a.replace("{dir}", outdir) for a in w["args"]]
    if recorder == "dat":
        out = os.path.join(outdir, f"{w['name']}-{mode}.dat")
        p = run([argusq, "record", "-o", out, "--", exe, mode] + args, cwd=outdir)
    else:
        out = os.path.join(outdir, f"{w['name']}-{mode}.trace")
        p = run(["bash", RECORD_RAW, out, exe, mode] + args, cwd=outdir)
    if p.returncode != 0 or not os.path.exists(out):
        raise RuntimeError(f"recording {os.path.basename(out)}: {last_line(p.stderr) or last_line(p.stdout)}")
    return out


def committed_files(d, name, recorder):
    """(anomaly, normal) in folder d for recorder, or None."""
    def first(*names):
        for n in names:
            if os.path.exists(os.path.join(d, n)):
                return os.path.join(d, n)
        return None
    text_normal = first(f"{name}-normal.trace", f"{name}-normal.txt")
    if recorder == "dat":
        a = first(f"{name}-anomaly.dat")
        n = first(f"{name}-normal.dat") or text_normal
    else:
        a = first(f"{name}-anomaly.trace", f"{name}-anomaly-raw.trace", f"{name}-anomaly.txt")
        n = text_normal
    return (a, n) if a and n else None


# ---- the diagnosis and its checks ----

def diagnose(argusq, db, victim, against):
    stmt = f'diagnose thread "{victim}"' + (f' against trace "{NORMAL}"' if against else "")
    p = run([argusq, "-d", db, "--trace", ANOMALY, "--json", stmt])
    if p.returncode != 0:
        raise RuntimeError(f"{stmt}: {last_line(p.stderr) or last_line(p.stdout)}")
    return json.loads(p.stdout)


def breakdown_sums(d):
    """The breakdown's parts are contiguous from the period's begin and end at its end."""
    per = d.get("period") or {}
    parts = d.get("breakdown") or []
    if not per or not parts:
        return False
    at = per["begin"]
    for p in parts:
        if p["begin"] != at or p["ns"] < 0:
            return False
        at += p["ns"]
    return at == per["end"] and per["end"] - per["begin"] == per["ns"]


def culprit_of(d, culprits):
    """(rank from 1, state) of the first suspect that is a culprit, or (None, None)."""
    for i, s in enumerate(d.get("suspects") or [], 1):
        if s.get("thread") in culprits:
            return i, s.get("state")
    return None, None


def first_of(d):
    s = (d.get("suspects") or [None])[0]
    return f"{s['thread']}:{s.get('state')}" if s else "(none)"


def evaluate(argusq, w, recorder, anomaly, normal, workdir, verbose):
    db = os.path.join(workdir, f"{w['name']}-{recorder}.db")
    for f in (db, db + "-lock"):
        if os.path.exists(f):
            os.unlink(f)
    row = {"workload": w["name"], "group": w["group"], "recorder": recorder, "anomaly_file": anomaly,
           "normal_file": normal, "culprit": w["culprit"], "expected_state": w["state"]}
    for f, name in ((normal, NORMAL), (anomaly, ANOMALY)):
        p = run([argusq, "-d", db, "ingest", f, "--name", name], timeout=300)
        if p.returncode != 0:
            row["error"] = f"ingest {os.path.basename(f)}: {last_line(p.stderr)}"
            return row
    for key, against in (("alone", False), ("baseline", True)):
        try:
            d = diagnose(argusq, db, w["victim"], against)
        except (RuntimeError, ValueError) as e:
            row[key] = {"error": str(e)}
            continue
        rank, state = culprit_of(d, w["culprits"])
        row[key] = {"rank": rank, "state": state, "sums": breakdown_sums(d),
                    "period_ns": (d.get("period") or {}).get("ns"), "first": first_of(d),
                    "suspects": [(s.get("thread"), s.get("state"), s.get("ns"), s.get("reason"))
                                 for s in (d.get("suspects") or [])[:5]]}
        if verbose:
            print(f"  {w['name']} {recorder} {key}: period {fmt_ms(row[key]['period_ns'])}", file=sys.stderr)
            for t, st, ns, reason in row[key]["suspects"]:
                print(f"    {t} {st} {fmt_ms(ns)}: {reason}", file=sys.stderr)
    return row


# ---- the table ----

def fmt_ms(ns):
    return "-" if ns is None else f"{ns / 1e6:.1f}ms"


def cells(row):
    if "error" in row:
        return [row["workload"], row["recorder"]] + ["error"] * 6 + [row["error"]]
    out = [row["workload"], row["recorder"], fmt_ms(row.get("alone", {}).get("period_ns"))]
    for key in ("alone", "baseline"):
        r = row.get(key, {})
        out.append("error" if "error" in r else (str(r["rank"]) if r.get("rank") else "-"))
    for key in ("alone", "baseline"):
        r = row.get(key, {})
        if "error" in r:
            out.append("error")
        elif not r.get("rank"):
            out.append("-")
        else:
            out.append(r["state"] + (" ok" if r["state"] == row["expected_state"] else f" (want {row['expected_state']})"))
    sums = [("error" if "error" in row.get(k, {}) else ("yes" if row[k]["sums"] else "no")) for k in ("alone", "baseline")]
    out.append(sums[0] if sums[0] == sums[1] else f"{sums[0]}/{sums[1]}")
    firsts = [row[k].get("first", "error") if "error" not in row.get(k, {}) else "error" for k in ("alone", "baseline")]
    out.append(firsts[0] if firsts[0] == firsts[1] else f"{firsts[0]} / {firsts[1]}")
    return out


HEAD = ["workload", "rec", "period", "rank", "rank+b", "state (alone)", "state (+baseline)", "sums", "first suspect (alone / +baseline)"]


def table(rows, manifest):
    lines = [HEAD] + [cells(r) for r in rows]
    width = [max(len(l[i]) for l in lines) for i in range(len(HEAD) - 1)]
    fmt = lambda l: "  ".join(c.ljust(width[i]) if i < len(width) else c for i, c in enumerate(l)).rstrip()
    print(fmt(HEAD))
    print("  ".join("-" * w for w in width) + "  " + "-" * len(HEAD[-1]))
    group = None
    for r in rows:
        if group is not None and r["group"] != group:
            print()
        group = r["group"]
        print(fmt(cells(r)))
    print()
    print("culprit: the thread a correct diagnosis names first (tests/eval/workloads.tsv); rank: its place among the")
    print("suspects of `diagnose thread` alone, rank+b: against the normal run (- : not among them); state: the")
    print("state it is named in, ok when expected; sums: the breakdown partitions the period (alone/+baseline).")
    for g in sorted({r["group"] for r in rows}, key=lambda g: (g != "old", g)):
        summary(g, [r for r in rows if r["group"] == g])
    summary("all", rows)


def summary(group, rows):
    n = len(rows)
    ok = [r for r in rows if "error" not in r]

    def count(key, pred):
        return sum(1 for r in ok if "error" not in r.get(key, {}) and pred(r, r[key]))
    first = [count(k, lambda r, x: x["rank"] == 1) for k in ("alone", "baseline")]
    top3 = [count(k, lambda r, x: x["rank"] is not None and x["rank"] <= 3) for k in ("alone", "baseline")]
    state = [count(k, lambda r, x: x["rank"] == 1 and x["state"] == r["expected_state"]) for k in ("alone", "baseline")]
    sums = sum(1 for r in ok if all("error" not in r.get(k, {}) and r[k]["sums"] for k in ("alone", "baseline")))
    errors = n - len(ok) + sum(1 for r in ok for k in ("alone", "baseline") if "error" in r.get(k, {}))
    label = {"old": "existing workloads", "new": "new shapes", "all": "all"}.get(group, group)
    print(f"{label} ({n} recordings of {len({r['workload'] for r in rows})} workloads): culprit first "
          f"{first[0]}/{n} alone, {first[1]}/{n} with the baseline; in the first three {top3[0]}/{n}, {top3[1]}/{n}; "
          f"first and in the expected state {state[0]}/{n}, {state[1]}/{n}; breakdown sums to the period {sums}/{n}"
          + (f"; {errors} errors" if errors else ""))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--argusq", default=os.path.join(ROOT, "build", "argusq"))
    ap.add_argument("--from", dest="src", metavar="DIR", help="evaluate the recordings in DIR instead of recording")
    ap.add_argument("--keep", metavar="DIR", help="record into DIR and keep the recordings there")
    ap.add_argument("--only", help="workloads to run, comma-separated names")
    ap.add_argument("--recorders", default=",".join(RECORDERS), help="dat,text (default both)")
    ap.add_argument("--manifest", default=MANIFEST)
    ap.add_argument("--wait-idle", type=float, default=0, metavar="S",
                    help="before each recording, wait up to S seconds for the machine to be idle (it may be shared)")
    ap.add_argument("--json", metavar="FILE", help="also write the rows as JSON into FILE")
    ap.add_argument("-v", "--verbose", action="store_true", help="print the first five suspects of each diagnosis")
    o = ap.parse_args()
    argusq = os.path.abspath(o.argusq)
    if not os.access(argusq, os.X_OK):
        sys.exit(f"eval: {argusq}: not built (make build/argusq)")
    manifest = load_manifest(o.manifest)
    if o.only:
        want = o.only.split(",")
        unknown = [x for x in want if x not in {w["name"] for w in manifest}]
        if unknown:
            print(f"eval: no workload {', '.join(unknown)} in {o.manifest}", file=sys.stderr)
            return 2
        manifest = [w for w in manifest if w["name"] in want]
    recorders = [r for r in o.recorders.split(",") if r]
    if any(r not in RECORDERS for r in recorders):
        print(f"eval: --recorders: dat and/or text, not {o.recorders}", file=sys.stderr)
        return 2
    if not o.src and os.geteuid() != 0:
        print("eval: recording needs root (or evaluate committed recordings: --from tests/traces)", file=sys.stderr)
        return 2
    t0 = time.time()
    work = tempfile.mkdtemp(prefix="argusq-eval-")
    rows = []
    try:
        recdir = os.path.abspath(o.keep) if o.keep else work
        os.makedirs(recdir, exist_ok=True)
        bindir = os.path.join(work, "bin")
        os.makedirs(bindir)
        for w in manifest:
            for rec in recorders:
                if o.src:
                    files = committed_files(o.src, w["name"], rec)
                    if not files:
                        continue
                    anomaly, normal = files
                else:
                    print(f"eval: recording {w['name']} ({rec})", file=sys.stderr)
                    try:
                        exe = compile_workload(w, bindir)
                        normal = record(argusq, w, exe, rec, "normal", recdir, o.wait_idle)
                        anomaly = record(argusq, w, exe, rec, "anomaly", recdir, o.wait_idle)
                    except RuntimeError as e:
                        rows.append({"workload": w["name"], "group": w["group"], "recorder": rec, "error": str(e)})
                        continue
                row = evaluate(argusq, w, rec, anomaly, normal, work, o.verbose)
                if o.src:
                    row["recorder"] = os.path.basename(anomaly)
                rows.append(row)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if not rows:
        print("eval: no recordings to evaluate", file=sys.stderr)
        return 2
    print(f"diagnosis evaluation: {len(rows)} recordings, "
          + (f"from {o.src}" if o.src else f"recorded on {os.uname().nodename} (Linux {os.uname().release})")
          + f", argusq at {commit()}")
    print()
    table(rows, manifest)
    print(f"({time.time() - t0:.0f}s)")
    if o.json:
        with open(o.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
