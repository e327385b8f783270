"""bench/bench_inputs.py -- the inputs of `make bench` (bench/run.py),
built in bench/data/ when missing: the Argus traces (bench/gen_argus),
pipeline.txt and its copies later in time (bench/scale_ftrace), and the
Perfetto traces' copies later in time (perfetto_copies, whose file names
carry this file's hash).  Standard library only.
"""
import os
import subprocess

from bench_harness import BENCH, DATA, build_file, prune, run, src_hash


# ---------------------------------------------------------------- Perfetto input

def _pb_varint(b, i):
    v = sh = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << sh
        sh += 7
        if not c & 0x80:
            return v, i


def _pb_put(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def _pb_fields(b):
    """(tag bytes, number, wire type, value or payload) of each field."""
    i = 0
    while i < len(b):
        s = i
        t, i = _pb_varint(b, i)
        n, w = t >> 3, t & 7
        if w == 0:
            v, i = _pb_varint(b, i)
        elif w == 2:
            ln, i = _pb_varint(b, i)
            v, i = b[i:i + ln], i + ln
        else:
            size = 8 if w == 1 else 4
            v, i = b[i:i + size], i + size
        yield b[s:i], n, w, v


def _pb_packed(b):
    out, i = [], 0
    while i < len(b):
        v, i = _pb_varint(b, i)
        out.append(v)
    return out


def _compact_ts(cs):
    """A compact_sched's switch and waking times (delta-encoded: the
    first of each array is absolute)."""
    for _, n, w, v in _pb_fields(cs):
        if n in (1, 7) and w == 2:
            t = 0
            for d in _pb_packed(v):
                t += d
                yield t


def _compact_moved(cs, by):
    """The compact_sched cs with its times moved by `by` (the first of
    each delta-encoded array)."""
    out = bytearray()
    for raw, n, w, v in _pb_fields(cs):
        if n in (1, 7) and w == 2 and v:
            vals = _pb_packed(v)
            vals[0] += by
            body = b"".join(_pb_put(x) for x in vals)
            out += _pb_put(n << 3 | 2) + _pb_put(len(body)) + body
        else:
            out += raw
    return bytes(out)


def perfetto_copies(src, dst, copies):
    """Perfetto ingest input: src's ftrace bundles (full FtraceEvents and
    compact_sched) copies times, each copy's timestamps moved past the one
    before, so the trace is one recording copies times as long; its other
    packets once."""
    with open(src, "rb") as f:
        data = f.read()
    packets = [v for _, n, w, v in _pb_fields(data) if n == 1 and w == 2]
    bundles = [b for p in packets for _, n, _, b in _pb_fields(p) if n == 1]
    ts = [v for b in bundles for _, bn, _, e in _pb_fields(b) if bn == 2 for _, en, _, v in _pb_fields(e) if en == 1]
    ts += [t for b in bundles for _, bn, _, cs in _pb_fields(b) if bn == 4 for t in _compact_ts(cs)]
    span = max(ts) - min(ts) + 1000000
    msg = lambda n, body: _pb_put(n << 3 | 2) + _pb_put(len(body)) + body
    with open(dst, "wb") as out:
        for k in range(copies):
            for p in packets:
                pf = list(_pb_fields(p))
                if not any(n == 1 for _, n, _, _ in pf):
                    if k == 0:
                        out.write(msg(1, p))
                    continue
                body = bytearray()
                for raw, n, w, v in pf:
                    if n != 1:
                        body += raw
                        continue
                    bundle = bytearray()
                    for braw, bn, _, bv in _pb_fields(v):
                        if bn == 4:
                            bundle += msg(4, _compact_moved(bv, k * span))
                            continue
                        if bn != 2:
                            bundle += braw
                            continue
                        ev = bytearray()
                        for eraw, en, _, ev_v in _pb_fields(bv):
                            ev += _pb_put(1 << 3) + _pb_put(ev_v + k * span) if en == 1 else eraw
                        bundle += msg(2, bytes(ev))
                    body += msg(1, bytes(bundle))
                out.write(msg(1, bytes(body)))


# ---------------------------------------------------------------- inputs

def inputs(args):
    os.makedirs(DATA, exist_ok=True)
    gen = os.path.join(args.bin, "gen_argus")
    scale = os.path.join(args.bin, "scale_ftrace")
    gh = src_hash(os.path.join(BENCH, "gen_argus.c"))
    sh = src_hash(os.path.join(BENCH, "scale_ftrace.c"))
    small_n = max(10000, args.events // 10)

    def argus(n):
        return build_file(os.path.join(DATA, "argus-%d-%s.trace" % (n, gh)),
                          lambda tmp: run([gen, str(n), tmp], stdout=subprocess.DEVNULL),
                          "gen_argus %d events" % n)

    big = argus(args.events)
    small = argus(small_n)
    normal = argus(args.normals_events) if args.normals else None
    prune("argus-", "-%s.trace" % gh)

    xz = os.path.join(args.shared, "traces", "pipeline.txt.xz")
    dat = os.path.join(args.shared, "traces", "pipeline.dat")

    def unxz(tmp):
        with open(tmp, "wb") as f:
            run(["xz", "-dc", xz], stdout=f)

    txt = build_file(os.path.join(DATA, "pipeline.txt"), unxz, "xz -dc pipeline.txt.xz")
    scaled = build_file(os.path.join(DATA, "pipeline-x%d-%s.txt" % (args.ftrace_copies, sh)),
                        lambda tmp: run([scale, str(args.ftrace_copies), txt, tmp], stdout=subprocess.DEVNULL),
                        "pipeline.txt x %d" % args.ftrace_copies)
    prune("pipeline-x", "-%s.txt" % sh)
    return {"argus": big, "argus_small": small, "pipeline_txt": txt, "pipeline_dat": dat, "ftrace": scaled,
            "argus_normal": normal}
