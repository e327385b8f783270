"""make install: the command, libargusq (the .so with its
symlinks, the .a, the header, argusq.pc, argusq(3)) and the Python package,
staged under DESTDIR; a small C program compiled against the installed
header with pkg-config's flags, and the installed Python package, each
answering on an archive as `argusq --json` does."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import textwrap

from common import ROOT, ArchiveCase, trace

PREFIX = "/usr/local"

PROGRAM = r"""
#include <argusq.h>
#include <stdio.h>
#include <string.h>

/* counts what the stream gives, to check it against the buffer */
static int count(void *ctx, const char *buf, size_t len)
{
    (void)buf;
    *(size_t *)ctx += len;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    argusq_error e;
    argusq_archive *a = argusq_open(argv[1], ARGUSQ_OPEN_READ, &e);
    if (!a) {
        fprintf(stderr, "open: %s\n", e.message);
        return 2;
    }
    char *out;
    size_t len, streamed = 0;
    if (argusq_query(a, argv[2], NULL, &out, &len, &e) < 0) {
        fprintf(stderr, "%d:%d: %s\n", e.line, e.col, e.message);
        return 1;
    }
    argusq_output o = {.size = sizeof o, .write = count, .ctx = &streamed};
    if (argusq_query_stream(a, argv[2], NULL, &o, &e) < 0 || streamed != len)
        return 3;
    fputs(out, stdout);
    argusq_free(out);
    if (argusq_query(a, "find nodes wher", NULL, &out, NULL, &e) != -1 || e.code != ARGUSQ_ERR_STATEMENT)
        return 4;
    argusq_free(out);
    fprintf(stderr, "libargusq %s: %d:%d: %s\n", argusq_version(), e.line, e.col, e.message);
    argusq_close(a);
    return 0;
}
"""


class Install(ArchiveCase):
    @classmethod
    def setUpClass(cls):
        cls.stage = tempfile.mkdtemp(prefix="argusq-install-")
        env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
        cls.make = subprocess.run(["make", "-C", ROOT, "install", f"DESTDIR={cls.stage}", f"PREFIX={PREFIX}"],
                                  capture_output=True, text=True, env=env, timeout=900)
        cls.root = cls.stage + PREFIX

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.stage, ignore_errors=True)

    def setUp(self):
        super().setUp()
        self.assertEqual(self.make.returncode, 0, self.make.stdout + self.make.stderr)
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")

    def installed(self, *parts):
        return os.path.join(self.root, *parts)

    def test_files(self):
        for f in ("bin/argusq", "include/argusq.h", "lib/libargusq.a", "lib/libargusq.so.0.1.0",
                  "lib/pkgconfig/argusq.pc", "share/man/man1/argusq.1", "share/man/man3/argusq.3",
                  "lib/python3/dist-packages/argusq/__init__.py", "lib/python3/dist-packages/argusq/_native.py"):
            self.assertTrue(os.path.isfile(self.installed(f)), f)
        self.assertEqual(os.readlink(self.installed("lib/libargusq.so.0")), "libargusq.so.0.1.0")
        self.assertEqual(os.readlink(self.installed("lib/libargusq.so")), "libargusq.so.0")
        with open(self.installed("lib/python3/dist-packages/argusq/_installed.py")) as f:
            self.assertIn(f"LIBDIR = '{PREFIX}/lib'", f.read())
        # the library exports its API and nothing else, under its soname
        nm = subprocess.run(["nm", "-D", "--defined-only", self.installed("lib/libargusq.so.0")],
                            capture_output=True, text=True, check=True).stdout
        names = [line.split()[-1] for line in nm.splitlines() if line.strip()]
        self.assertIn("argusq_open", names)
        self.assertEqual([n for n in names if not n.startswith("argusq_")], [])
        soname = subprocess.run(["readelf", "-d", self.installed("lib/libargusq.so.0.1.0")],
                                capture_output=True, text=True, check=True).stdout
        self.assertIn("[libargusq.so.0]", soname)

    def test_a_c_program_built_with_pkg_config(self):
        env = dict(os.environ, PKG_CONFIG_PATH=self.installed("lib", "pkgconfig"))
        flags = subprocess.run(["pkg-config", "--define-prefix", "--cflags", "--libs", "argusq"],
                               capture_output=True, text=True, env=env, check=True).stdout.split()
        self.assertIn(f"-I{self.installed('include')}", flags)
        self.assertIn(f"-L{self.installed('lib')}", flags)
        self.assertIn("-largusq", flags)
        version = subprocess.run(["pkg-config", "--modversion", "argusq"], capture_output=True, text=True,
                                 env=env, check=True).stdout.strip()
        src = os.path.join(self.dir, "q.c")
        with open(src, "w") as f:
            f.write(PROGRAM)
        exe = os.path.join(self.dir, "q")
        cc = subprocess.run(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, src] + flags,
                            capture_output=True, text=True)
        self.assertEqual(cc.returncode, 0, cc.stderr)
        run_env = dict(os.environ, LD_LIBRARY_PATH=self.installed("lib"))
        for st in ("traces", 'find nodes where thread = "ui-main" order by blocked desc limit 3'):
            p = subprocess.run([exe, self.db, st], capture_output=True, text=True, env=run_env, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(p.stdout, self.ok("--json", st).stdout)
            self.assertRegex(p.stderr, rf"^libargusq {re.escape(version)}: 1:\d+: ")
        # it runs against the installed library, not another
        ldd = subprocess.run(["ldd", exe], capture_output=True, text=True, env=run_env).stdout
        self.assertIn(self.installed("lib", "libargusq.so.0"), ldd)

    def test_the_python_package(self):
        code = textwrap.dedent("""
            import json, sys, argusq
            print(argusq.__file__)
            with argusq.Archive(sys.argv[1], "r") as a:
                print(json.dumps(a.query("traces")))
        """)
        env = dict(os.environ, PYTHONPATH=self.installed("lib", "python3", "dist-packages"),
                   ARGUSQ_LIB=self.installed("lib", "libargusq.so.0"))
        p = subprocess.run(["python3", "-c", code, self.db], capture_output=True, text=True, env=env,
                           cwd=self.dir, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        where, doc = p.stdout.splitlines()
        self.assertTrue(where.startswith(self.installed("lib", "python3", "dist-packages", "argusq")), where)
        self.assertEqual(json.loads(doc), self.json("traces"))

    def test_the_library_man_page_renders_without_warnings(self):
        page = self.installed("share", "man", "man3", "argusq.3")
        p = subprocess.run(["man", "-l", page], capture_output=True, text=True,
                           env=dict(os.environ, MANWIDTH="80", MANPAGER="cat", PAGER="cat"))
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        if shutil.which("groff"):
            g = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True)
            self.assertEqual((g.returncode, g.stderr), (0, ""))
        text = re.sub(r".\x08", "", p.stdout)
        for section in ("NAME", "SYNOPSIS", "DESCRIPTION", "RETURN VALUE", "EXAMPLES", "SEE ALSO"):
            self.assertRegex(text, rf"(?m)^{section}$")
        with open(os.path.join(ROOT, "include", "argusq.h")) as f:
            api = set(re.findall(r"\b(argusq_[a-z_]+)\(", f.read()))
        for name in sorted(api):
            self.assertIn(name, text, f"{name} of include/argusq.h is not in argusq(3)")

    def test_the_command(self):
        p = subprocess.run([self.installed("bin", "argusq"), "--version"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertRegex(p.stdout, r"^argusq \d+\.\d+\.\d+\n$")
