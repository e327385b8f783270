#!/usr/bin/env python3
"""Summarize the jitterpipe / jitterpool recordings of this folder from the
trace text alone (no argusq): per frame, the jittery sleep that every run
has, ui-main's wait for the result, and, for frame 3 of an anomaly run, the
evidence of the injected hold (the culprit's run holding the lock, the
lock waiter's wait, both with timestamps).  Then, over the normal runs,
min / median / max of the jittery sleep, of ui-main's wait and of the
injected culprit's part (the longest lock wait it ended, per run).

    python3 tests/traces/dist/summarize.py [FILE.trace ...]   # default: every *.trace here

The workload is told by its threads (pipeline: jitterpipe, poolw:
jitterpool).  Per thread (by pid; names from task_rename, the last one
wins) it reads:
  - system calls: raw_syscalls sys_enter / sys_exit, NR 230 is
    clock_nanosleep (x86_64): ui-main's 30 ms frame sleeps, pipeline's and
    the pool workers' jittery sleeps;
  - blocked intervals: sched_switch with prev_state S or D (out) to the
    next sched_switch in (in); the sched_waking in between gives the waker
    (the current task of that line, or "irq" when the line's flags say
    hardirq/softirq context: a timer);
  - on-cpu intervals: sched_switch in to sched_switch out.
On this machine most switches from the idle task have no sched_switch
event (tests/traces/README.md): a task is taken to be on cpu from its
first event of its own (a line whose current task it is) after it was
switched out, when that comes before a sched_switch to it.
Frame i of ui-main is from the end of its i-th clock_nanosleep to the start
of the next (or the end of the process).
"""
import glob
import os
import re
import statistics
import sys

LINE = re.compile(r"^\s*(.*?)-(\d+)\s+\(\s*(\S+)\)\s+\[(\d+)\]\s+(\S+)\s+(\d+\.\d+):\s+(\w+):\s?(.*)$")
KV = re.compile(r"(\w+)=(\S+)")
NANOSLEEP = (230, 35)


class Trace:
    def __init__(self, path):
        self.path = path
        self.names = {}            # pid -> last name
        self.tgid = {}             # pid -> tgid
        self.sys = {}              # pid -> [(nr, enter, exit)]
        self.blocked = {}          # pid -> [(out, waking, waker, in, state)]
        self.oncpu = {}            # pid -> [(in, out, prev_state)]
        self.wakes = []            # (t, waker_pid or None, wakee_pid, ctx)
        self.end = 0.0
        open_sys, out_at, in_at, waking = {}, {}, {}, {}
        with open(path) as f:
            for line in f:
                m = LINE.match(line)
                if not m:
                    continue
                comm, pid, tgid, cpu, flags, t, ev, rest = m.groups()
                pid, t = int(pid), float(t)
                self.end = t
                if tgid.isdigit():
                    self.tgid[pid] = int(tgid)
                if pid and pid in out_at:      # on cpu without a sched_switch in (see below)
                    o, st = out_at.pop(pid)
                    wt, wk = waking.pop(pid, (None, None))
                    self.blocked.setdefault(pid, []).append((o, wt, wk, t, st))
                    in_at.setdefault(pid, t)
                if ev == "sys_enter":
                    open_sys[pid] = (int(rest.split()[1]), t)
                elif ev == "sys_exit":
                    nr = int(rest.split()[1])
                    if pid in open_sys and open_sys[pid][0] == nr:
                        self.sys.setdefault(pid, []).append((nr, open_sys.pop(pid)[1], t))
                elif ev == "task_rename":
                    kv = dict(KV.findall(rest))
                    self.names[int(kv["pid"])] = kv["newcomm"]
                elif ev == "sched_waking":
                    kv = dict(KV.findall(rest))
                    wakee = int(kv["pid"])
                    irq = len(flags) > 2 and flags[2] in "hHs"
                    waker = None if irq or pid == 0 else pid
                    self.wakes.append((t, waker, wakee, "irq" if irq else ""))
                    if wakee in out_at and wakee not in waking:
                        waking[wakee] = (t, waker)
                elif ev == "sched_switch":
                    kv = dict(KV.findall(rest))
                    prev, nxt, st = int(kv["prev_pid"]), int(kv["next_pid"]), kv["prev_state"]
                    if prev in in_at:
                        self.oncpu.setdefault(prev, []).append((in_at.pop(prev), t, st))
                    if prev and st[0] in "SD":
                        out_at[prev] = (t, st)
                        waking.pop(prev, None)
                    if nxt:
                        in_at[nxt] = t
                        if nxt in out_at:
                            o, s = out_at.pop(nxt)
                            wt, wk = waking.pop(nxt, (None, None))
                            self.blocked.setdefault(nxt, []).append((o, wt, wk, t, s))

    def name(self, pid):
        if pid is None:
            return "irq"
        return self.names.get(pid, "<idle>" if pid == 0 else f"pid{pid}")

    def pids(self, name):
        return sorted(p for p, n in self.names.items() if n == name)

    def sleeps(self, pid):
        return [(a, b) for nr, a, b in self.sys.get(pid, []) if nr in NANOSLEEP]


