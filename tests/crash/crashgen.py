#!/usr/bin/env python3
"""Crash-state testing of argusq's archive, in the style of ALICE and
CrashMonkey: what can a power cut in the middle of an ingest leave on
disk, and does argusq cope with every such state?

1. Set-up: a fresh archive BASE with one trace, "kept", and the answers of
   a few queries on it (traces, every event, every node and edge, ui-main's
   longest wait and the slice back from it), all with --json.
2. Record: a copy of BASE takes a second ingest, "new", with small batches
   (ARGUSQ_BATCH_OPS) so that it commits many times, under the LD_PRELOAD
   logger tests/crash/wlog.so, which logs every write (with its bytes),
   size change and sync barrier that the process makes to the archive file.
   Replaying the whole log onto BASE must give the recorded archive byte
   for byte, or the log missed a write and nothing after would mean a thing.
   With --op rules, what is recorded is instead a rule statement and
   `rebuild graph` of "kept" (two writes of a committed trace, each one
   transaction), and every answer of a state may be the one from before or
   the one from after them.
3. Crash states: a cut in the log is the moment of the crash.  What is on
   disk then is the durable image (BASE plus every write made durable by a
   barrier before the cut) plus any of the page writes still pending in
   the page cache: each 4 KiB page independently holds its durable
   content or one of the versions it was given since (page writeback
   writes whole pages, at any time, in any order).  A barrier
   (fsync, fdatasync, sync, msync MS_SYNC) makes every pending write
   durable; a write on an O_DSYNC fd (LMDB's meta page) makes its own pages
   durable, nothing else.  Cuts: just before and after every barrier and
   every commit (a write to the two meta pages), and random cuts between.
   Variants of a cut: nothing pending persisted, everything, only the
   meta pages, everything but the meta pages, random subsets, the file
   extended to its full size without the data, and the file left at its
   durable size (no extension persisted).
4. Check every state with a fresh process per question: the archive opens,
   "kept" is listed and every recorded answer is identical, "new" is absent
   or whole (its catalog entry and a query equal the full ingest's), no
   process dies of a signal (an LMDB assertion aborts), hangs, or reports a
   sanitizer error, and exit codes are 0 or 1 with a message; then an ingest
   of a small trace into the state succeeds, and "kept" still answers the
   same.  The optimized argusq checks most states, the sanitizer build a
   sample (--san, --san-every).

The summary line says how many states were checked and how many were
corrupt, by kind; the exit status is 1 if any was, 2 if the harness could
not run.  Everything is deterministic given --seed.

The recorded ingest always runs the binary given by --argusq without
sanitizers: the writes come from liblmdb, which is the same library under
either build, and ASan insists on being first in the library list, where
the logger must be.
"""
import argparse
import concurrent.futures
import hashlib
import json
import os
import random
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

PAGE = 4096
META_PAGES = 2  # LMDB's two meta pages, at offsets 0 and PAGE
MAGIC = b"argusq-wlog-v1\n\0"
HDR = struct.Struct("<BBHiqq")
WL_DSYNC, WL_SYNC = 1, 2
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
VARIANTS = ["none", "all", "meta", "data", "random1", "random2", "random3", "extended", "truncated"]


def say(msg):
    print(f"crashgen: {msg}", flush=True)


class HarnessError(Exception):
    """The harness could not run: not a verdict on argusq."""


# ---------------------------------------------------------------- the log

