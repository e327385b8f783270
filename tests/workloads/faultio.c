/* faultio: disk reads issued by page faults, not by any read system call.
 * Thread "ui-main" asks thread "loader" (mutex and condition variable) to
 * look up records in an index file six times, 30 ms apart.  The loader has
 * the file mapped (mmap, MAP_SHARED, read only) and looks a record up by
 * touching its page.  The file (64 MiB) is written and synced at the start,
 * then dropped from the page cache (posix_fadvise DONTNEED); the mapping
 * is madvise(MADV_RANDOM), as databases that mmap their files do (no
 * read-around: this machine's read_ahead_kb is 8 MiB), and its first
 * 64 KiB are touched (warm) before the first request.  Each request
 * touches one page of that warm part; with "anomaly", request 3 touches
 * FAULTS pages scattered over the cold rest of the file, so each touch is
 * a major fault: the loader sleeps in the fault handler while the disk
 * reads the page.  No read() is issued; ui-main's wait is the loader's
 * wait on the disk.  The culprit is the loader, waiting for its own I/O.
 *
 *   faultio normal|anomaly [FILE [FAULTS]]   (default ./faultio.data, 1000) */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "timing.h"

#define FILE_MB 64
#define NPAGES ((FILE_MB << 20) / 4096)
#define WARM 16                          /* pages read back before the requests */

static pthread_mutex_t q = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static int req, done, quit;
static const volatile char *map;
static volatile unsigned long sum;

static void *loader(void *x) {
  (void)x; prctl(PR_SET_NAME, "loader");
  for (;;) {
    pthread_mutex_lock(&q);
    while (!req && !quit) pthread_cond_wait(&req_cv, &q);
    if (quit) { pthread_mutex_unlock(&q); break; }
    int n = req; req = 0;
    pthread_mutex_unlock(&q);
    if (n == 1) sum += map[4096 * (sum % WARM)];              /* a warm page */
    else                                                      /* n cold pages, scattered, each once (4099 is prime) */
      for (int i = 0; i < n; i++) sum += map[(size_t)(WARM + (i * 4099L) % (NPAGES - WARM)) * 4096];
    work(100);
    pthread_mutex_lock(&q); done = 1; pthread_cond_signal(&done_cv); pthread_mutex_unlock(&q);
  }
  return 0;
}

int main(int argc, char **argv) {
  int anomaly = argc > 1 && !strcmp(argv[1], "anomaly");
  const char *path = argc > 2 ? argv[2] : "faultio.data";
  int faults = argc > 3 ? atoi(argv[3]) : 1000;
  if (faults < 2 || faults > NPAGES - WARM) faults = NPAGES - WARM;
  prctl(PR_SET_NAME, "ui-main");
  calibrate();
  int f = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
  if (f < 0) return 2;
  static char chunk[1 << 20];
  for (int i = 0; i < FILE_MB; i++) {
    memset(chunk, i, sizeof chunk);
    if (write(f, chunk, sizeof chunk) != (ssize_t)sizeof chunk) return 2;
  }
  fsync(f);
  posix_fadvise(f, 0, 0, POSIX_FADV_DONTNEED);
  map = mmap(0, (size_t)FILE_MB << 20, PROT_READ, MAP_SHARED, f, 0);
  if (map == MAP_FAILED) return 2;
  madvise((void *)map, (size_t)FILE_MB << 20, MADV_RANDOM);  /* as a database does: no read-around */
  for (int i = 0; i < WARM; i++) sum += map[4096 * i];       /* the warm part */
  pthread_t t; pthread_create(&t, 0, loader, 0);
  for (int i = 0; i < 6; i++) {
    msleep(30);
    pthread_mutex_lock(&q); req = anomaly && i == 3 ? faults : 1; done = 0; pthread_cond_signal(&req_cv);
    while (!done) pthread_cond_wait(&done_cv, &q);
    pthread_mutex_unlock(&q);
    work(200);
  }
  pthread_mutex_lock(&q); quit = 1; pthread_cond_broadcast(&req_cv); pthread_mutex_unlock(&q);
  pthread_join(t, 0);
  munmap((void *)map, (size_t)FILE_MB << 20); close(f);
  unlink(path);
  return 0;
}
