"""Old systrace as Android's tools wrote it: the legacy HTML
page, whose ftrace text is a JavaScript string, and `<...>` tasks that the
same file names further on.

The traces of ../shared/foreign-more are used from there, never copied
here; their figures are SOURCES.md's, counted from the files' own lines:

  trappy-trace_legacy_systrace.html  15 events, sched_switch 3 (8-CPU
      Android); task 10144 is `<...>` on all its lines, and its own
      sched_switch says prev_comm=sh prev_pid=10144
  ohos-ut_bytrace_input_full.txt     63 events, sched_switch 16; task 1200
      is `<...>` on its own lines, Binder:924_3 in the fields of others

tests/fixtures/unnamed-later.txt (written here) has one task for each way
a file names a `<...>` task only after its first line: its own prev_comm,
a later wakeup's comm, a later next_comm, its task column on a later line;
and one that nothing names.
"""
import os
import unittest

from common import ROOT, ArchiveCase

MORE = os.path.join(ROOT, "..", "shared", "foreign-more")
FOREIGN = os.path.join(ROOT, "..", "shared", "foreign")
LEGACY = os.path.join(MORE, "trappy-trace_legacy_systrace.html")
UNNAMED = os.path.join(ROOT, "tests", "fixtures", "unnamed-later.txt")


def js_string_page(text):
    """The legacy page as systrace.py wrote it: the text a JavaScript
    string, each line ending in an escaped newline and a line continuation,
    the last in `\\n";`, then the viewer's script."""
    lines = text.rstrip("\n").split("\n")
    esc = [ln.replace("\\", "\\\\").replace('"', '\\"') for ln in lines]
    return ('<!DOCTYPE HTML>\n<html>\n<head i18n-values="dir:textdirection;">\n'
            '<title>Android System Trace</title>\n</head>\n<body>\n  <div class="view">\n  </div>\n'
            '  <script>\n  var linuxPerfData = "\\\n'
            + "".join(e + "\\n\\\n" for e in esc[:-1]) + esc[-1] + '\\n";\n'
            '  function reload() {\n    if (!linuxPerfData)\n      return;\n'
            '    m.importEvents("[]", true, [linuxPerfData]);\n  }\n  </script>\n</body>\n</html>\n')


