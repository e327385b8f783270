"""`find nodes where thread = X ... order by blocked|duration desc limit K`
answered from each thread's top lists (db/nodetop.c) gives what
reading every node gives: checked against the whole node list, sorted here,
for threads with more nodes than a list keeps (slowclient: 204; a list
keeps 128), filters that reject many of the listed nodes (then the reader
falls back to every node), and limits beyond a list."""
import unittest

from common import ArchiveCase, trace

# (trace, threads to ask about)
CASES = [
    ("eventloop-anomaly.dat", ["slowclient", "timer/hrtimer_wakeup", "server"]),
    ("cpucontend-anomaly.dat", ["interrupt", "hog1", "ui-main", "timer/tick_nohz_handler"]),
    ("lockchain-anomaly.txt", ["ui-main", "hog"]),
]

# extra conjuncts, and the same test in Python
FILTERS = [
    ("", lambda n: True),
    (' and kind = "thread"', lambda n: n["kind"] == "thread"),
    (" and blocked < 1ms", lambda n: n["blocked"] < 1_000_000),
    (" and duration > 20us", lambda n: n["end"] - n["begin"] > 20_000),
    (" and events >= 3", lambda n: n["events"] >= 3),
]

VALUE = {"blocked": lambda n: n["blocked"], "duration": lambda n: n["end"] - n["begin"]}


class TopLists(ArchiveCase):
    def test_same_rows_as_reading_every_node(self):
        for name, threads in CASES:
            self.ingest(trace(name), name=name)
            for thread in threads:
                every = self.json("--trace", name, f'find nodes where thread = "{thread}"')["nodes"]
                self.assertTrue(every, f"{name}: no node of {thread}")
                for field, value in VALUE.items():
                    for text, keep in FILTERS:
                        rows = sorted((n for n in every if keep(n)), key=lambda n: (-value(n), n["id"]))
                        for k in (1, 5, 50, 128, 129, 300):
                            with self.subTest(trace=name, thread=thread, field=field, where=text, limit=k):
                                got = self.json("--trace", name, f'find nodes where thread = "{thread}"{text} '
                                                f"order by {field} desc limit {k}")["nodes"]
                                self.assertEqual([n["id"] for n in got], [n["id"] for n in rows[:k]])

    def test_the_lists_follow_a_rebuilt_graph(self):
        self.ingest(trace("eventloop-anomaly.dat"), name="e")
        q = 'find nodes where thread = "slowclient" order by blocked desc limit 3'
        before = self.json("--trace", "e", q)["nodes"]
        self.ok("--trace", "e", 'rule boundary syscall begin where name = "nanosleep"')
        self.ok("--trace", "e", "rebuild graph")
        after = self.json("--trace", "e", q)["nodes"]
        every = self.json("--trace", "e", 'find nodes where thread = "slowclient"')["nodes"]
        want = sorted(every, key=lambda n: (-n["blocked"], n["id"]))[:3]
        self.assertEqual([n["id"] for n in after], [n["id"] for n in want])
        self.assertTrue(before)


if __name__ == "__main__":
    unittest.main()
