"""The docs' examples are tests: every indented example block of the
README and of the pages of docs/ that holds an `argusq` command runs, in
order, against the setup the document states (its first block: the
traces it ingests), and what a command prints is compared with the
lines shown under it.  docs/PYTHON.md's blocks that begin with `import
argusq` run in Python, in the same way.

In the expected lines, a line `...` stands for any number of lines, and
a line ending in `...` for any line that begins with what precedes it;
trailing spaces do not count.  A command with no lines under it must
succeed.  A block the reader cannot run as shown (an archive elsewhere,
a hypothetical file, syntax with placeholders) is preceded by an HTML
comment `<!-- not run: WHY -->`, which says why."""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import unittest

from common import ARGUSQ, ROOT

def blocks(path, python=False):
    """(line number, lines, skipped) of each indented block with a command
    (with python: of each block that begins with `import argusq`)"""
    out, cur, start, skip = [], [], 0, None
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        lines = f.read().split("\n")
    pending_skip = None
    for i, line in enumerate(lines + [None]):   # None: the end, which ends a block
        if line is not None and (line.startswith("    ") or (cur and line == "")):
            if not cur:
                start, skip = i + 1, pending_skip
            cur.append(line[4:])
            continue
        if cur:
            while cur and cur[-1] == "":
                cur.pop()
            if python and cur[0].startswith("import argusq"):
                out.append((start, cur, skip))
            elif not python and any(x.startswith("argusq ") or x.startswith("export ARGUSQ_DB") for x in cur):
                out.append((start, cur, skip))
            cur = []
        if line is None:
            break
        m = re.match(r"<!-- not run: (.*) -->", line.strip())
        pending_skip = m.group(1) if m else (pending_skip if line.strip() == "" else None)
    return out


def matches(want, got):
    """the expected lines (with `...`) against the printed ones"""
    if not want:
        return not got
    w = want[0]
    if w == "...":
        return any(matches(want[1:], got[k:]) for k in range(len(got) + 1))
    if not got:
        return False
    line = got[0].rstrip()
    ok = line.startswith(w[:-3].rstrip()) if w.endswith("...") else line == w.rstrip()
    return ok and matches(want[1:], got[1:])


class Docs(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="argusq-docs-")
        self.addCleanup(shutil.rmtree, self.dir, True)
        os.symlink(os.path.join(ROOT, "tests"), os.path.join(self.dir, "tests"))
        # `argusq` on the PATH is the binary under test
        bin_dir = os.path.join(self.dir, "bin")
        os.mkdir(bin_dir)
        os.symlink(ARGUSQ, os.path.join(bin_dir, "argusq"))
        self.env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"])
        self.env.pop("ARGUSQ_DB", None)

    def run_cmd(self, cmd):
        argv = shlex.split(cmd, comments=True)
        if argv and argv[0] == "export" and "=" in argv[1]:
            k, v = argv[1].split("=", 1)
            self.env[k] = os.path.join(self.dir, v)
            return 0, ""
        p = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, env=self.env, cwd=self.dir,
                           timeout=120)
        return p.returncode, p.stdout + p.stderr if p.returncode else p.stdout

    def run_doc(self, path, least):
        found = blocks(path)
        self.assertGreater(len(found), 0)
        ran = 0
        for start, lines, skip in found:
            if skip:
                continue
            cmds = [i for i, x in enumerate(lines) if x.startswith("argusq ") or x.startswith("export ARGUSQ_DB")]
            for j, i in enumerate(cmds):
                end = cmds[j + 1] if j + 1 < len(cmds) else len(lines)
                want = lines[i + 1:end]
                while want and want[0] == "":
                    want.pop(0)
                while want and want[-1] == "":
                    want.pop()
                with self.subTest(doc=path, line=start + i, command=lines[i]):
                    rc, out = self.run_cmd(lines[i])
                    self.assertEqual(rc, 0, out)
                    got = out.rstrip("\n").split("\n") if out.strip() else []
                    if want:
                        self.assertTrue(matches(want, got),
                                        "%s:%d: %s\n--- shown\n%s\n--- printed\n%s" % (
                                            path, start + i, lines[i], "\n".join(want), "\n".join(got)))
                    ran += 1
        self.assertGreaterEqual(ran, least)

    def test_query_md(self):
        self.run_doc("docs/QUERY.md", 10)

    def test_readme(self):
        self.run_doc("README.md", 4)

    def test_ingest_md(self):
        self.run_doc("docs/INGEST.md", 1)

    def test_archive_md(self):
        self.run_doc("docs/ARCHIVE.md", 12)

    def test_argus_dump_md(self):
        self.run_doc("docs/ARGUS-DUMP.md", 3)

    def test_recording_md(self):
        self.run_doc("docs/RECORDING.md", 0)   # every block needs root: checks that each says so

    def test_python_md(self):
        self.run_doc("docs/PYTHON.md", 0)
        lib = os.environ.get("ARGUSQ_LIB") or os.path.join(ROOT, "build", "libargusq.so")
        if not os.path.exists(lib):
            self.skipTest(f"no libargusq at {lib}: `make build/libargusq.so` builds it")
        env = dict(self.env, PYTHONPATH=os.path.join(ROOT, "python"))
        ran = 0
        for start, lines, skip in blocks("docs/PYTHON.md", python=True):
            if skip:
                continue
            with self.subTest(doc="docs/PYTHON.md", line=start):
                p = subprocess.run([sys.executable, "-c", "\n".join(lines)], capture_output=True, text=True,
                                   env=env, cwd=self.dir, timeout=120)
                self.assertEqual(p.returncode, 0, "docs/PYTHON.md:%d:\n%s" % (start, p.stdout + p.stderr))
                ran += 1
        self.assertGreaterEqual(ran, 1)


if __name__ == "__main__":
    unittest.main()
