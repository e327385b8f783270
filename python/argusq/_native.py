"""libargusq through ctypes: finding the library, and the C API's structs
and functions as include/argusq.h declares them (keep the two in step:
a struct's layout here is its layout there)."""
import ctypes
import ctypes.util
import os

_HERE = os.path.dirname(os.path.abspath(__file__))
SONAME = "libargusq.so.0"


def library_path():
    """Where libargusq is: $ARGUSQ_LIB; else, in a checkout (python/argusq
    beside build/), the build's; else where `make install` put it; else
    whatever the dynamic loader finds."""
    env = os.environ.get("ARGUSQ_LIB")
    if env:
        return env
    built = os.path.join(_HERE, "..", "..", "build", "libargusq.so")
    if os.path.exists(built):
        return os.path.normpath(built)
    try:
        from . import _installed  # written by make install
        return os.path.join(_installed.LIBDIR, SONAME)
    except ImportError:
        pass
    return ctypes.util.find_library("argusq") or SONAME


class Error(ctypes.Structure):
    _fields_ = [("code", ctypes.c_int), ("line", ctypes.c_int), ("col", ctypes.c_int),
                ("offset", ctypes.c_size_t), ("stmt_index", ctypes.c_size_t),
                ("stmt_count", ctypes.c_size_t), ("stmt_line", ctypes.c_int),
                ("source", ctypes.c_char * 4096), ("text", ctypes.c_char * 4096),
                ("message", ctypes.c_char * 5120), ("reserved", ctypes.c_char * 512)]


class QueryOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("format", ctypes.c_int), ("trace", ctypes.c_char_p)]


WRITE_FN = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_char), ctypes.c_size_t)
STATEMENT_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_char_p)


class Output(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("write", WRITE_FN), ("statement", STATEMENT_FN),
                ("ctx", ctypes.c_void_p)]


PROGRESS_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint64, ctypes.c_uint64,
                               ctypes.c_char_p)
WARNING_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p)


class IngestOpts(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("name", ctypes.c_char_p), ("rules", ctypes.c_char_p),
                ("arch", ctypes.c_char_p), ("labels", ctypes.POINTER(ctypes.c_char_p)),
                ("nlabels", ctypes.c_size_t), ("progress", PROGRESS_FN), ("warning", WARNING_FN),
                ("ctx", ctypes.c_void_p), ("threads", ctypes.c_int), ("source", ctypes.c_char_p)]


class IngestInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("trace", ctypes.c_char * 256), ("format", ctypes.c_char * 32)] + \
        [(f, ctypes.c_uint64) for f in ("events", "threads", "processes", "nodes", "edges", "skipped",
                                       "reordered", "late", "truncated_line", "unnamed", "first_ts", "last_ts")] + \
        [("seconds", ctypes.c_double), ("recorder", ctypes.c_char * 128)] + \
        [(f, ctypes.c_uint64) for f in ("userspace", "userspace_skipped")]


class DumpInfo(ctypes.Structure):
    _fields_ = [("size", ctypes.c_size_t), ("trace", ctypes.c_char * 256)] + \
        [(f, ctypes.c_uint64) for f in ("events", "declarations", "labels", "rules", "symbols")]


class NormalPart(ctypes.Structure):
    _fields_ = [("thread", ctypes.c_char_p), ("state", ctypes.c_char_p), ("ns", ctypes.c_uint64)]


class NormalStep(ctypes.Structure):
    _fields_ = [("trace", ctypes.c_char_p), ("archive", ctypes.c_char_p), ("node", ctypes.c_uint32), ("score", ctypes.c_double),
                ("contained", ctypes.c_int), ("period", ctypes.c_uint64), ("timeout", ctypes.c_int),
                ("waker", ctypes.c_char_p), ("parts", ctypes.POINTER(NormalPart)), ("nparts", ctypes.c_size_t)]


def load(path=None):
    """The library with its functions typed."""
    lib = ctypes.CDLL(path or library_path())
    p, e = ctypes.c_void_p, ctypes.POINTER(Error)
    sig = {
        "argusq_version": (ctypes.c_char_p, []),
        "argusq_open": (p, [ctypes.c_char_p, ctypes.c_uint, e]),
        "argusq_close": (None, [p]),
        "argusq_format_from_name": (ctypes.c_int, [ctypes.c_char_p]),
        "argusq_session_new": (p, [p, ctypes.POINTER(QueryOpts), e]),
        "argusq_session_free": (None, [p]),
        "argusq_session_trace": (ctypes.c_char_p, [p]),
        "argusq_session_normals": (ctypes.c_int, [p, ctypes.POINTER(NormalStep), ctypes.c_size_t, e]),
        "argusq_session_stream": (ctypes.c_long, [p, ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(Output), e]),
        "argusq_session_query": (ctypes.c_long, [p, ctypes.c_char_p, ctypes.c_size_t,
                                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_size_t),
                                                 e]),
        "argusq_free": (None, [p]),
        "argusq_label_check": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_char_p, e]),
        "argusq_ingest": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.POINTER(IngestOpts), ctypes.POINTER(IngestInfo),
                                         e]),
        "argusq_ingest_into": (ctypes.c_int, [ctypes.c_char_p, ctypes.c_uint, ctypes.c_char_p,
                                              ctypes.POINTER(IngestOpts), ctypes.POINTER(IngestInfo), e]),
        "argusq_dump": (ctypes.c_int, [p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(DumpInfo), e]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib
