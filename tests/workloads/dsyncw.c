/* dsyncw: a synchronous write behind another process's flush.  Process
 * "ui-main" asks its thread "journal" six times, 30 ms apart, through an
 * eventfd, to append a 512-byte record to journal file J opened with
 * O_DSYNC (each write returns once the record is durable: the kernel
 * writes it and flushes the disk's cache, or writes it with FUA), and
 * waits for the answer on a second eventfd.  Process "dumper", forked at
 * the start, writes 256 KiB to its own file D every 10 ms and
 * fdatasync()s it.  With "anomaly", before request 3 dumper writes MB MiB
 * to D (page cache only: write() returns at once) and calls fdatasync(D)
 * -- which writes them out and waits -- and ui-main sends request 3 once
 * that call has begun (a shared flag; 20 ms later, so the writes are
 * queued).  J and D are different files on the same disk; nothing but
 * the disk joins journal to dumper.  The culprit is dumper (io): the
 * disk is busy with dumper's data when journal's record and its flush
 * come.
 *
 *   dsyncw normal|anomaly [DIR [MB]]   (default ., 320; files DIR/dsyncw.j, DIR/dsyncw.d) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "timing.h"

static int ask, answer, jfd;
static volatile int *shared; /* [0]: 1 = dump now, [1]: 1 = dumping, [2]: stop */

static void *journal(void *x) {
  (void)x; prctl(PR_SET_NAME, "journal");
  char rec[512];
  uint64_t v;
  while (read(ask, &v, sizeof v) == sizeof v && v < 1000) {
    memset(rec, 'j', sizeof rec);
    if (write(jfd, rec, sizeof rec) != sizeof rec) _exit(3);
    v = 1;
    if (write(answer, &v, sizeof v) != sizeof v) _exit(3);
  }
  return 0;
}
static void dumper(const char *path, int mb) {
  prctl(PR_SET_NAME, "dumper");
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  static char buf[1 << 20];
  memset(buf, 'd', sizeof buf);
  while (!shared[2]) {
    if (shared[0] == 1) {
      shared[0] = 2;
      for (int i = 0; i < mb; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) _exit(3);
      shared[1] = 1;
      fdatasync(fd);
    } else {
      if (write(fd, buf, 256 << 10) != 256 << 10) _exit(3);
      fdatasync(fd);
    }
    msleep(10);
  }
  _exit(0);
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  const char *dir = argc > 2 ? argv[2] : ".";
  int mb = argc > 3 ? atoi(argv[3]) : 320;
  char jp[4096], dp[4096];
  snprintf(jp, sizeof jp, "%s/dsyncw.j", dir);
  snprintf(dp, sizeof dp, "%s/dsyncw.d", dir);
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  jfd = open(jp, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_DSYNC, 0644);
  ask = eventfd(0, 0); answer = eventfd(0, 0);
  if (jfd < 0 || ask < 0 || answer < 0 || shared == MAP_FAILED) return 1;
  pid_t d = fork();
  if (d == 0) dumper(dp, mb);
  pthread_t j; pthread_create(&j, 0, journal, 0);
  uint64_t v;
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { shared[0] = 1; while (!shared[1]) msleep(1); msleep(20); }
    v = 1;
    if (write(ask, &v, sizeof v) != sizeof v || read(answer, &v, sizeof v) != sizeof v) return 1;
    work(200);
  }
  v = 1000;
  if (write(ask, &v, sizeof v) != sizeof v) return 1;
  shared[2] = 1;
  pthread_join(j, 0); waitpid(d, 0, 0);
  unlink(jp); unlink(dp);
  return 0;
}
