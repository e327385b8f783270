"""Archives a user can read but not write.  An archive in a
directory the user may not write, or on a read-only file system, is read
without LMDB's lock file (which cannot be made there), quietly; a change
to it is refused naming the archive and saying why; every message names
the file it is about; and a failed open leaves no file behind."""
import json
import os
import pwd
import shutil
import subprocess

from common import ARGUSQ, ArchiveCase, trace

NORMAL = trace("lockchain-normal.txt")
UI = 'find nodes where thread = "ui-main" order by blocked desc limit 3'


def user_exists(name):
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False


class OtherUser(ArchiveCase):
    """root ingests into ro/a.db, and makes ro read-only (0555, root's);
    nobody reads it (runuser).  Paths are relative to the test's
    directory, so that messages can be checked whole."""

    def setUp(self):
        if os.geteuid() != 0 or not shutil.which("runuser") or not user_exists("nobody"):
            self.skipTest("needs root, runuser and the user nobody")
        super().setUp()
        os.chmod(self.dir, 0o755)
        # the binary where nobody can run it: the build may be in a
        # directory only root may enter
        os.mkdir(os.path.join(self.dir, "bin"), 0o755)
        self.bin = os.path.join(self.dir, "bin", "argusq")
        shutil.copy(ARGUSQ, self.bin)
        os.chmod(self.bin, 0o755)
        self.ro = os.path.join(self.dir, "ro")
        os.mkdir(self.ro)
        self.db = "ro/a.db"
        self.ingest(NORMAL, name="normal")
        self.traces = self.json("traces")
        self.nodes = self.ok(UI).stdout
        os.unlink(os.path.join(self.ro, "a.db-lock"))
        os.chmod(self.ro, 0o555)

    def as_nobody(self, *args):
        env = dict(os.environ)
        env.pop("ARGUSQ_DB", None)
        return subprocess.run(["runuser", "-u", "nobody", "--", self.bin, "-d", self.db] + list(args),
                              capture_output=True, text=True, env=env, cwd=self.dir, timeout=120)

    def files(self):
        return sorted(os.listdir(self.ro))

    def reads(self):
        """nobody's answers are root's, and nothing is said on stderr."""
        p = self.as_nobody("--json", "traces")
        self.assertEqual((p.returncode, p.stderr), (0, ""))
        self.assertEqual(json.loads(p.stdout), self.traces)
        p = self.as_nobody(UI)
        self.assertEqual((p.returncode, p.stderr, p.stdout), (0, "", self.nodes))

    def test_an_archive_in_a_directory_it_cannot_write_is_read(self):
        self.reads()
        self.assertEqual(self.files(), ["a.db"])  # no lock file
        # and with root's lock file there, which nobody may not write
        self.ok("traces")
        self.assertEqual(self.files(), ["a.db", "a.db-lock"])
        self.reads()

    def test_a_change_is_refused_naming_the_archive_and_why(self):
        p = self.as_nobody('label trace "normal" set run = "slow"')
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("ro/a.db: the archive is read-only: this user may not write it (Permission denied)", p.stderr)
        p = self.as_nobody("ingest", NORMAL, "--name", "again")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("argusq: ro/a.db: cannot write the archive: Permission denied\n", p.stderr)
        self.assertEqual(self.files(), ["a.db"])
        self.assertEqual(self.json("traces"), self.traces)

    def test_a_writable_archive_in_a_directory_it_cannot_write(self):
        """The archive file may be written, its lock file cannot be made:
        read without it; a change names the lock file."""
        os.chmod(os.path.join(self.ro, "a.db"), 0o666)
        self.reads()
        self.assertEqual(self.files(), ["a.db"])
        p = self.as_nobody('label trace "normal" set run = "slow"')
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertIn("ro/a.db: the archive is read-only: its lock file ro/a.db-lock cannot be made or written "
                      "(Permission denied), so it was opened without one, for reading only", p.stderr)
        p = self.as_nobody("ingest", NORMAL, "--name", "again")
        self.assertEqual(p.returncode, 2, p.stderr)
        self.assertIn("argusq: ro/a.db-lock: Permission denied (the lock file of ro/a.db, which writing it needs)",
                      p.stderr)
        self.assertEqual(self.files(), ["a.db"])
        self.assertEqual(self.json("traces"), self.traces)

    def test_an_archive_it_may_not_read_leaves_no_lock_file(self):
        """Another user's private archive in a directory everyone writes
        (as /tmp): refused naming the archive; nobody's failed opens leave
        no lock file of theirs beside it."""
        os.chmod(self.ro, 0o1777)
        os.chmod(os.path.join(self.ro, "a.db"), 0o600)
        p = self.as_nobody("traces")
        self.assertEqual(p.returncode, 2)
        self.assertEqual(p.stderr, "argusq: ro/a.db: Permission denied\n")
        p = self.as_nobody("ingest", NORMAL, "--name", "again")
        self.assertEqual(p.returncode, 2)
        self.assertIn("argusq: ro/a.db: cannot write the archive: Permission denied\n", p.stderr)
        self.assertEqual(self.files(), ["a.db"])