class Log:
    """The logger's records, writes cut into page pieces.

    A piece is one write's bytes within one 4 KiB page; pieces of a page
    are its versions.  Records keep their order; a record's pieces are
    pieces[first:first + count]."""

    def __init__(self, path):
        self.path = path
        self.recs = []  # (op, flags, off, len, first_piece, n_pieces)
        self.p_page, self.p_off, self.p_len, self.p_pos = [], [], [], []
        with open(path, "rb") as f:
            if f.read(len(MAGIC)) != MAGIC:
                raise HarnessError(f"{path}: not a write log (was the logger preloaded?)")
            pos = len(MAGIC)
            size = os.fstat(f.fileno()).st_size
            while pos < size:
                f.seek(pos)
                h = f.read(HDR.size)
                if len(h) < HDR.size:
                    raise HarnessError(f"{path}: truncated record at byte {pos}")
                op, flags, _, _fd, off, ln = HDR.unpack(h)
                op = chr(op)
                pos += HDR.size
                first = len(self.p_page)
                if op == "W":
                    data_pos, o, end = pos, off, off + ln
                    while o < end:
                        n = min(end, (o // PAGE + 1) * PAGE) - o
                        self.p_page.append(o // PAGE)
                        self.p_off.append(o)
                        self.p_len.append(n)
                        self.p_pos.append(data_pos + (o - off))
                        o += n
                    pos += ln
                elif op == "X":
                    raise HarnessError("the archive was mapped shared and writable (MDB_WRITEMAP?): "
                                       "its writes cannot be logged")
                elif op == "A" and flags not in (0, 1):  # 1: FALLOC_FL_KEEP_SIZE
                    raise HarnessError(f"fallocate mode {flags} is not modelled")
                self.recs.append((op, flags, off, ln, first, len(self.p_page) - first))
        self.fd = os.open(path, os.O_RDONLY)

    def data(self, piece):
        return os.pread(self.fd, self.p_len[piece], self.p_pos[piece])

    def is_meta_write(self, i):
        op, _, off, ln, _, _ = self.recs[i]
        return op == "W" and off < META_PAGES * PAGE and ln < PAGE


# ------------------------------------------------------- the disk model

class Disk:
    """What is durable and what is pending, record by record.

    With `image` (a file holding the durable content) it writes; without,
    it only keeps the bookkeeping (the planning pass).  Pending items, in
    order: a piece index (>= 0), or a size change -1 - k (sizes[k])."""

    def __init__(self, log, base_size, image=None, drop_batch_syncs=False):
        self.log, self.image = log, image
        self.fd = os.open(image, os.O_RDWR) if image else None
        self.dsize = self.lsize = base_size  # durable and logical size
        self.pending, self.sizes = [], []
        self.gen = 0  # bumps whenever something becomes durable
        self.drop = drop_batch_syncs
        # pending pieces on the meta pages, and pending size changes: with
        # len(pending), what identifies a state without listing it (between
        # two flushes pending only grows)
        self.n_meta = self.n_size = 0

    def _durable_piece(self, p):
        if self.fd is not None:
            os.pwrite(self.fd, self.log.data(p), self.log.p_off[p])
        self.dsize = max(self.dsize, self.log.p_off[p] + self.log.p_len[p])

    def _durable_size(self, size):
        if self.fd is not None:
            os.ftruncate(self.fd, size)
        self.dsize = size

    def _flush(self, pages=None):
        """Everything pending (pages None), or what is pending on `pages`
        (a range sync: whole pages, since the page cache writes pages)."""
        keep = []
        for it in self.pending:
            if it < 0:
                if pages is None:
                    self._durable_size(self.sizes[-1 - it])
                else:
                    keep.append(it)
            elif pages is None or self.log.p_page[it] in pages:
                self._durable_piece(it)
            else:
                keep.append(it)
        self.pending = keep
        self.n_size = sum(1 for it in keep if it < 0)
        self.n_meta = sum(1 for it in keep if it >= 0 and self.log.p_page[it] < META_PAGES)
        self.gen += 1

    def _is_batch_sync(self, i):
        """A sync that the next write does not itself make durable: a batch
        commit's fdatasync (the final commit writes its meta on the O_DSYNC
        fd).  --drop-batch-syncs removes these: the log then stands for
        batch commits under MDB_NOSYNC, whose writes are the same but for
        the fdatasync."""
        for j in range(i + 1, len(self.log.recs)):
            op, flags = self.log.recs[j][:2]
            if op == "W":
                return not flags & WL_DSYNC
        return False

    def step(self, i):
        op, flags, off, ln, first, n = self.log.recs[i]
        if op == "W":
            pieces = range(first, first + n)
            self.lsize = max(self.lsize, off + ln)
            if flags & WL_DSYNC:
                self._flush({self.log.p_page[p] for p in pieces})
                for p in pieces:
                    self._durable_piece(p)
            else:
                self.pending.extend(pieces)
                self.n_meta += sum(1 for p in pieces if self.log.p_page[p] < META_PAGES)
        elif op in "FDS":
            if not (self.drop and op in "FD" and self._is_batch_sync(i)):
                self._flush()
        elif op == "M" and flags & WL_SYNC:
            self._flush(set(range(off // PAGE, (off + ln + PAGE - 1) // PAGE)))
        elif op in "TA":
            size = off if op == "T" else max(self.lsize, off + ln)
            if op == "A" and flags & 1:  # KEEP_SIZE: no size change
                return
            self.lsize = size
            self.sizes.append(size)
            self.pending.append(-len(self.sizes))
            self.n_size += 1
        # 'R' (sync_file_range) is no barrier: no metadata, no drive cache flush

    # ------------------------------------------------ crash states at this cut

    def choose(self, variant, rng):
        """The pending items a crash keeps, in order, and the file size.

        Per page, a version: the first j of its pending pieces (j = 0: the
        durable content).  Size changes are kept in order."""
        per_page = {}
        for it in self.pending:
            if it >= 0:
                per_page.setdefault(self.log.p_page[it], []).append(it)
        pages = sorted(per_page)
        take = {}
        if variant == "all":
            take = {pg: len(per_page[pg]) for pg in pages}
        elif variant == "meta":
            take = {pg: len(per_page[pg]) for pg in pages if pg < META_PAGES}
        elif variant == "data":
            take = {pg: len(per_page[pg]) for pg in pages if pg >= META_PAGES}
        elif variant != "none":
            p = rng.choice([0.1, 0.5, 0.9])
            for pg in pages:
                if variant == "truncated" and (pg + 1) * PAGE > self.dsize:
                    continue
                if rng.random() < p:
                    take[pg] = rng.randint(1, len(per_page[pg]))
        keep = set()
        for pg, j in take.items():
            keep.update(per_page[pg][:j])
        items = [it for it in self.pending if it < 0 or it in keep]
        size = self.dsize
        for it in items:
            if it < 0:
                size = self.sizes[-1 - it]
            else:
                size = max(size, self.log.p_off[it] + self.log.p_len[it])
        if variant == "extended":
            size = max(size, self.lsize)
        elif variant == "truncated":
            size = self.dsize
        return items, size, len(per_page), len(take)

    def identity(self, cut, variant):
        """What tells this state apart from the states at other cuts,
        without choosing it: pending only grows between two flushes, so a
        variant that keeps a fixed part of it (none, all, meta, data) is
        named by the flush and the size of that part.  Random variants are
        taken as distinct, except where nothing is pending (then they are
        "none")."""
        n_data = len(self.pending) - self.n_meta - self.n_size
        if variant == "none" or (not n_data and not self.n_meta and variant != "extended"):
            return ("none", self.gen, self.n_size)
        if variant == "all":
            return ("all", self.gen, len(self.pending))
        if variant == "meta":
            return ("meta", self.gen, self.n_meta, self.n_size)
        if variant == "data":
            return ("data", self.gen, n_data, self.n_size)
        return (variant, cut)

    def build(self, path, items, size):
        shutil.copyfile(self.image, path)
        log = self.log
        fd = os.open(path, os.O_RDWR)
        try:
            k = 0
            while k < len(items):
                it = items[k]
                if it < 0:
                    os.ftruncate(fd, self.sizes[-1 - it])
                    k += 1
                    continue
                # consecutive pieces of one write: one copy
                end = k + 1
                while (end < len(items) and items[end] == items[end - 1] + 1
                       and log.p_pos[items[end]] == log.p_pos[items[end - 1]] + log.p_len[items[end - 1]]
                       and log.p_off[items[end]] == log.p_off[items[end - 1]] + log.p_len[items[end - 1]]):
                    end += 1
                last = items[end - 1]
                n = log.p_off[last] + log.p_len[last] - log.p_off[it]
                os.pwrite(fd, os.pread(log.fd, n, log.p_pos[it]), log.p_off[it])
                k = end
            os.ftruncate(fd, size)
        finally:
            os.close(fd)


def variant_rng(seed, cut, variant):
    # a string seed is hashed the same way on every run (no PYTHONHASHSEED)
    return random.Random(f"{seed}:{cut}:{variant}")


def plan(log, base_size, args):
    """The crash states to check: (cut, variant), at most args.states,
    without duplicates, sorted by cut."""
    n = len(log.recs)
    rng = random.Random(args.seed)
    structural = {0, n}
    for i, (op, flags, *_rest) in enumerate(log.recs):
        barrier = op in "FDS" or (op == "M" and flags & WL_SYNC) or (op == "W" and flags & WL_DSYNC)
        if barrier or log.is_meta_write(i):
            structural.update((i, i + 1))
    between = {rng.randint(0, n) for _ in range(max(8, len(structural) // 2))}
    cuts = sorted(structural | between)
    # always: the archive as it was, and as a finished ingest leaves it
    must = [(0, "none"), (n, "all")]
    disk = Disk(log, base_size, drop_batch_syncs=args.drop_batch_syncs)
    seen, cands, i = set(), [], 0
    for cut in cuts:
        while i < cut:
            disk.step(i)
            i += 1
        for v in VARIANTS:
            sig = disk.identity(cut, v)
            if sig not in seen and (cut, v) not in must:
                seen.add(sig)
                cands.append((cut, v))
    rest = cands
    cands = must + cands
    if len(must) + len(rest) > args.states:
        rest = rng.sample(rest, max(0, args.states - len(must)))
    return sorted(must + rest, key=lambda c: (c[0], VARIANTS.index(c[1]))), len(cands)


# ------------------------------------------------------------- running argusq

def run(binary, db, args, cwd, timeout, env, stdin=None):
    """One argusq process: (returncode or 'timeout', stdout, stderr)."""
    try:
        p = subprocess.run([binary, "-d", db] + args, cwd=cwd, env=env, capture_output=True, text=True,
                           errors="replace", timeout=timeout, input=stdin)
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return "timeout", out, ""


def hard_failure(rc, err):
    """A failure that is never acceptable, whatever the state: a signal
    (an LMDB assertion is an abort; argusq turns SIGSEGV and SIGBUS into
    exit status 3), a hang, a sanitizer report, an exit status other than
    argusq's 0, 1 and 2, or a failure that says nothing."""
    if rc == "timeout":
        return "hang"
    if "Assertion" in err and "failed" in err:
        return "lmdb-assertion"
    if rc < 0:
        try:
            return f"crash ({signal.Signals(-rc).name})"
        except ValueError:
            return f"crash (signal {-rc})"
    if "runtime error" in err or "AddressSanitizer" in err or "LeakSanitizer" in err:
        return "sanitizer"
    if rc == 3 and "a page could not be read" in err:  # cli/signals.c's SIGSEGV/SIGBUS handler
        return "crash (fault caught, exit 3)"
    # 2 is argusq's status for an archive it cannot open (I/O error): a
    # failure the checks below judge, not a crash
    if rc not in (0, 1, 2):
        return f"exit status {rc}"
    if rc != 0 and not err.strip():
        return f"exit {rc} without a message"
    return None


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def clean_env(batch_ops):
    env = {k: v for k, v in os.environ.items()
           if k not in ("ARGUSQ_DB", "LD_PRELOAD", "ARGUSQ_WLOG_FILE", "ARGUSQ_WLOG_OUT")}
    env["ARGUSQ_BATCH_OPS"] = str(batch_ops)
    return env


class Questions:
    """The recorded answers, and the asking of them on a state."""

    def __init__(self, binary, base, cwd, env, timeout):
        self.timeout, self.env = timeout, env
        rc, out, err = run(binary, base, ["--json", "--trace", "kept",
                                          'find nodes where thread = "ui-main" order by blocked desc limit 1'],
                           cwd, timeout, env)
        nodes = json.loads(out)["nodes"] if rc == 0 else []
        if not nodes:
            raise HarnessError(f"base trace: no node of thread ui-main ({err.strip()})")
        node = nodes[0]["id"]
        # (name, argusq arguments, compare the whole output or a digest)
        self.kept = [
            ("find events", ["--json", "--trace", "kept", "find events"], True),
            ("find nodes", ["--json", "--trace", "kept", "find nodes"], True),
            ("find edges", ["--json", "--trace", "kept", "find edges"], True),
            ("ui-main's longest wait", ["--json", "--trace", "kept",
                                        'find nodes where thread = "ui-main" order by blocked desc limit 1'], False),
            (f"slice back from node {node}", ["--json", "--trace", "kept", f"slice back from node {node} depth 6"],
             False),
        ]
        self.new_q = ("find nodes of new", ["--json", "--trace", "new", "find nodes order by blocked desc limit 5"])
        self.answers = {}
        traces = self.traces(binary, base, cwd)
        if traces is None or "kept" not in traces:
            raise HarnessError("base archive: no trace kept")
        self.kept_entry = traces["kept"]
        for name, a, dig in self.kept:
            rc, out, err = run(binary, base, a, cwd, timeout, env)
            if rc != 0:
                raise HarnessError(f"base archive: {name}: {err.strip()}")
            self.answers[name] = digest(out) if dig else out
        self.new_entry = self.new_answer = None
        # --op rules: what kept answers once the recorded statements are
        # through; a state may show either snapshot, each answer whole
        self.after_entry, self.after = None, {}
        self.ui_main_tid = nodes[0]["tid"]

    def record_after(self, binary, db, cwd):
        """--op rules: kept's answers after the recorded statements."""
        traces = self.traces(binary, db, cwd)
        if traces is None or set(traces) != {"kept"}:
            raise HarnessError("recorded archive: kept missing or another trace appeared")
        self.after_entry = traces["kept"]
        for name, a, dig in self.kept:
            rc, out, err = run(binary, db, a, cwd, self.timeout, self.env)
            if rc != 0:
                raise HarnessError(f"recorded archive: {name}: {err.strip()}")
            self.after[name] = digest(out) if dig else out
        if self.after == self.answers:
            raise HarnessError("recorded statements changed nothing kept answers: no test")

    def same_kept(self, name, out, dig):
        got = digest(out) if dig else out
        return got == self.answers[name] or (name in self.after and got == self.after[name])

    def traces(self, binary, db, cwd):
        rc, out, _ = run(binary, db, ["--json", "traces"], cwd, self.timeout, self.env)
        if rc != 0:
            return None
        return {t["name"]: t for t in json.loads(out)["traces"]}

    def record_new(self, binary, db, cwd):
        traces = self.traces(binary, db, cwd)
        if traces is None or "new" not in traces or traces.get("kept") != self.kept_entry:
            raise HarnessError("recorded archive: kept changed or new missing")
        self.new_entry = traces["new"]
        rc, out, err = run(binary, db, self.new_q[1], cwd, self.timeout, self.env)
        if rc != 0:
            raise HarnessError(f"recorded archive: {self.new_q[0]}: {err.strip()}")
        self.new_answer = out
        for name, a, dig in self.kept:
            rc, out, _ = run(binary, db, a, cwd, self.timeout, self.env)
            if rc != 0 or (digest(out) if dig else out) != self.answers[name]:
                raise HarnessError(f"recorded archive: kept answers {name} differently")

    def check(self, binary, db, cwd, small):
        """The problems of one state, most telling first ([] = consistent),
        and whether the new trace was listed in it."""
        problems = []

        def ask(what, a, timeout=None):
            rc, out, err = run(binary, db, a, cwd, timeout or self.timeout, self.env)
            hard = hard_failure(rc, err)
            if hard:
                line = err.strip().splitlines()
                problems.append((hard, f"{what}: {line[-1] if line else rc}"))
            return rc, out, err

        def kept_and_new(when):
            rc, out, err = ask(f"traces{when}", ["--json", "traces"])
            if rc != 0:
                problems.append(("open-failed" if not when else "open-failed-after-ingest",
                                 f"traces{when}: {err.strip()[:200]}"))
                return None
            try:
                traces = {t["name"]: t for t in json.loads(out)["traces"]}
            except (ValueError, KeyError, TypeError):
                problems.append(("bad-output", f"traces{when}: {out[:200]}"))
                return None
            if "kept" not in traces:
                problems.append(("kept-missing", f"traces{when}: {sorted(traces)}"))
            elif traces["kept"] != self.kept_entry and traces["kept"] != self.after_entry:
                problems.append(("kept-differs", f"traces{when}: {traces['kept']}"))
            for name, a, dig in self.kept:
                rc, out, err = ask(name + when, a)
                if rc != 0:
                    problems.append(("kept-query-failed", f"{name}{when}: {err.strip()[:200]}"))
                elif not self.same_kept(name, out, dig):
                    problems.append(("kept-differs", f"{name}{when}: a different answer"))
            if "new" in traces:
                if traces["new"] != self.new_entry:
                    problems.append(("new-partial", f"traces{when}: new is {traces['new']}"))
                else:
                    rc, out, err = ask(self.new_q[0] + when, self.new_q[1])
                    if rc != 0 or out != self.new_answer:
                        problems.append(("new-partial", f"{self.new_q[0]}{when}: {err.strip()[:200] or 'differs'}"))
            if set(traces) - {"kept", "new"} - ({"after"} if when else set()):
                problems.append(("unknown-trace", f"traces{when}: {sorted(traces)}"))
            return traces

        first = kept_and_new("")
        rc, out, err = ask("ingest after", ["ingest", small, "--name", "after", "--json"], self.timeout * 4)
        if rc != 0:
            problems.append(("ingest-failed", f"ingest: {err.strip()[:200]}"))
        else:
            traces = kept_and_new(" after an ingest")
            if traces is not None and "after" not in traces:
                problems.append(("ingest-lost", "the trace just ingested is not listed"))
        order = ["lmdb-assertion", "crash", "sanitizer", "hang"]
        problems.sort(key=lambda p: next((k for k, o in enumerate(order) if p[0].startswith(o)), len(order)))
        return problems, bool(first and "new" in first)


# ------------------------------------------------------------------ main

def describe(log, cut, commits_before):
    n = len(log.recs)
    if cut == 0:
        return "before the ingest's first write"
    if cut == n:
        return "after the ingest's last write"
    op = log.recs[cut][0]
    nxt = {"F": "an fsync", "D": "an fdatasync", "S": "a sync", "M": "an msync"}.get(op)
    if nxt:
        return f"just before {nxt} (commit {commits_before[cut] + 1})"
    if log.is_meta_write(cut):
        return f"just before the meta write of commit {commits_before[cut] + 1}"
    if log.is_meta_write(cut - 1):
        return f"just after the meta write of commit {commits_before[cut]}"
    if log.recs[cut - 1][0] in "FDSM":
        return f"just after a sync (commit {commits_before[cut] + 1})"
    return f"during commit {commits_before[cut] + 1}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--argusq", default=os.path.join(ROOT, "build", "argusq"),
                    help="optimized argusq: records the ingest and checks the states")
    ap.add_argument("--san", help="sanitizer build of argusq, to check a sample of the states")
    ap.add_argument("--san-every", type=int, default=20, help="every Nth state is checked with --san (20)")
    ap.add_argument("--wlog", default=os.path.join(ROOT, "build", "crash", "wlog.so"), help="the logger (make)")
    ap.add_argument("--trace", default=os.path.join(ROOT, "..", "shared", "traces", "pipeline.dat"),
                    help="the trace whose ingest is crashed (default ../shared/traces/pipeline.dat)")
    ap.add_argument("--base-trace", default=os.path.join(ROOT, "tests", "traces", "lockchain-normal.txt"),
                    help="the trace already in the archive, kept (needs a thread ui-main)")
    ap.add_argument("--small-trace", default=os.path.join(ROOT, "tests", "traces", "pipechain-normal.txt"),
                    help="ingested into every crash state afterwards")
    ap.add_argument("--batch-ops", type=int, default=2000, help="ARGUSQ_BATCH_OPS of the recorded ingest (2000)")
    ap.add_argument("--op", choices=("ingest", "rules"), default="ingest",
                    help="what is recorded: an ingest of --trace (new), or a rule statement and `rebuild graph` "
                         "of the kept trace (each state must answer as before or as after)")
    ap.add_argument("--states", type=int, default=3000, help="at most this many crash states (3000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--timeout", type=float, default=30, help="seconds per query (ingests get 4x)")
    ap.add_argument("--drop-batch-syncs", action="store_true",
                    help="model batch commits without their fdatasync (MDB_NOSYNC in effect): "
                         "a self-test, which must find corrupt states")
    ap.add_argument("--keep", help="copy up to 5 corrupt states here, with what was wrong")
    ap.add_argument("--work", help="work directory (default: a new temporary one, removed at the end)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every corrupt state")
    args = ap.parse_args()
    try:
        return crashgen(args)
    except HarnessError as e:
        say(f"error: {e}")
        return 2


def crashgen(args):
    t0 = time.monotonic()
    for f in (args.argusq, args.wlog, args.trace, args.base_trace, args.small_trace) + ((args.san,) if args.san else ()):
        if not os.path.exists(f):
            raise HarnessError(f"{f}: missing" + (" (make build/crash/wlog.so)" if f == args.wlog else ""))
    argusq, san = os.path.abspath(args.argusq), args.san and os.path.abspath(args.san)
    small = os.path.abspath(args.small_trace)
    work = args.work or tempfile.mkdtemp(prefix="argusq-crash-")
    os.makedirs(work, exist_ok=True)
    try:
        return crashgen_in(args, work, argusq, san, small, t0)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)


def crashgen_in(args, work, argusq, san, small, t0):
    env = clean_env(args.batch_ops)
    base, rec, logp = (os.path.join(work, n) for n in ("base.db", "rec.db", "wlog.bin"))
    for f in (base, base + "-lock", rec, rec + "-lock"):
        if os.path.exists(f):
            os.remove(f)
    # 1. the archive before the crash, and what it answers
    rc, _, err = run(argusq, base, ["ingest", os.path.abspath(args.base_trace), "--name", "kept", "--json"],
                     work, args.timeout * 4, env)
    if rc != 0:
        raise HarnessError(f"base ingest failed: {err.strip()}")
    q = Questions(argusq, base, work, env, args.timeout)
    # 2. the ingest, logged
    shutil.copyfile(base, rec)
    renv = dict(env, LD_PRELOAD=os.path.abspath(args.wlog), ARGUSQ_WLOG_FILE=rec, ARGUSQ_WLOG_OUT=logp)
    t1 = time.monotonic()
    if args.op == "rules":
        # a rule statement and a rebuild of kept's graph under it: two
        # writes of a committed trace, each one transaction
        stmts = (f'rule ignore wakeup where tid = {q.ui_main_tid} in trace "kept"; '
                 f'rebuild graph in trace "kept";')
        rc, out, err = run(argusq, rec, ["--json", "-f", "-"], work, max(600, args.timeout * 20), renv,
                           stdin=stmts)
        what = f"rule statement and rebuild graph of kept ({stmts})"
    else:
        rc, out, err = run(argusq, rec, ["ingest", os.path.abspath(args.trace), "--name", "new", "--json"],
                           work, max(600, args.timeout * 20), renv)
        what = None
    if rc != 0:
        raise HarnessError(f"recorded {args.op} failed ({rc}): {err.strip()}")
    rec_secs = time.monotonic() - t1
    if args.op == "rules":
        q.record_after(argusq, rec, work)
    else:
        events = json.loads(out)["events"]
        q.record_new(argusq, rec, work)
        what = f"ingest of {os.path.basename(args.trace)} ({events} events, ARGUSQ_BATCH_OPS={args.batch_ops})"
    log = Log(logp)
    base_size = os.path.getsize(base)
    # the log must be the whole story: replayed onto BASE it is the archive
    replay = os.path.join(work, "replay.db")
    shutil.copyfile(base, replay)
    whole = Disk(log, base_size, image=replay)
    for i in range(len(log.recs)):
        whole.step(i)
    whole._flush()
    os.close(whole.fd)
    if not same_file(replay, rec):
        raise HarnessError("replaying the write log does not give the recorded archive: the logger missed a write")
    os.remove(replay)
    ops = [r[0] for r in log.recs]
    n_meta = sum(log.is_meta_write(i) for i in range(len(log.recs)))
    n_bar = sum(op in "FDS" for op in ops) + sum(1 for r in log.recs if r[0] == "W" and r[1] & WL_DSYNC)
    written = sum(r[3] for r in log.recs if r[0] == "W")
    say(f"recorded: {what} "
        f"in {rec_secs:.1f} s: {len(log.recs)} log records, {n_meta} commits, {n_bar} barriers "
        f"({ops.count('D')} fdatasync, {ops.count('F')} fsync, "
        f"{sum(1 for r in log.recs if r[0] == 'W' and r[1] & WL_DSYNC)} O_DSYNC writes), "
        f"{written / 2**20:.1f} MiB written; the log replays to the archive exactly")
    if args.drop_batch_syncs:
        say("model: batch commits without their fdatasync (--drop-batch-syncs)")

    # 3. which states
    states, n_cands = plan(log, base_size, args)
    commits_before, c = [], 0
    for i in range(len(log.recs) + 1):
        commits_before.append(c)
        if i < len(log.recs) and log.is_meta_write(i):
            c += 1
    say(f"{len(states)} crash states of {n_cands} distinct ones at {len({s[0] for s in states})} cuts "
        f"(seed {args.seed}), checked {args.jobs} at a time")

    # 4. build them in log order (the durable image only moves forward)
    # and check them in parallel
    image = os.path.join(work, "image.db")
    shutil.copyfile(base, image)
    disk = Disk(log, base_size, image=image, drop_batch_syncs=args.drop_batch_syncs)
    kinds, corrupt, kept_dirs = {}, [], 0
    done = n_san = n_new = 0
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)
    inflight = []
    report_every = max(1, len(states) // 10)

    def finish(fut):
        nonlocal done, kept_dirs, n_new
        k, desc, sdir, (problems, new_listed) = fut.result()
        done += 1
        n_new += new_listed
        if problems:
            corrupt.append((k, desc, problems))
            kind = problems[0][0]
            kinds[kind] = kinds.get(kind, 0) + 1
            if args.verbose or len(corrupt) <= 10:
                say(f"CORRUPT state {k} ({desc}): {problems[0][0]}: {problems[0][1]}"
                    + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""))
            if args.keep and kept_dirs < 5:
                os.makedirs(args.keep, exist_ok=True)
                dest = os.path.join(args.keep, f"state{k}")
                shutil.rmtree(dest, ignore_errors=True)
                shutil.copytree(sdir + ".pristine" if os.path.exists(sdir + ".pristine") else sdir, dest)
                with open(os.path.join(dest, "problems.txt"), "w") as f:
                    f.write(desc + "\n" + "\n".join(f"{a}: {b}" for a, b in problems) + "\n")
                kept_dirs += 1
        shutil.rmtree(sdir, ignore_errors=True)
        shutil.rmtree(sdir + ".pristine", ignore_errors=True)
        if done % report_every == 0 and done < len(states):
            say(f"{done}/{len(states)} states checked, {len(corrupt)} corrupt ({time.monotonic() - t0:.0f} s)")

    def check(k, desc, sdir, binary):
        return k, desc, sdir, q.check(binary, os.path.join(sdir, "argus.db"), sdir, small)

    i = 0
    for k, (cut, variant) in enumerate(states):
        while i < cut:
            disk.step(i)
            i += 1
        items, size, npages, ntaken = disk.choose(variant, variant_rng(args.seed, cut, variant))
        sdir = os.path.join(work, f"s{k}")
        os.makedirs(sdir, exist_ok=True)
        disk.build(os.path.join(sdir, "argus.db"), items, size)
        if args.keep:  # the checks change the state: keep it as it was built
            shutil.copytree(sdir, sdir + ".pristine")
        binary = san if san and k % args.san_every == args.san_every // 2 else argusq
        n_san += binary == san
        desc = (f"cut {cut}/{len(log.recs)}, {describe(log, cut, commits_before)}; {variant}: "
                f"{ntaken} of {npages} pending pages, size {size}" + (", sanitizer build" if binary == san else ""))
        inflight.append(pool.submit(check, k, desc, sdir, binary))
        while len(inflight) >= 2 * args.jobs:
            finish(inflight.pop(0))
    for fut in inflight:
        finish(fut)
    pool.shutdown()
    os.close(disk.fd)

    secs = time.monotonic() - t0
    checked = f"{len(states)} states checked ({len(states) - n_san} with {os.path.relpath(argusq)}"
    checked += f", {n_san} with {os.path.relpath(san)}" if san else ""
    checked += f"; new listed in {n_new})"
    if corrupt:
        by_kind = ", ".join(f"{n} {k}" for k, n in sorted(kinds.items(), key=lambda x: -x[1]))
        say(f"{checked}: {len(corrupt)} corrupt ({by_kind}) in {secs:.0f} s")
        return 1
    say(f"{checked}: 0 corrupt in {secs:.0f} s")
    return 0


def same_file(a, b):
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 20), fb.read(1 << 20)
            if x != y:
                return False
            if not x:
                return True


if __name__ == "__main__":
    sys.exit(main())
