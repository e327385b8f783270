/* diskio: disk reads in another process.  Process "ui-main" writes a
 * request into a pipe to process "backend" and waits for the answer on a
 * second pipe, six times 30 ms apart.  Backend answers after reading one
 * 4 KiB block of a 64 MiB file with O_DIRECT (the page cache cannot
 * answer it: the disk does); with "anomaly", for request 3 it reads 3000
 * blocks at random offsets, one after the other.  The file is made (and
 * synced) before the requests begin, and removed at the end.
 *
 *   diskio normal|anomaly [FILE [READS]]   (default ./diskio.data, 3000) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define FILE_MB 64

static void msleep(long ms) { struct timespec t = {ms / 1000, (ms % 1000) * 1000000L}; nanosleep(&t, 0); }

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  const char *path = argc > 2 ? argv[2] : "diskio.data";
  int reads = argc > 3 ? atoi(argv[3]) : 3000;
  int f = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600);
  if (f < 0) return 2;
  static char chunk[1 << 20];
  memset(chunk, 7, sizeof chunk);
  for (int i = 0; i < FILE_MB; i++) if (write(f, chunk, sizeof chunk) != (ssize_t)sizeof chunk) return 2;
  fsync(f); close(f);
  int req[2], ans[2];
  if (pipe(req) || pipe(ans)) return 2;
  pid_t b = fork();
  if (b == 0) {
    prctl(PR_SET_NAME, "backend");
    close(req[1]); close(ans[0]);
    int fd = open(path, O_RDONLY | O_DIRECT);
    void *buf; if (posix_memalign(&buf, 4096, 4096)) _exit(2);
    unsigned seed = 7;
    int n;
    while (read(req[0], &n, sizeof n) == sizeof n) {
      for (int i = 0; i < n; i++) {
        off_t off = (off_t)(rand_r(&seed) % (FILE_MB * 256)) * 4096;
        if (pread(fd, buf, 4096, off) != 4096) _exit(3);
      }
      if (write(ans[1], &n, sizeof n) != sizeof n) _exit(3);
    }
    _exit(0);
  }
  prctl(PR_SET_NAME, "ui-main");
  close(req[0]); close(ans[1]);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    int n = anomaly && i == 3 ? reads : 1;
    if (write(req[1], &n, sizeof n) != sizeof n || read(ans[0], &n, sizeof n) != sizeof n) return 3;
  }
  close(req[1]); waitpid(b, 0, 0);
  unlink(path);
  return 0;
}
