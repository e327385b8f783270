/* wbwait: an fsync that pays for another process's writes.  Process
 * "ui-main" has a thread "saver" that, on each request (mutex and
 * condition variable), appends a 128-byte record to a log file and
 * fsync()s it; ui-main asks six times, 30 ms apart.  Process "bulk",
 * forked at the start, appends to the same file (O_APPEND) 64 KiB every
 * 10 ms and starts their writeback at once with
 * sync_file_range(SYNC_FILE_RANGE_WRITE) without waiting for it (as
 * RocksDB's bytes_per_sync does).  With "anomaly", just before request 3
 * bulk appends MB MiB and starts the writeback of all of it; ui-main
 * sends the request when that sync_file_range has returned (the requests
 * are submitted, in bulk's context; a shared flag times it).  saver's
 * fsync first waits for every page of the file under writeback (bulk's
 * requests: 6 to 23 ms here), then for its own cache flush (REQ_PREFLUSH,
 * queued by saver, issued by kblockd), which this virtual disk completes
 * only when what it was sent before -- bulk's MB MiB -- is durable on the
 * host: 150 to 200 ms for 320 MiB.  Without bulk's data both take well
 * under a millisecond.  The culprit is bulk (io): the disk is busy with
 * the data bulk wrote; saver issues only its own tail page, its inode
 * and the flush.
 *
 *   wbwait normal|anomaly [FILE [MB]]   (default ./wbwait.data, 320) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>

#include "timing.h"

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int req, done, quit, logfd;
static volatile int *shared;   /* [0]: 1 = write the big batch now, [1]: 1 = writing, 2 = its writeback started, [2]: stop */

static void *saver(void *x) {
  (void)x; prctl(PR_SET_NAME, "saver");
  char rec[128];
  int seen = 0;
  for (;;) {
    pthread_mutex_lock(&q);
    while (req == seen && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    seen = req;
    pthread_mutex_unlock(&q);
    memset(rec, 'a' + seen, sizeof rec);
    if (write(logfd, rec, sizeof rec) != sizeof rec || fsync(logfd)) _exit(3);
    pthread_mutex_lock(&q); done = seen; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}
static void bulk(const char *path, int mb) {
  prctl(PR_SET_NAME, "bulk");
  int fd = open(path, O_WRONLY | O_APPEND);
  static char buf[1 << 20];
  memset(buf, 'b', sizeof buf);
  while (!shared[2]) {
    if (shared[0] == 1) {
      shared[0] = 2; shared[1] = 1;
      for (int i = 0; i < mb; i++)
        if (write(fd, buf, sizeof buf) != (ssize_t)sizeof buf) _exit(3);
      sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
      shared[1] = 2;
    } else {
      if (write(fd, buf, 64 << 10) != 64 << 10) _exit(3);
      sync_file_range(fd, 0, 0, SYNC_FILE_RANGE_WRITE);
    }
    msleep(10);
  }
  _exit(0);
}
int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  const char *path = argc > 2 ? argv[2] : "wbwait.data";
  int mb = argc > 3 ? atoi(argv[3]) : 320;
  if (mb < 1) mb = 1;
  shared = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  logfd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_APPEND, 0600);
  if (shared == MAP_FAILED || logfd < 0) return 2;
  pid_t b = fork();
  if (b == 0) bulk(path, mb);
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  pthread_t s; pthread_create(&s, 0, saver, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    if (anomaly && i == 3) { shared[0] = 1; while (shared[1] != 2) msleep(1); }
    pthread_mutex_lock(&q); req = i + 1; pthread_cond_signal(&req_cv);
    while (done < i + 1) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(s, 0);
  shared[2] = 1; waitpid(b, 0, 0);
  unlink(path);
  return 0;
}