def ms(x):
    return f"{x * 1000:.2f}"


def frames(tr):
    ui = [p for p in tr.pids("ui-main") if tr.tgid.get(p) == p]
    ui = ui[-1]
    sl = tr.sleeps(ui)[:6]
    ends = [b for a, b in sl]
    nexts = [a for a, b in sl[1:]] + [tr.end]
    return ui, list(zip(ends, nexts))


def longest_block(tr, pid, lo, hi):
    best = None
    for o, wt, wk, i, s in tr.blocked.get(pid, []):
        if o >= lo and i <= hi and (best is None or i - o > best[3] - best[0]):
            best = (o, wt, wk, i, s)
    return best


def in_window(tr, pids, lo, hi):
    out = []
    for p in pids:
        out += [(a, b, p) for a, b in tr.sleeps(p) if lo <= a <= hi]
    return sorted(out)


def summarize(path):
    tr = Trace(path)
    shape = "jitterpipe" if tr.pids("pipeline") else "jitterpool" if tr.pids("poolw") else None
    anomaly = "anomaly" in os.path.basename(path)
    if not shape:
        return None
    ui, fr = frames(tr)
    names = sorted(set(tr.names[p] for p in tr.names if tr.tgid.get(p) == ui))
    res = {"file": os.path.basename(path), "shape": shape, "threads": names, "sleeps": [], "frames": []}
    bg = sum(b - a for p in tr.pids("bgload") if tr.tgid.get(p) == ui for a, b, s in tr.oncpu.get(p, []))
    res["bgload_cpu_ms"] = bg * 1000
    workers = [p for p in tr.pids("pipeline" if shape == "jitterpipe" else "poolw") if tr.tgid.get(p) == ui]
    for i, (lo, hi) in enumerate(fr):
        s = in_window(tr, workers, lo, hi)
        w = longest_block(tr, ui, lo, hi)
        sl = (s[0][1] - s[0][0]) if s else None
        res["sleeps"].append(sl)
        res["frames"].append((i, lo, hi, s[0] if s else None, w))
    res["waits"] = [(w[3] - w[0]) if w else None for i, lo, hi, s, w in res["frames"]]
    # the injected culprit's part in this run: the longest block of the lock
    # waiter (fetch / a pool worker) that the culprit ended (indexer takes M
    # every 10 ms in every run and sometimes delays fetch a little; compactor
    # never runs in a normal run)
    cname, wname = ("indexer", "fetch") if shape == "jitterpipe" else ("compactor", "poolw")
    cp = [p for p in tr.pids(cname) if tr.tgid.get(p) == ui]
    res["culprit_block"] = max([b[3] - b[0] for p in tr.pids(wname) if tr.tgid.get(p) == ui
                                for b in tr.blocked.get(p, []) if b[2] in cp] or [0.0])
    if anomaly:
        res["evidence"] = evidence(tr, shape, ui, fr[3], workers)
    return tr, res


