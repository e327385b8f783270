"""The critical path's partition rules (query/critpath.c, docs/QUERY.md
"The critical path: one model") on small hand-written ftrace texts, one
per rule, each with the partition worked out by hand from its lines:

  - runnable runs from the wakeup to the switch-in, running from the
    switch-in (not from the node's first event);
  - sched_waking alone starts runnable time; a thread woken but not yet
    switched in is held off by the thread that held its cpu;
  - nothing is charged to a thread before it was created: the wait for a
    thread that did not exist yet is a wait for its creator;
  - a wait ended by a softirq or an interrupt is the device's (disk or
    network, said apart), or a timer's, and charged to the thread whose
    I/O it was -- the submitter of the block request by device and sector,
    not the softirq that dispatched it -- else to the waiting thread; a
    NET_RX a thread raised itself (a loopback send) is that thread's;
  - a worker's run on a request is its requester's only when the requester
    is a third party, not when the request chain leads back to the victim;
  - a wakeup that never came (the anomaly's wait ended by its own timeout,
    the normal run's by a thread) is followed along the expected waker's
    timeline;
  - a wait for a cache flush is the writers' whose writes to the device
    since its previous flush it made durable, by bytes (query/flush.c);
  - a thread that spun through the wait: the thread on another cpu whose
    run covered the spin and ended just before it went on is named beside
    it (query/spin.c), without a part of the partition.

Times are in microseconds from 100 s; every part is asserted to the ns."""
import os

from common import ArchiveCase

US = 1000
T0 = 100_000_000 * US  # 100 s, in ns


def line(comm, tid, cpu, flags, us, event, body):
    return f"{comm + '-' + str(tid):>16} [{cpu:03d}] {flags} {100 + us / 1e6:.6f}: {event}: {body}"


def switch(prev, ppid, state, nxt, npid, cpu, us):
    who = prev if ppid else "<idle>"
    return line(who, ppid, cpu, "d..3.", us, "sched_switch",
                f"prev_comm={prev} prev_pid={ppid} prev_prio=120 prev_state={state} ==> "
                f"next_comm={nxt} next_pid={npid} next_prio=120")


def wake(kind, comm, tid, cpu, us, target, ttid, tcpu=0, flags="d..2."):
    return line(comm, tid, cpu, flags, us, kind, f"comm={target} pid={ttid} prio=120 target_cpu={tcpu:03d}")


def sys(comm, tid, cpu, us, enter, nr=0):
    return line(comm, tid, cpu, ".....", us, "sys_enter" if enter else "sys_exit",
                f"NR {nr} (0, 0, 0, 0, 0, 0)" if enter else f"NR {nr} = 0")


def at(us):
    return T0 + us * US


