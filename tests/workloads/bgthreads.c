/* bgthreads: a process whose second thread ("bg-helper") exists before a
 * recording starts; used to check that argusq record keeps each task's TGID
 * (tracefs saved_tgids) so the thread is put in its process. */
#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>
#include <sys/prctl.h>
static void *run(void *x) { (void)x; prctl(PR_SET_NAME, "bg-helper"); for (;;) usleep(20000); return 0; }
int main(void) { pthread_t t; pthread_create(&t, 0, run, 0); for (;;) usleep(20000); }