def evidence(tr, shape, ui, win, workers):
    """Frame 3 of an anomaly run: the lock waiter's longest block that the
    culprit ended (its release of the lock), the culprit's run before it
    (from the end of its last block: who woke it, when), its wakeup of the
    worker that asked for the hold (the ack: it holds the lock from then
    on), and the time it was off cpu between that and the release."""
    lo, hi = win
    cname, wname = ("indexer", "fetch") if shape == "jitterpipe" else ("compactor", "poolw")
    culprit = [p for p in tr.pids(cname) if tr.tgid.get(p) == ui][0]
    waiters = [p for p in tr.pids(wname) if tr.tgid.get(p) == ui]
    blks = [(b[3] - b[0], p, b) for p in waiters for b in tr.blocked.get(p, [])
            if b[2] == culprit and lo <= b[0] and b[3] <= hi]
    wslp = in_window(tr, workers, lo, hi)[0]
    uiw = longest_block(tr, ui, lo, hi)
    r = {"culprit": cname, "sleep": wslp, "sleeper": tr.name(wslp[2]), "ui_wait": uiw}
    if not blks:
        r["missing"] = True
        return r
    _, waiter, blk = max(blks)
    t_rel = blk[1]
    before = [b for b in tr.blocked.get(culprit, []) if b[3] <= blk[0]]
    co, cwt, cwk, cin, cst = before[-1]
    acks = [t for t, wkr, wee, ctx in tr.wakes if wkr == culprit and wee in workers and cin <= t <= blk[0]]
    held = acks[-1] if acks else cin
    on = sorted((a, b, s) for a, b, s in tr.oncpu.get(culprit, []) if held <= b and a < t_rel)
    off = [(on[k][1], on[k + 1][0], on[k][2]) for k in range(len(on) - 1)]   # off cpu between its runs
    r.update({"woken_by": tr.name(cwk), "woken_at": cwt, "on_cpu": cin, "held": held, "acked": bool(acks),
              "release": t_rel, "hold_ms": (t_rel - held) * 1000, "switched_out": off,
              "waiter": tr.name(waiter), "waiter_block": blk})
    return r


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(here, "*.trace")))
    dist = {}
    for f in files:
        got = summarize(f)
        if not got:
            print(f"{f}: no jitterpipe/jitterpool threads")
            continue
        tr, r = got
        bg = f"; bgload on cpu {r['bgload_cpu_ms']:.1f} ms" if r["shape"] == "jitterpipe" else ""
        print(f"== {r['file']} ({r['shape']}; threads {', '.join(r['threads'])}{bg}; {os.path.getsize(f)} bytes)")
        for i, lo, hi, s, w in r["frames"]:
            sl = f"sleep {ms(s[1] - s[0])} ms ({s[0]:.6f}-{s[1]:.6f}, {tr.name(s[2])})" if s else "no sleep"
            wt = (f"ui-main waits {ms(w[3] - w[0])} ms ({w[0]:.6f}-{w[3]:.6f}, woken by {tr.name(w[2])})"
                  if w else "no wait")
            print(f"  frame {i}: {sl}; {wt}")
        if "evidence" in r:
            e = r["evidence"]
            if e.get("missing"):
                print(f"  truth, frame 3: NO wait of {e['culprit']}'s lock waiter ended by it: NO HOLD SEEN")
                continue
            offms = sum(b - a for a, b, s in e["switched_out"]) * 1000
            print(f"  truth, frame 3: {e['culprit']} on cpu from {e['on_cpu']:.6f} (woken by {e['woken_by']} at "
                  f"{e['woken_at']:.6f}), holds the lock from {e['held']:.6f} ("
                  + ("its wakeup of the asking worker" if e["acked"] else "no wakeup of the worker: from its run")
                  + f") to {e['release']:.6f} (wakes {e['waiter']}): {e['hold_ms']:.2f} ms, of which off cpu "
                  f"{offms:.2f} ms ("
                  + (", ".join(f"{a:.6f}-{b:.6f}" for a, b, s in e["switched_out"]) or "never") + ")")
            b = e["waiter_block"]
            if b:
                print(f"    {e['waiter']} blocked {b[0]:.6f}-{b[3]:.6f} ({ms(b[3] - b[0])} ms, {b[4]}), "
                      f"woken by {tr.name(b[2])} at {b[1]:.6f}")
            s = e["sleep"]
            print(f"    {e['sleeper']}'s sleep of frame 3: {s[0]:.6f}-{s[1]:.6f} ({ms(s[1] - s[0])} ms)")
            u = e["ui_wait"]
            print(f"    ui-main's wait of frame 3: {u[0]:.6f}-{u[3]:.6f} ({ms(u[3] - u[0])} ms), "
                  f"woken by {tr.name(u[2])}")
        else:
            d = dist.setdefault(r["shape"], {"sleep": [], "wait": [], "culprit": [], "bg": 0, "runs": 0})
            d["sleep"] += [x for x in r["sleeps"] if x is not None]
            d["wait"] += [x for x in r["waits"] if x is not None]
            d["culprit"].append(r["culprit_block"])
            d["runs"] += 1
            d["bg"] += r["bgload_cpu_ms"] > 1     # bgload's idle loop alone is ~0.1 ms
        print(f"  longest wait of the lock waiter ended by the injected culprit: {ms(r['culprit_block'])} ms")
    for shape, d in sorted(dist.items()):
        bg = f" ({d['bg']} with bgload spinning)" if shape == "jitterpipe" else ""
        print(f"{shape}, {d['runs']} normal runs{bg}:")
        for what, v in (("jittery sleep", d["sleep"]), ("ui-main's wait", d["wait"]),
                        ("lock wait ended by the culprit thread, per run", d["culprit"])):
            v = [x * 1000 for x in v]
            print(f"  {what}: n={len(v)} min {min(v):.2f} ms, median {statistics.median(v):.2f} ms, "
                  f"max {max(v):.2f} ms")


if __name__ == "__main__":
    main()