class Partition(ArchiveCase):
    def load(self, lines, name="t"):
        path = os.path.join(self.dir, name + ".txt")
        with open(path, "w") as f:
            f.write("# tracer: nop\n#\n" + "\n".join(sorted(lines, key=lambda l: float(l.split()[3][:-1]))) + "\n")
        self.ingest(path, name=name)

    def node_of(self, thread, last=True):
        nodes = self.json("--trace", "t", f'find nodes where thread = "{thread}" and kind = "thread"')["nodes"]
        self.assertTrue(nodes, thread)
        return nodes[-1] if last else nodes[0]

    def parts(self, node):
        cp = self.json("--trace", "t", f"critical path of node {node['id']}")
        self.assertEqual(sum(p["ns"] for p in cp["parts"]), cp["period"]["ns"], cp["parts"])
        return cp

    def simple(self, cp):
        """(thread, state, begin in us, ns in us) of each part"""
        return [(p["thread"], p["state"], (p["begin"] - T0) // US, p["ns"] // US) for p in cp["parts"]]

    def test_runnable_ends_at_the_switch_in_and_waking_alone_starts_it(self):
        """waiter sleeps at 110; waker wakes it with sched_waking alone at
        1000 and keeps the cpu to 1500; waiter's first event comes 300 us
        after its switch-in.  Runnable 1000-1500, running 1500-2010."""
        self.load([
            sys("waiter", 10, 0, 100, True, 202),
            switch("waiter", 10, "S", "waker", 20, 0, 110),
            sys("waker", 20, 0, 200, False),
            sys("waker", 20, 0, 900, True, 202),
            wake("sched_waking", "waker", 20, 0, 1000, "waiter", 10),
            sys("waker", 20, 0, 1100, False, 202),
            sys("waker", 20, 0, 1400, True, 0),
            switch("waker", 20, "S", "waiter", 10, 0, 1500),
            sys("waiter", 10, 0, 1800, False, 202),
            sys("waiter", 10, 0, 2000, True, 1),
            sys("waiter", 10, 0, 2010, False, 1),
        ])
        n = self.node_of("waiter")
        self.assertEqual((n["runnable"], n["running"]), (500 * US, 510 * US), n)
        cp = self.parts(n)
        self.assertEqual(self.simple(cp), [("waker", "running", 110, 890), ("waiter", "runnable", 1000, 500),
                                           ("waiter", "running", 1500, 510)])

    def forked(self, name="t", disk=0):
        """ui waits from 110 for a child that parent forks at 5000; the
        child runs from 5050 and wakes ui at 9010 -- after disk us of
        waiting on the disk, when disk is given."""
        return self.load([
            sys("ui", 10, 0, 100, True, 61),
            switch("ui", 10, "S", "parent", 20, 0, 110),
            sys("parent", 20, 0, 200, False),
            line("parent", 20, 0, ".....", 5000, "sched_process_fork",
                 "comm=parent pid=20 child_comm=child child_pid=30"),
            wake("sched_wakeup_new", "parent", 20, 0, 5010, "child", 30, 1),
            switch("swapper/1", 0, "R", "child", 30, 1, 5050),
            sys("parent", 20, 0, 5100, True, 61),
            switch("parent", 20, "S", "swapper/0", 0, 0, 5110),
            sys("child", 30, 1, 5200, False, 56),
        ] + ([
            sys("child", 30, 1, 5300, True, 0),
            switch("child", 30, "D", "swapper/1", 0, 1, 5310),
            line("<idle>", 0, 1, "d.h2.", 5310 + disk, "irq_handler_entry", "irq=25 name=virtio1-req.0"),
            wake("sched_wakeup", "<idle>", 0, 1, 5311 + disk, "child", 30, 1, flags="d.h3."),
            line("<idle>", 0, 1, "d.h2.", 5312 + disk, "irq_handler_exit", "irq=25 ret=handled"),
            switch("swapper/1", 0, "R", "child", 30, 1, 5320 + disk),
            sys("child", 30, 1, 5330 + disk, False, 0),
        ] if disk else []) + [
            sys("child", 30, 1, 9000 + disk, True, 1),
            wake("sched_waking", "child", 30, 1, 9010 + disk, "ui", 10),
            wake("sched_wakeup", "child", 30, 1, 9020 + disk, "ui", 10),
            sys("child", 30, 1, 9100 + disk, False, 1),
            sys("child", 30, 1, 9110 + disk, True, 60),
            line("child", 30, 1, ".....", 9120 + disk, "sched_process_exit", "comm=child pid=30 prio=120"),
            switch("child", 30, "X", "swapper/1", 0, 1, 9130 + disk),
            switch("swapper/0", 0, "R", "ui", 10, 0, 9200 + disk),
            sys("ui", 10, 0, 9300 + disk, False, 61),
        ], name)

    def test_runnable_before_the_switch_in_is_the_cpu_holders(self):
        """ui wakes worker at 100 and waits from 110; worker's cpu is held
        by batch, which spins until the scheduler switches it out (R) for
        worker at 3000; worker wakes ui at 3050.  The wait is batch's,
        holding worker off its cpu, not worker's own."""
        self.load([
            sys("worker", 20, 1, 30, True, 202),
            switch("worker", 20, "S", "batch", 30, 1, 40),
            sys("batch", 30, 1, 60, False, 0),
            sys("ui", 10, 0, 90, True, 202),
            wake("sched_wakeup", "ui", 10, 0, 100, "worker", 20, 1),
            switch("ui", 10, "S", "swapper/0", 0, 0, 110),
            switch("batch", 30, "R", "worker", 20, 1, 3000),
            sys("worker", 20, 1, 3010, False, 202),
            wake("sched_wakeup", "worker", 20, 1, 3050, "ui", 10),
            switch("swapper/0", 0, "R", "ui", 10, 0, 3060),
            sys("ui", 10, 0, 3070, False, 202),
            switch("worker", 20, "S", "batch", 30, 1, 3100),
        ])
        cp = self.parts(self.node_of("ui"))
        self.assertEqual(self.simple(cp), [("batch", "runnable", 110, 2890), ("worker", "running", 3000, 50),
                                           ("ui", "runnable", 3050, 10), ("ui", "running", 3060, 10)])
        self.assertEqual(cp["parts"][0]["held_off"]["thread"], "worker")

    def test_nothing_is_charged_to_a_thread_before_it_was_forked(self):
        self.forked()
        cp = self.parts(self.node_of("ui"))
        got = self.simple(cp)
        self.assertEqual(got, [("parent", "running", 110, 4890), ("child", "runnable", 5000, 50),
                               ("child", "running", 5050, 3960), ("ui", "runnable", 9010, 190),
                               ("ui", "running", 9200, 100)])

    def softirq_wait(self, action, vec, irq_name="virtio0-input.0"):
        text = f"vec={vec} [action={action}]" if action else f"vec={vec}"
        self.load([
            sys("client", 10, 0, 100, True, 45),
            switch("client", 10, "D" if action == "BLOCK" else "S", "swapper/0", 0, 0, 110),
            line("<idle>", 0, 0, "d.h2.", 3000, "irq_handler_entry", f"irq=30 name={irq_name}"),
            line("<idle>", 0, 0, "d.h2.", 3010, "irq_handler_exit", "irq=30 ret=handled"),
            line("<idle>", 0, 0, "..s2.", 3020, "softirq_entry", text),
            wake("sched_wakeup", "<idle>", 0, 0, 3030, "client", 10, flags="d.s3."),
            line("<idle>", 0, 0, "..s2.", 3040, "softirq_exit", text),
            switch("swapper/0", 0, "R", "client", 10, 0, 3100),
            sys("client", 10, 0, 3200, False, 45),
        ])
        return self.parts(self.node_of("client"))

    def test_a_network_wait_is_the_network(self):
        cp = self.softirq_wait("NET_RX", 3)
        self.assertEqual(self.simple(cp), [("client", "io", 110, 2920), ("client", "runnable", 3030, 70),
                                           ("client", "running", 3100, 100)])
        self.assertEqual(cp["parts"][0]["device"], "network")

    def test_a_softirq_named_by_its_vector_alone(self):
        """LTTng and Perfetto give the vector alone: the node is named as
        ftrace names it, and the wait is the network's the same."""
        cp = self.softirq_wait(None, 3)
        self.assertEqual(cp["parts"][0]["device"], "network")
        names = {n["thread"] for n in self.json("--trace", "t", 'find nodes where kind = "softirq"')["nodes"]}
        self.assertEqual(names, {"softirq/NET_RX"})

    def test_a_block_softirq_wait_is_the_disk_of_the_waiter(self):
        cp = self.softirq_wait("BLOCK", 4, irq_name="virtio1-req.0")
        self.assertEqual(cp["parts"][0]["state"], "io")
        self.assertEqual((cp["parts"][0]["thread"], cp["parts"][0]["device"]), ("client", "disk"))

    def test_a_loopback_send_is_the_senders(self):
        """server computes from 100 to 2990, then writes the socket: NET_RX
        is raised and run in its own context and wakes client.  The wait is
        server's work, not the network."""
        self.load([
            sys("client", 10, 0, 100, True, 45),
            switch("client", 10, "S", "swapper/0", 0, 0, 110),
            sys("server", 20, 1, 100, False, 0),
            sys("server", 20, 1, 2990, True, 1),
            line("server", 20, 1, "d..2.", 3000, "softirq_raise", "vec=3 [action=NET_RX]"),
            line("server", 20, 1, "..s2.", 3001, "softirq_entry", "vec=3 [action=NET_RX]"),
            wake("sched_wakeup", "server", 20, 1, 3010, "client", 10, flags="d.s3."),
            line("server", 20, 1, "..s2.", 3020, "softirq_exit", "vec=3 [action=NET_RX]"),
            sys("server", 20, 1, 3030, False, 1),
            switch("swapper/0", 0, "R", "client", 10, 0, 3100),
            sys("client", 10, 0, 3200, False, 45),
        ])
        cp = self.parts(self.node_of("client"))
        self.assertEqual(self.simple(cp)[0], ("server", "running", 110, 2900))
        self.assertNotIn("io", {p["state"] for p in cp["parts"]})

    def test_a_timer_softirq_wait_is_a_timer(self):
        cp = self.softirq_wait("TIMER", 1, irq_name="apic-timer")
        self.assertEqual((cp["parts"][0]["thread"], cp["parts"][0]["state"]), ("client", "timer"))

    def block_wait(self, queued):
        """view waits (D) from 110 on a read: loader queued it (or, not
        queued: no event names a submitting thread) at 100, the block
        softirq on cpu 1 issued it at 510, the disk's interrupt completed
        it at 4000 and woke view."""
        issue = "254,0 R 4096 () 1000 + 8 be,0,4"
        lines = [
            line("loader", 20, 1, ".....", 100, "block_bio_queue", "254,0 R 1000 + 8 [loader]"),
            line("loader", 20, 1, ".....", 101, "block_rq_insert", issue + " [loader]"),
        ] if queued else [sys("loader", 20, 1, 100, True, 17)]
        lines += [
            sys("view", 10, 0, 105, True, 17),
            switch("view", 10, "D", "swapper/0", 0, 0, 110),
            line("loader", 20, 1, ".....", 300, "sys_enter", "NR 35 (0, 0, 0, 0, 0, 0)"),
            switch("loader", 20, "S", "swapper/1", 0, 1, 310),
            line("<idle>", 0, 1, "..s2.", 500, "softirq_entry", "vec=4 [action=BLOCK]"),
            line("<idle>", 0, 1, "..s2.", 510, "block_rq_issue", issue + " [swapper/1]"),
            line("<idle>", 0, 1, "..s2.", 520, "softirq_exit", "vec=4 [action=BLOCK]"),
            line("<idle>", 0, 0, "d.h2.", 4000, "irq_handler_entry", "irq=25 name=virtio1-req.0"),
            line("<idle>", 0, 0, "d.h2.", 4001, "block_rq_complete", "254,0 R () 1000 + 8 be,0,4 [0]"),
            wake("sched_wakeup", "<idle>", 0, 0, 4002, "view", 10, flags="d.h3."),
            line("<idle>", 0, 0, "d.h2.", 4003, "irq_handler_exit", "irq=25 ret=handled"),
            switch("swapper/0", 0, "R", "view", 10, 0, 4050),
            sys("view", 10, 0, 4100, False, 17),
        ]
        self.load(lines)
        return self.parts(self.node_of("view"))

    def test_io_is_charged_to_the_submitter_by_sector(self):
        cp = self.block_wait(True)
        self.assertEqual(self.simple(cp)[0], ("loader", "io", 110, 3892))
        self.assertEqual(cp["parts"][0]["device"], "disk")

    def test_io_a_softirq_issued_is_the_waiters_own(self):
        cp = self.block_wait(False)
        self.assertEqual(self.simple(cp)[0], ("view", "io", 110, 3892))
        self.assertNotIn("softirq/BLOCK", [p["thread"] for p in cp["parts"]])

    def request(self, third_party):
        """ui asks svc at 100 and waits; svc passes the request to cruncher
        (own chain), or -- third party -- svc is busy from 50 with other's
        request and comes to ui's after it; the work ends at 600 and svc
        wakes ui at 610."""
        if third_party:
            lines = [
                wake("sched_wakeup", "other", 30, 1, 40, "svc", 20),
                switch("other", 30, "S", "swapper/1", 0, 1, 45),
                switch("swapper/1", 0, "R", "svc", 20, 1, 48),
                sys("svc", 20, 1, 50, False, 0),
                sys("ui", 10, 0, 90, True, 1),
                sys("ui", 10, 0, 100, False, 1),  # its request, queued behind other's
                sys("ui", 10, 0, 105, True, 0),
                switch("ui", 10, "S", "swapper/0", 0, 0, 110),
                sys("svc", 20, 1, 600, True, 1),
            ]
            worker = ("svc", 20, 1)
        else:
            lines = [
                sys("ui", 10, 0, 90, True, 1),
                wake("sched_wakeup", "ui", 10, 0, 100, "svc", 20, 1),
                sys("ui", 10, 0, 105, True, 0),
                switch("ui", 10, "S", "swapper/0", 0, 0, 110),
                switch("swapper/1", 0, "R", "svc", 20, 1, 120),
                sys("svc", 20, 1, 130, False, 0),
                wake("sched_wakeup", "svc", 20, 1, 140, "cruncher", 40, 1),
                sys("svc", 20, 1, 145, True, 0),
                switch("svc", 20, "S", "cruncher", 40, 1, 150),
                sys("cruncher", 40, 1, 160, False, 0),
                wake("sched_wakeup", "cruncher", 40, 1, 600, "svc", 20, 1),
                sys("cruncher", 40, 1, 602, True, 0),
                switch("cruncher", 40, "S", "svc", 20, 1, 605),
                sys("svc", 20, 1, 606, False, 0),
            ]
            worker = ("cruncher", 40, 1)
        lines += [
            wake("sched_wakeup", "svc", 20, 1, 610, "ui", 10),
            sys("svc", 20, 1, 620, True, 0),
            switch("svc", 20, "S", "swapper/1", 0, 1, 630),
            switch("swapper/0", 0, "R", "ui", 10, 0, 640),
            sys("ui", 10, 0, 650, False, 0),
        ]
        self.load(lines)
        return self.parts(self.node_of("ui")), worker[0]

    def test_a_third_partys_request_is_the_third_partys(self):
        cp, worker = self.request(True)
        run = [p for p in cp["parts"] if p["thread"] == worker and p["state"] == "running"]
        self.assertTrue(run, cp["parts"])
        self.assertTrue(all(p.get("for", {}).get("thread") == "other" for p in run), run)
        d = self.json("--trace", "t", 'diagnose thread "ui"')
        self.assertEqual(d["suspects"][0]["thread"], "other", d["suspects"][:3])

    def test_the_victims_own_request_is_the_workers(self):
        cp, worker = self.request(False)
        run = [p for p in cp["parts"] if p["thread"] == worker and p["state"] == "running"]
        self.assertTrue(run and sum(p["ns"] for p in run) >= 400 * US, cp["parts"])
        self.assertTrue(all("for" not in p for p in run), run)
        d = self.json("--trace", "t", 'diagnose thread "ui"')
        self.assertEqual((d["suspects"][0]["thread"], d["suspects"][0]["state"]), ("cruncher", "running"),
                         d["suspects"][:3])

    def timed_wait(self, name, peer_runs_to):
        """waiter arms a 3 ms timeout at 100 and waits for notifier, which
        waits for peer; peer runs from 100 to peer_runs_to and wakes
        notifier, which wakes waiter 50 us later -- or, when peer runs past
        3100, waiter's timer wakes it first."""
        timer = "hrtimer=00000000a1b2c3d4"
        late = peer_runs_to > 3100
        lines = [
            sys("notifier", 20, 1, 10, True, 202),
            switch("notifier", 20, "S", "peer", 30, 1, 20),
            sys("peer", 30, 1, 30, False, 0),
            line("waiter", 10, 0, ".....", 100, "hrtimer_start",
                 f"{timer} function=hrtimer_wakeup expires={at(3100)} softexpires={at(3100)} mode=REL"),
            sys("waiter", 10, 0, 105, True, 202),
            switch("waiter", 10, "S", "swapper/0", 0, 0, 110),
        ]
        if late:
            lines += [
                line("<idle>", 0, 0, "d.h2.", 3100, "hrtimer_expire_entry", f"{timer} now={at(3100)} function=hrtimer_wakeup/0x0"),
                wake("sched_wakeup", "<idle>", 0, 0, 3101, "waiter", 10, flags="d.h3."),
                line("<idle>", 0, 0, "d.h2.", 3102, "hrtimer_expire_exit", timer),
                switch("swapper/0", 0, "R", "waiter", 10, 0, 3150),
                sys("waiter", 10, 0, 3160, False, 202),
                sys("waiter", 10, 0, 3170, True, 1),
                sys("waiter", 10, 0, 3180, False, 1),
            ]
        t = peer_runs_to
        lines += [
            wake("sched_wakeup", "peer", 30, 1, t, "notifier", 20, 1),
            sys("peer", 30, 1, t + 5, True, 202),
            switch("peer", 30, "S", "notifier", 20, 1, t + 10),
            sys("notifier", 20, 1, t + 20, False, 202),
        ]
        if not late:
            lines += [
                wake("sched_wakeup", "notifier", 20, 1, t + 50, "waiter", 10),
                line("notifier", 20, 1, ".....", t + 55, "hrtimer_cancel", timer),
                sys("notifier", 20, 1, t + 60, True, 202),
                switch("notifier", 20, "S", "swapper/1", 0, 1, t + 70),
                switch("swapper/0", 0, "R", "waiter", 10, 0, t + 80),
                sys("waiter", 10, 0, t + 90, False, 202),
                sys("waiter", 10, 0, t + 100, True, 1),
                sys("waiter", 10, 0, t + 110, False, 1),
            ]
        path = os.path.join(self.dir, name + ".txt")
        with open(path, "w") as f:
            f.write("# tracer: nop\n#\n" + "\n".join(sorted(lines, key=lambda l: float(l.split()[3][:-1]))) + "\n")
        self.ingest(path, name=name)

    def test_a_wakeup_that_never_came_is_followed_along_the_expected_waker(self):
        self.timed_wait("normal", 400)
        self.timed_wait("slow", 5000)
        alone = self.json("--trace", "slow", 'diagnose thread "waiter"')
        self.assertEqual(alone["expected_waker"], None)  # no normal run to say who wakes it
        d = self.json("--trace", "slow", 'diagnose thread "waiter" against trace "normal"')
        self.assertEqual(d["expected_waker"], "notifier")
        self.assertEqual((d["suspects"][0]["thread"], d["suspects"][0]["state"]), ("peer", "running"),
                         d["suspects"][:3])
        self.assertIn("through notifier, which woke waiter in the normal run", d["suspects"][0]["reason"])
        # the wait (110 .. 3101) is peer's run, not waiter's timer
        run = sum(p["ns"] for p in d["breakdown"] if p["thread"] == "peer" and p["state"] == "running")
        self.assertEqual(run, (3101 - 110) * US)  # to the timer's wakeup
        self.assertNotIn("timer", {p["state"] for p in d["breakdown"]})

    def test_a_short_lived_process_is_compared_by_its_life(self):
        """the child of the slow run waits 2 ms on the disk (a step of its
        own); the worst step of each is its run before waking ui, but their
        lives differ by the disk wait, which diagnose says"""
        self.forked("normal")
        self.forked("slow", disk=2000)
        child = self.json("--trace", "slow", 'critical path of thread "child"')
        self.assertTrue(child["life"])
        self.assertEqual(child["period"]["begin"], at(5000))  # its fork
        self.assertEqual(child["devices"]["disk"], 2001 * US)  # 5310 to the wakeup at 7311
        d = self.json("--trace", "slow", 'diagnose thread "child" against trace "normal"')
        lives = d["lives"]
        self.assertEqual((lives["anomaly"]["devices"]["disk"], lives["normal"]["devices"]["disk"]), (2001 * US, 0))
        self.assertEqual(lives["anomaly"]["ns"] - lives["normal"]["ns"], 2000 * US)
        text = self.ok("--trace", "slow", 'diagnose thread "child" against trace "normal"').stdout
        self.assertIn("The difference: io (disk) +2.0ms (none in the normal run)", text)
        # not a short-lived thread: ui was not created in the trace
        self.assertIsNone(self.json("--trace", "slow", 'diagnose thread "ui" against trace "normal"')["lives"])


    def flush_wait(self, flush=True):
        """saver writes 4 KiB at 40 and waits (D) from 105 on an fsync's
        preflush (FWS) queued at 100; bulk wrote 12 KiB to the same disk at
        30; other wrote to another disk (8,0) at 35, and earlier to this one
        before its previous flush completed (20); the flush (FF) completes
        at 4000, then the FWS request itself (sector 0), and saver wakes at
        4002.  Not a flush (flush=False): the same with a plain write."""
        rw = "FWS" if flush else "WS"
        self.load([
            line("other", 30, 1, ".....", 10, "block_bio_queue", "254,0 W 7000 + 800 [other]"),
            line("<idle>", 0, 1, "d.h2.", 20, "block_rq_complete", "254,0 FF () 18446744073709551615 + 0 be,0,4 [0]"),
            line("bulk", 20, 1, ".....", 30, "block_bio_queue", "254,0 W 5000 + 24 [bulk]"),
            line("bulk", 20, 1, ".....", 31, "block_rq_insert", "254,0 W 12288 () 5000 + 24 be,0,4 [bulk]"),
            line("other", 30, 1, ".....", 35, "block_bio_queue", "8,0 W 100 + 800 [other]"),
            line("saver", 10, 0, ".....", 40, "block_bio_queue", "254,0 W 9000 + 8 [saver]"),
            line("saver", 10, 0, ".....", 100, "block_bio_queue", f"254,0 {rw} 0 + 0 [saver]"),
            switch("saver", 10, "D", "swapper/0", 0, 0, 105),
            line("kworker/0:1H", 44, 1, ".....", 500, "block_rq_issue", "254,0 FF 0 () 0 + 0 be,0,4 [kworker/0:1H]"),
            line("<idle>", 0, 0, "d.h2.", 3990, "irq_handler_entry", "irq=25 name=virtio1-req.0"),
            line("<idle>", 0, 0, "d.h2.", 4000, "block_rq_complete",
                 "254,0 FF () 18446744073709551615 + 0 be,0,4 [0]" if flush else "254,0 WS () 9000 + 8 be,0,4 [0]"),
            line("<idle>", 0, 0, "d.h2.", 4001, "block_rq_complete", f"254,0 {rw} () 0 + 0 be,0,4 [0]"),
            wake("sched_wakeup", "<idle>", 0, 0, 4002, "saver", 10, flags="d.h3."),
            line("<idle>", 0, 0, "d.h2.", 4003, "irq_handler_exit", "irq=25 ret=handled"),
            switch("swapper/0", 0, "R", "saver", 10, 0, 4050),
            sys("saver", 10, 0, 4100, False, 74),
        ])
        return self.parts(self.node_of("saver"))

    def test_a_flush_is_the_writers_by_bytes(self):
        cp = self.flush_wait()
        wait = 3897 * US  # 105 .. 4002, split 4 KiB : 12 KiB
        got = [(p["thread"], p["state"], p["ns"], p.get("flush")) for p in cp["parts"][:2]]
        self.assertEqual(got, [("saver", "io", wait // 4, None),
                               ("bulk", "io", wait - wait // 4, {"thread": "saver", "tid": 10, "bytes": 12288})])
        self.assertNotIn("other", {p["thread"] for p in cp["parts"]})
        self.assertEqual(cp["parts"][1]["device"], "disk")
        text = self.ok("--trace", "t", f"critical path of node {cp['node']['id']}").stdout
        self.assertIn("saver's cache flush (12.0 KiB written)", text)

    def test_a_write_without_a_flush_is_the_submitters(self):
        cp = self.flush_wait(flush=False)
        self.assertEqual(self.simple(cp)[0], ("saver", "io", 105, 3897))
        self.assertNotIn("flush", cp["parts"][0])

    def spin(self, holder_end):
        """ui asks worker at 100 (wakeup) and sleeps; worker (cpu 0) runs
        from 110 without a break to 5090, when it wakes ui; holder (cpu 1)
        runs from 50 to holder_end and sleeps.  Nothing joins them."""
        self.load([
            sys("holder", 30, 1, 50, False, 0),
            sys("holder", 30, 1, 60, True, 0),
            sys("holder", 30, 1, holder_end - 10, False, 0),
            sys("holder", 30, 1, holder_end - 5, True, 35),
            switch("holder", 30, "S", "swapper/1", 0, 1, holder_end),
            sys("ui", 10, 0, 90, True, 1),
            wake("sched_wakeup", "ui", 10, 0, 100, "worker", 20),
            switch("ui", 10, "S", "worker", 20, 0, 105),
            sys("worker", 20, 0, 110, False, 0),
            sys("worker", 20, 0, 5080, True, 1),
            wake("sched_wakeup", "worker", 20, 0, 5090, "ui", 10),
            switch("worker", 20, "S", "ui", 10, 0, 5100),
            sys("ui", 10, 0, 5110, False, 1),
        ])
        return self.json("--trace", "t", 'diagnose thread "ui"')

    def test_a_spinner_names_the_thread_it_waited_on(self):
        d = self.spin(5000)
        self.assertEqual([(x["thread"], x["state"]) for x in d["suspects"][:2]],
                         [("holder", "running"), ("worker", "running")], d["suspects"])
        self.assertIn("stopped 100.0us before worker went on", d["suspects"][0]["reason"])  # its node's end, 5100
        self.assertNotIn("holder", {p["thread"] for p in d["breakdown"]})  # beside the path, not on it

    def test_a_thread_that_went_on_long_before_is_no_spinners(self):
        d = self.spin(3000)  # holder stopped 2 ms before: not what worker waited on
        self.assertNotIn("holder", [x["thread"] for x in d["suspects"]])
        self.assertEqual(d["suspects"][0]["thread"], "worker")


if __name__ == "__main__":
    import unittest
    unittest.main()