class LegacyPage(ArchiveCase):
    def setUp(self):
        if not os.path.isdir(MORE):
            self.skipTest(f"{MORE} is not there (../shared beside the project)")
        super().setUp()

    def write(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_the_string_is_read(self):
        s = self.ingest(LEGACY, name="legacy")
        self.assertEqual(s["events"], 15)
        self.assertEqual(s["format"], "systrace-html")
        switches = self.json('find events where event = "sched_switch"')["events"]
        self.assertEqual(len(switches), 3)
        self.assertEqual({e["cpu"] for e in switches}, {7, 2})
        self.assertEqual({(e["prev_comm"], e["next_comm"]) for e in switches},
                         {("sh", "kworker/7:0"), ("kworker/7:0", "sh"), ("adbd", "kworker/2:1")})

    def test_the_page_as_systrace_wrote_it(self):
        """Every line `...\\n\\`, the last `...\\n";`: the same trace as the text."""
        text_path = os.path.join(FOREIGN, "catapult-atrace_data.txt")
        with open(text_path) as f:
            page = self.write("legacy.html", js_string_page(f.read()))
        h = self.ingest(page, name="page")
        t = self.ingest(text_path, name="text")
        for k in ("events", "threads", "processes", "nodes", "edges"):
            self.assertEqual(h[k], t[k], k)
        self.assertEqual(h["events"], 116)  # test_foreign.py's count of the text

    def test_a_newer_page_is_not_taken_for_one(self):
        """Newer pages carry the trace viewer, whose importer of the legacy
        page names its declaration in a regular expression: their text is
        still that of the trace-data block."""
        text_path = os.path.join(FOREIGN, "catapult-atrace_data.txt")
        with open(text_path) as f:
            text = f.read()
        page = self.write("new.html", '<!DOCTYPE html>\n<html>\n<head>\n<script>\n'
                          '    if (!advanceToLineMatching(/^  var linuxPerfData = "\\\\$/))\n'
                          '      return failure;\n</script>\n</head>\n<body>\n'
                          '  <script class="trace-data" type="application/text">\n' + text
                          + '  </script>\n</body>\n</html>\n')
        self.assertEqual(self.ingest(page, name="new")["events"], 116)

    def test_escapes_are_read_as_javascript_reads_them(self):
        mark = '  app-7  [000] ...1  5.000000: tracing_mark_write: say \\"hi\\" \\\\ \\u00e9\\ttab'
        page = self.write("esc.html", '<html><body><script>\nvar linuxPerfData = "\\\n'
                          + mark + '\\n\\\n  app-7  [000] ...1  5.000001: tracing_mark_write: E\\n";\n'
                          '</script></body></html>\n')
        self.ingest(page)
        ev = self.json('find events where event = "tracing_mark_write"')["events"]
        self.assertEqual([e["buf"] for e in ev], ['say "hi" \\ \u00e9\ttab', "E"])

    def test_a_bad_line_in_the_string_is_named_by_its_line(self):
        with open(os.path.join(FOREIGN, "catapult-atrace_data.txt")) as f:
            lines = f.read().splitlines()
        lines[20] = "this is not ftrace"
        page = self.write("bad.html", js_string_page("\n".join(lines)))
        with open(page) as f:
            at = next(i for i, ln in enumerate(f, 1) if ln.startswith("this is not ftrace"))
        p = self.run_argusq("ingest", page)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn(f"bad.html:{at}: not an ftrace event line: 'this is not ftrace'", p.stderr)
        none = self.write("none.html", '<html><script>var other = "\\\n#x\\n";</script></html>\n')
        p = self.run_argusq("ingest", none)
        self.assertNotEqual(p.returncode, 0)
        self.assertRegex(p.stderr, r"none\.html:\d+: a systrace page without ftrace text")


class NamedLater(ArchiveCase):
    def names(self, trace=None):
        nodes = self.json(*(["--trace", trace] if trace else []), "find nodes")["nodes"]
        return {n["tid"]: n["thread"] for n in nodes if n["kind"] == "thread"}

    def test_a_task_takes_the_name_the_file_gives_it_later(self):
        self.ingest(UNNAMED)
        self.assertEqual(self.names(), {1234: "worker", 1300: "helper", 1000: "main", 1400: "reader",
                                        1600: "poller", 1500: "<...>"})
        worker = self.json('find nodes where thread = "worker"')["nodes"]
        self.assertEqual(sum(n["events"] for n in worker), 3, "every event of 1234, from its first line")
        self.assertEqual({n["proc"] for n in worker}, {"worker"})
        # standard input is spooled to a file, which is read again the same way
        with open(UNNAMED) as f:
            self.ok("ingest", "-", "--name", "stdin", stdin=f.read())
        self.assertEqual(self.names("stdin")[1234], "worker")

    def test_foreign_files(self):
        if not os.path.isdir(MORE):
            self.skipTest(f"{MORE} is not there (../shared beside the project)")
        self.ingest(LEGACY, name="legacy")
        self.assertEqual(self.names("legacy"), {10144: "sh", 9996: "kworker/7:0", 315: "adbd"})
        s = self.ingest(os.path.join(MORE, "ohos-ut_bytrace_input_full.txt"), name="ohos")
        self.assertEqual(s["events"], 63)
        q = lambda stmt: self.json("--trace", "ohos", stmt)
        self.assertEqual(len(q('find events where event = "sched_switch"')["events"]), 16)
        names = self.names("ohos")
        self.assertEqual(names[1200], "Binder:924_3")
        self.assertNotIn("<...>", names.values())


if __name__ == "__main__":
    unittest.main()