class ReadOnlyMedia(ArchiveCase):
    """An archive on a file system mounted read-only (a tmpfs remounted
    ro, as root): read, with or without a lock file there; a change is
    refused saying so."""

    def mount(self, *opts):
        p = subprocess.run(["mount"] + list(opts), capture_output=True, text=True, timeout=60)
        return p.returncode == 0

    def test_read_only_file_system(self):
        if os.geteuid() != 0 or not shutil.which("mount"):
            self.skipTest("needs root to mount a file system")
        mnt = os.path.join(self.dir, "mnt")
        os.mkdir(mnt)
        if not self.mount("-t", "tmpfs", "-o", "size=16m", "tmpfs", mnt):
            self.skipTest("cannot mount a tmpfs here")
        try:
            self.db = "mnt/a.db"
            self.ingest(NORMAL, name="normal")
            want = self.json("traces")
            os.unlink(os.path.join(mnt, "a.db-lock"))
            if not self.mount("-o", "remount,ro", mnt):
                self.skipTest("cannot remount the tmpfs read-only")
            for lock in (False, True):
                if lock:  # root's lock file, made before the file system went read-only
                    self.assertTrue(self.mount("-o", "remount,rw", mnt))
                    self.ok("traces")
                    self.assertTrue(self.mount("-o", "remount,ro", mnt))
                p = self.ok("--json", "traces")
                self.assertEqual(p.stderr, "")
                self.assertEqual(self.json("traces"), want)
                self.assertEqual(sorted(os.listdir(mnt)), ["a.db", "a.db-lock"] if lock else ["a.db"])
                p = self.run_argusq('label trace "normal" set run = "slow"')
                self.assertEqual(p.returncode, 1, p.stderr)
                self.assertIn("mnt/a.db: the archive is read-only: its file system is mounted read-only", p.stderr)
                p = self.run_argusq("ingest", NORMAL, "--name", "again")
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("argusq: mnt/a.db: cannot write the archive: Read-only file system\n", p.stderr)
        finally:
            subprocess.run(["umount", mnt], capture_output=True, timeout=60)


class FailedOpens(ArchiveCase):
    """-d naming no archive: every command fails naming the path, and
    leaves the directory as it was (no lock file, no new file).  A read of
    a missing archive says there is none; an ingest makes it."""

    COMMANDS = [["traces"], [UI], ["info"], ["dump"], ["compact"], ["backup", "b.db"], ["--list-traces"],
                ["ingest", NORMAL, "--arch", "x86_64"]]

    def check(self, path, message, commands):
        before = sorted(os.listdir(self.dir))
        self.db = path
        for args in commands:
            p = self.run_argusq(*args)
            if args == ["--list-traces"]:  # bash completion: quiet, and nothing to list
                self.assertEqual((p.returncode, p.stdout, p.stderr), (0, "", ""))
            else:
                self.assertNotEqual(p.returncode, 0, args)
                self.assertIn(f"argusq: {path}: {message}", p.stderr, args)
            self.assertEqual(sorted(os.listdir(self.dir)), before, args)

    def test_a_file_that_is_not_an_archive(self):
        with open(os.path.join(self.dir, "garbage.bin"), "wb") as f:
            f.write(b"not an archive\n" * 1000)
        self.check("garbage.bin", "not an argusq archive", self.COMMANDS)

    def test_a_directory(self):
        os.mkdir(os.path.join(self.dir, "sub"))
        self.check("sub", "Is a directory", self.COMMANDS)

    def test_a_missing_archive_is_made_by_an_ingest_only(self):
        self.check("nosuch.db", "no such archive", self.COMMANDS[:-1])
        self.check("nodir/x.db", "", self.COMMANDS)
        self.db = "nosuch.db"
        self.ok("ingest", NORMAL, "--arch", "x86_64")
        self.assertEqual(sorted(os.listdir(self.dir)), ["nosuch.db", "nosuch.db-lock"])
        self.assertEqual([t["name"] for t in self.json("traces")["traces"]], ["lockchain-normal.txt"])
