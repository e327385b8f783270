"""Files argusq writes where the user says (data safety): `export
... to "FILE"`, `argusq dump -o FILE`, `argusq backup FILE`.  Each is
written under a temporary name beside FILE and renamed over it once whole
(base/outfile.c): a failure leaves the old file byte for byte, a success
replaces it, and no temporary file is left either way."""
import json
import os
import resource
import stat
import subprocess

from common import ARGUSQ, ArchiveCase, trace

# bytes no output of argusq could be: the old file is kept as it was
PRECIOUS = b"precious \xff\x00 not json\n"


class UserFiles(ArchiveCase):
    def setUp(self):
        super().setUp()
        self.ingest(trace("lockchain-anomaly.txt"), name="anomaly")
        self.files = sorted(os.listdir(self.dir))  # argus.db, argus.db-lock

    def precious(self, name, mode=0o640):
        path = os.path.join(self.dir, name)
        with open(path, "wb") as f:
            f.write(PRECIOUS)
        os.chmod(path, mode)
        return path

    def assert_kept(self, path, mode=0o640):
        with open(path, "rb") as f:
            self.assertEqual(f.read(), PRECIOUS)
        self.assertEqual(stat.S_IMODE(os.lstat(path).st_mode), mode)

    def assert_no_temporary(self, *names):
        """The directory holds the archive and names, nothing else."""
        self.assertEqual(sorted(os.listdir(self.dir)), sorted(self.files + list(names)))

    def limited(self, *args, fsize=None, umask=None):
        """argusq with a file size limit (writes past it fail with EFBIG:
        argusq ignores SIGXFSZ) or a umask of its own."""
        def child():
            if fsize is not None:
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
            if umask is not None:
                os.umask(umask)
        return subprocess.run([ARGUSQ, "-d", self.db] + list(args), capture_output=True, text=True,
                              cwd=self.dir, timeout=120, preexec_fn=child)

    def test_a_failed_export_keeps_the_old_file(self):
        keep = self.precious("keep.json")
        # the statement fails: the file was there before, and stays
        p = self.run_argusq('export slice back from node 99999 to "keep.json"')
        self.assertEqual(p.returncode, 1)
        self.assertIn("no node 99999", p.stderr)
        self.assert_kept(keep)
        self.assert_no_temporary("keep.json")
        # the statement runs but its output cannot be written whole (a
        # file size limit: about 200 KB of events against 64 KB)
        p = self.limited('export find events to "keep.json"', fsize=64 << 10)
        self.assertEqual(p.returncode, 1)
        self.assertIn("keep.json: File too large", p.stderr)
        self.assert_kept(keep)
        self.assert_no_temporary("keep.json")
        # a whole output replaces it, with the old file's mode
        p = self.ok('export find events to "keep.json"')
        self.assertIn("exported to keep.json (json)", p.stdout)
        with open(keep) as f:
            self.assertEqual(len(json.load(f)["events"]), 1105)
        self.assertEqual(stat.S_IMODE(os.stat(keep).st_mode), 0o640)
        self.assert_no_temporary("keep.json")
        # a failed statement where there was no file leaves none
        p = self.run_argusq('export slice back from node 99999 to "none.json"')
        self.assertEqual(p.returncode, 1)
        self.assert_no_temporary("keep.json")

    def test_export_through_a_link_replaces_its_target(self):
        target = self.precious("target.json")
        os.symlink("target.json", os.path.join(self.dir, "link.json"))
        p = self.run_argusq('export slice back from node 99999 to "link.json"')
        self.assertEqual(p.returncode, 1)
        self.assert_kept(target)
        self.ok('export traces to "link.json"')
        self.assertEqual(os.readlink(os.path.join(self.dir, "link.json")), "target.json")
        with open(target) as f:
            self.assertEqual(json.load(f)["traces"][0]["name"], "anomaly")
        self.assertEqual(stat.S_IMODE(os.stat(target).st_mode), 0o640)
        self.assert_no_temporary("target.json", "link.json")
        # what is not a regular file is written as it is: nothing to keep
        self.assertIn("exported to /dev/null", self.ok('export traces to "/dev/null"').stdout)

    def test_a_failed_dump_keeps_the_old_file(self):
        keep = self.precious("lc.argus", mode=0o600)
        p = self.limited("dump", "-o", "lc.argus", fsize=64 << 10)
        self.assertEqual(p.returncode, 1)
        self.assertIn("File too large", p.stderr)
        self.assert_kept(keep, mode=0o600)
        self.assert_no_temporary("lc.argus")
        # replaced when whole, keeping its mode (a private file stays one)
        # and a link to it
        os.symlink("lc.argus", os.path.join(self.dir, "latest.argus"))
        self.ok("dump", "-o", "latest.argus")
        self.assertTrue(os.path.islink(os.path.join(self.dir, "latest.argus")))
        with open(keep) as f:
            self.assertTrue(f.read().startswith("#argus-trace 1\n"))
        self.assertEqual(stat.S_IMODE(os.stat(keep).st_mode), 0o600)
        self.assert_no_temporary("lc.argus", "latest.argus")

    def test_a_failed_backup_leaves_no_file(self):
        p = self.limited("backup", "copy.db", fsize=64 << 10)
        self.assertEqual(p.returncode, 1)
        self.assertIn("copy", p.stderr)
        self.assert_no_temporary()
        # an existing file is never replaced by a backup
        keep = self.precious("old.db")
        p = self.run_argusq("backup", "old.db")
        self.assertEqual(p.returncode, 1)
        self.assertIn("old.db: File exists", p.stderr)
        self.assert_kept(keep)
        self.ok("backup", "copy.db")
        self.assertEqual(self.json("-d", os.path.join(self.dir, "copy.db"), "traces", db=False)["traces"][0]["name"],
                         "anomaly")
        self.assert_no_temporary("old.db", "copy.db", "copy.db-lock")

    def test_new_files_have_the_mode_fopen_gives(self):
        """0666 less the umask: a private umask keeps every file private,
        a group's umask gives the group write access to each (a backup was
        0644 whatever the umask allowed)."""
        for args, name in ((['export traces to "t.json"'], "t.json"), (["dump", "-o", "t.argus"], "t.argus"),
                           (["backup", "t.db"], "t.db")):
            with self.subTest(name=name):
                p = self.limited(*args, umask=0o077)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, name)).st_mode), 0o600)
                p = self.limited(*args[:-1], args[-1].replace("t.", "g."), umask=0o002)
                self.assertEqual(p.returncode, 0, p.stderr)
                self.assertEqual(stat.S_IMODE(os.stat(os.path.join(self.dir, "g." + name[2:])).st_mode), 0o664)
        self.assert_no_temporary("t.json", "t.argus", "t.db", "g.json", "g.argus", "g.db")
