/* diskpipe: a pipeline whose backend reads a disk through the page cache.
 * Process "ui-main" asks process "front" for a result six times, 30 ms
 * apart; front asks process "index", index asks process "store" (a pipe
 * each way at every hop: three hops), and the answers come back the same
 * way.  Store answers after reading 64 KiB of a 64 MiB file with ordinary
 * buffered pread() (no O_DIRECT): the file is written and synced at the
 * start, then dropped from the page cache (posix_fadvise DONTNEED); only
 * its first 1 MiB is read back before the requests, and normal requests
 * read there, from memory.  With "anomaly", request 3 makes store read
 * READS chunks of 64 KiB at scattered offsets of the cold rest of the
 * file: page-cache misses, each a synchronous read from the disk.  The
 * culprit is store, waiting for its own reads, three processes away.
 *
 *   diskpipe normal|anomaly [FILE [READS]]   (default ./diskpipe.data, 400) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_MB 64
#define CHUNK (64 << 10)
#define NCHUNK ((FILE_MB << 20) / CHUNK)
#define WARM 16                          /* chunks read back before the requests */

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }
static void spin(long us) { struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
  do clock_gettime(CLOCK_MONOTONIC, &b); while ((b.tv_sec - a.tv_sec) * 1000000L + (b.tv_nsec - a.tv_nsec) / 1000 < us); }

/* a hop: read a request from `in`, ask the next hop, pass the answer back */
static void relay(const char *name, int in, int out, int down, int up) {
  prctl(PR_SET_NAME, name);
  int n;
  while (read(in, &n, sizeof n) == sizeof n) {
    spin(50);
    if (write(down, &n, sizeof n) != sizeof n || read(up, &n, sizeof n) != sizeof n) break;
    if (write(out, &n, sizeof n) != sizeof n) break;
  }
  _exit(0);
}

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  const char *path = argc > 2 ? argv[2] : "diskpipe.data";
  int reads = argc > 3 ? atoi(argv[3]) : 400;
  if (reads < 1 || reads > NCHUNK - WARM) reads = NCHUNK - WARM;
  int f = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
  if (f < 0) return 2;
  static char buf[1 << 20];
  for (int i = 0; i < FILE_MB; i++) {
    memset(buf, i, sizeof buf);
    if (write(f, buf, sizeof buf) != (ssize_t)sizeof buf) return 2;
  }
  fsync(f);
  posix_fadvise(f, 0, 0, POSIX_FADV_DONTNEED);
  if (pread(f, buf, WARM * CHUNK, 0) != WARM * CHUNK) return 2;
  close(f);
  /* p[0]: ui-main -> front, p[1]: front -> ui-main, p[2]/p[3]: front <-> index, p[4]/p[5]: index <-> store */
  int p[6][2];
  for (int i = 0; i < 6; i++) if (pipe(p[i])) return 2;
  pid_t kids[3];
  if ((kids[0] = fork()) == 0) {
    prctl(PR_SET_NAME, "store");
    int fd = open(path, O_RDONLY);
    unsigned seed = 7;
    int n;
    while (read(p[4][0], &n, sizeof n) == sizeof n) {
      if (n == 1) {
        if (pread(fd, buf, CHUNK, (off_t)(rand_r(&seed) % WARM) * CHUNK) != CHUNK) _exit(3);
      } else
        for (int i = 0; i < n; i++)          /* scattered, each chunk once: 97 is prime to NCHUNK - WARM */
          if (pread(fd, buf, CHUNK, (off_t)(WARM + (i * 97L) % (NCHUNK - WARM)) * CHUNK) != CHUNK) _exit(3);
      if (write(p[5][1], &n, sizeof n) != sizeof n) _exit(3);
    }
    _exit(0);
  }
  if ((kids[1] = fork()) == 0) relay("index", p[2][0], p[3][1], p[4][1], p[5][0]);
  if ((kids[2] = fork()) == 0) relay("front", p[0][0], p[1][1], p[2][1], p[3][0]);
  prctl(PR_SET_NAME, "ui-main");
  for (int i = 0; i < 6; i++) if (i != 0 && i != 1) { close(p[i][0]); close(p[i][1]); }
  close(p[0][0]); close(p[1][1]);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    int n = anomaly && i == 3 ? reads : 1;
    if (write(p[0][1], &n, sizeof n) != sizeof n || read(p[1][0], &n, sizeof n) != sizeof n) return 3;
    spin(200);
  }
  for (int i = 0; i < 3; i++) { kill(kids[i], SIGTERM); waitpid(kids[i], 0, 0); }
  unlink(path);
  return 0;
}
