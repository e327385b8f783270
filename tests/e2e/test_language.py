"""Words, values and limits of the query language: a bare word
where a value is meant is never silently a field, a name with '-' or a
statement whose quotes the shell took away gets a message that says what
to write, a misspelt field a suggestion, a kind no node has an error; a
rule's bare value is its value; `match ... limit K` and the caps of a
slice are said, not silent.  On the lockchain recording."""
import json
import os
import unittest

from common import ArchiveCase, trace


class Language(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), "anomaly")

    def fails(self, *args):
        p = self.run_argusq(*args)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertNotIn("runtime error", p.stderr)
        return p.stderr

    def nodes(self, stmt):
        return self.json(stmt)["nodes"]

    def test_a_kind_written_bare_is_the_kind(self):
        """`kind = thread`: thread is also a field, but a kind's name is
        the kind -- before, it compared two fields and found interrupts."""
        bare = self.nodes("find nodes where kind = thread")
        quoted = self.nodes('find nodes where kind = "thread"')
        self.assertEqual(bare, quoted)
        self.assertTrue(bare and all(n["kind"] == "thread" for n in bare))
        self.assertEqual(self.nodes("find nodes where thread = kind"), bare)  # either side
        for kind in ("softirq", "interrupt"):
            self.assertEqual(self.nodes(f"find nodes where kind = {kind}"),
                             self.nodes(f'find nodes where kind = "{kind}"'))
        edges = self.json("find edges where kind = wakeup")["edges"]
        self.assertTrue(edges and all(e["kind"] == "wakeup" for e in edges))
        self.assertEqual(self.json("find edges where kind in (\"wakeup\", \"preempt\")")["edges"],
                         self.json("find edges where kind = wakeup or kind = preempt")["edges"])

    def test_a_kind_no_node_has_is_an_error(self):
        err = self.fails("find nodes where kind = wakeup")
        self.assertIn('query:1:25: no node kind "wakeup" (node kinds: thread, interrupt, softirq', err)
        err = self.fails('find edges where kind in ("wakeup", "thread")')
        self.assertIn('no edge kind "thread" (edge kinds: wakeup,', err)

    def test_a_bare_value_says_to_quote_it(self):
        err = self.fails("find nodes where thread = hog")
        self.assertIn('query:1:27: unknown field "hog": to compare thread with a value, quote it: thread = "hog"', err)
        err = self.fails("find nodes where proc = lockchain")
        self.assertIn('quote it: proc = "lockchain"', err)
        err = self.fails("find events where type = sched_switch")
        self.assertIn('quote it: type = "sched_switch"', err)
        # an event's other words are attributes, which may be compared with each other
        self.ok("find events where prev_comm = next_comm limit 1")

    def test_a_name_with_a_dash(self):
        err = self.fails("find nodes where thread = ui-main")
        self.assertIn("query:1:27: ui-main is not a field: a value with '-' in it is a string, \"ui-main\"", err)
        self.assertEqual(len(self.nodes('find nodes where thread = "ui-main"')) > 0, True)

    def test_quotes_the_shell_took(self):
        """`argusq find nodes where thread = "ui-main"` typed in a shell
        arrives as words without the quotes."""
        err = self.fails("find", "nodes", "where", "thread", "=", "ui-main")
        self.assertIn("ui-main is not a field", err)
        self.assertIn("the shell takes double quotes away from words: put the whole statement in single quotes", err)
        err = self.fails("find", "nodes", "where", "thread", "=", "hog")
        self.assertIn("the shell takes double quotes away", err)
        # one word, quotes kept: no such note
        err = self.fails("find nodes where thread = hog")
        self.assertNotIn("shell", err)
        # words that parse are a statement as before
        self.assertEqual(self.json("find", "nodes", "where", "tid", "=", "4111")["nodes"],
                         self.nodes("find nodes where tid = 4111"))

    def test_a_misspelt_field(self):
        err = self.fails('find nodes where threadd = "x"')
        self.assertIn('unknown field "threadd"; did you mean "thread"?', err)
        err = self.fails("find nodes where blockd > 1ms")
        self.assertIn('did you mean "blocked"?', err)
        err = self.fails('traces where nmae = "x"')
        self.assertIn('did you mean "name"?', err)
        err = self.fails("find nodes where zzz > 1")
        self.assertNotIn("did you mean", err)

    def test_a_rules_bare_value(self):
        """In a rules file `name = futex` is the value futex."""
        rules = os.path.join(self.dir, "r.rules")
        with open(rules, "w") as f:
            f.write("rule boundary sys_enter where name = futex\n")
        db = os.path.join(self.dir, "r.db")
        p = self.run_argusq("-d", db, "ingest", trace("lockchain-anomaly.txt"), "--arch", "x86_64",
                            "--rules", rules, db=False)
        self.assertEqual(p.returncode, 0, p.stderr)
        q = self.run_argusq("-d", db, "--json", "rules", db=False)
        self.assertEqual(json.loads(q.stdout)["rules"][0]["text"], "rule boundary sys_enter where name = futex")
        # the same rule quoted cuts the same nodes
        with open(rules, "w") as f:
            f.write('rule boundary sys_enter where name = "futex"\n')
        db2 = os.path.join(self.dir, "r2.db")
        self.assertEqual(self.run_argusq("-d", db2, "ingest", trace("lockchain-anomaly.txt"), "--arch", "x86_64",
                                         "--rules", rules, db=False).returncode, 0)
        count = [json.loads(self.run_argusq("-d", d, "--json", "traces", db=False).stdout)["traces"][0]["nodes"]
                 for d in (db, db2)]
        self.assertEqual(count[0], count[1])
        plain = self.json("traces")["traces"][0]["nodes"]
        self.assertGreater(count[0], plain)  # the rule cut more nodes

    def test_match_limit(self):
        node = self.nodes('find nodes where thread = "ui-main" order by blocked desc limit 1')[0]["id"]
        every = self.json(f"match node {node} limit 100000")
        self.assertEqual(len(every["nodes"]), every["candidates"])
        three = self.json(f"match node {node} limit 3")
        self.assertEqual(three["nodes"], every["nodes"][:3])
        self.assertEqual(three["candidates"], every["candidates"])
        self.assertEqual(self.json(f"match node {node}")["nodes"], every["nodes"][:20])
        table = self.ok(f"match node {node} limit 3").stdout
        self.assertIn(f"{every['candidates']} nodes like node {node} (ui-main), the best shown", table)
        self.assertEqual(self.json(f'match node {node} limit 2 in trace "anomaly"')["nodes"], every["nodes"][:2])
        self.assertIn("`limit` given twice", self.fails(f"match node {node} limit 3 limit 4"))
        self.assertIn("only match takes a limit", self.fails(f"diagnose node {node} limit 3"))
        self.assertIn("match shows at most 100000 nodes", self.fails(f"match node {node} limit 100001"))

    def test_slice_caps_said(self):
        node = self.nodes('find nodes where thread = "ui-main" order by blocked desc limit 1')[0]["id"]
        err = self.fails(f"slice back from node {node} depth 100000")
        self.assertIn("depth is at most 10000", err)
        d = self.json(f"slice back from node {node} depth 10000")
        self.assertIs(d["truncated"], False)
        self.assertNotIn("stopped at", self.ok(f"slice back from node {node} depth 10000").stdout)

    def test_a_script_runs_up_to_its_error(self):
        """A script runs statement by statement and stops at its first
        failing one, also one that does not parse (sqlite3, psql): those
        before it have run.  A statement that fails at its own next word is
        not run (the parser had reduced `find nodes` before `whre`)."""
        one = self.ok("find nodes limit 1").stdout
        script = os.path.join(self.dir, "s.aq")
        with open(script, "w") as f:
            f.write("find nodes limit 1;\n-- a comment\nfind nodes limit 1; find nodes whre x;\nfind nodes limit 1\n")
        p = self.run_argusq("-f", script)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(p.stdout, one + one)  # lines 1 and 3's first, not `find nodes` of the bad one
        self.assertIn("s.aq:3:32: syntax error near \"whre\"", p.stderr)
        p = self.run_argusq("-f", "-", stdin="find nodes whre x; find nodes limit 1")
        self.assertEqual((p.returncode, p.stdout), (1, ""))
        self.assertIn("stdin:1:12: syntax error", p.stderr)
        p = self.run_argusq("-f", "-", stdin="find nodes limit 1; find nodes where thread = \"a\" @")
        self.assertEqual((p.returncode, p.stdout), (1, one))
        self.assertIn("stdin:1:51: bad character", p.stderr)  # a lexical error, after the first ran


if __name__ == "__main__":
    unittest.main()
