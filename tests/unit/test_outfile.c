/* tests/unit/test_outfile.c -- base/outfile.c, the files argusq writes at
 * a path the user named: commit puts the whole new file in place, abort
 * (a statement that failed half-way) leaves the old file byte for byte
 * and no temporary file beside it, EXCL never replaces a file, a
 * symbolic link stays a link to the new data, the old file's mode is
 * kept, a FIFO is written in place; and base_dir_of's three shapes. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "base/base.h"

typedef struct {
    char dir[64];
    char path[128];
} fixture;

static int setup(void **state)
{
    fixture *f = calloc(1, sizeof *f);
    if (!f)
        return -1;
    snprintf(f->dir, sizeof f->dir, "/tmp/argusq-outfile-XXXXXX");
    if (!mkdtemp(f->dir)) {
        free(f);
        return -1;
    }
    snprintf(f->path, sizeof f->path, "%s/out.txt", f->dir);
    *state = f;
    return 0;
}

static int teardown(void **state)
{
    fixture *f = *state;
    DIR *d = opendir(f->dir);
    struct dirent *e;
    char p[512];
    while (d && (e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", f->dir, e->d_name);
            unlink(p);
        }
    if (d)
        closedir(d);
    rmdir(f->dir);
    free(f);
    return 0;
}

static void put(const char *path, const char *text)
{
    FILE *fp = fopen(path, "w");
    assert_non_null(fp);
    fputs(text, fp);
    assert_int_equal(fclose(fp), 0);
}

/* the whole content of path, into buf (len bytes, NUL-terminated) */
static const char *got(const char *path, char *buf, size_t len)
{
    FILE *fp = fopen(path, "r");
    assert_non_null(fp);
    size_t n = fread(buf, 1, len - 1, fp);
    buf[n] = '\0';
    fclose(fp);
    return buf;
}

/* how many entries the directory has besides . and .. */
static int entries(const char *dir)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
    closedir(d);
    return n;
}

static void test_commit_replaces_whole(void **state)
{
    fixture *f = *state;
    char err[256], buf[256];
    put(f->path, "old\n");
    base_outfile o;
    assert_int_equal(base_outfile_open(&o, f->path, 0, err, sizeof err), 0);
    /* the data goes under another name until commit */
    assert_string_not_equal(base_outfile_name(&o), f->path);
    fputs("new ", o.f);
    fflush(o.f);
    assert_string_equal(got(f->path, buf, sizeof buf), "old\n");
    assert_int_equal(entries(f->dir), 2);
    fputs("data\n", o.f);
    assert_int_equal(base_outfile_commit(&o, err, sizeof err), 0);
    assert_string_equal(got(f->path, buf, sizeof buf), "new data\n");
    assert_int_equal(entries(f->dir), 1);
}

static void test_abort_leaves_old(void **state)
{
    fixture *f = *state;
    char err[256], buf[256];
    put(f->path, "old\n");
    base_outfile o;
    assert_int_equal(base_outfile_open(&o, f->path, 0, err, sizeof err), 0);
    fputs("half of a result", o.f);
    base_outfile_abort(&o);
    assert_string_equal(got(f->path, buf, sizeof buf), "old\n");
    assert_int_equal(entries(f->dir), 1);

    /* no file before: none after */
    unlink(f->path);
    assert_int_equal(base_outfile_open(&o, f->path, 0, err, sizeof err), 0);
    fputs("x", o.f);
    base_outfile_abort(&o);
    assert_int_equal(entries(f->dir), 0);
}

static void test_excl(void **state)
{
    fixture *f = *state;
    char err[256], buf[256];
    base_outfile o;
    put(f->path, "old\n");
    assert_int_equal(base_outfile_open(&o, f->path, BASE_OUTFILE_EXCL, err, sizeof err), -1);
    assert_non_null(strstr(err, f->path));
    assert_non_null(strstr(err, strerror(EEXIST)));
    assert_string_equal(got(f->path, buf, sizeof buf), "old\n");

    /* a file that came while it was written is not replaced either */
    unlink(f->path);
    assert_int_equal(base_outfile_open(&o, f->path, BASE_OUTFILE_EXCL, err, sizeof err), 0);
    fputs("mine\n", o.f);
    put(f->path, "theirs\n");
    assert_int_equal(base_outfile_commit(&o, err, sizeof err), -1);
    assert_string_equal(got(f->path, buf, sizeof buf), "theirs\n");
    assert_int_equal(entries(f->dir), 1);

    unlink(f->path);
    assert_int_equal(base_outfile_open(&o, f->path, BASE_OUTFILE_EXCL, err, sizeof err), 0);
    fputs("mine\n", o.f);
    assert_int_equal(base_outfile_commit(&o, err, sizeof err), 0);
    assert_string_equal(got(f->path, buf, sizeof buf), "mine\n");
}

static void test_link_and_mode_kept(void **state)
{
    fixture *f = *state;
    char err[256], buf[256], target[160];
    snprintf(target, sizeof target, "%s/target.txt", f->dir);
    put(target, "old\n");
    assert_int_equal(chmod(target, 0640), 0);
    assert_int_equal(symlink("target.txt", f->path), 0);
    base_outfile o;
    assert_int_equal(base_outfile_open(&o, f->path, 0, err, sizeof err), 0);
    fputs("new\n", o.f);
    assert_int_equal(base_outfile_commit(&o, err, sizeof err), 0);
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISLNK(st.st_mode));
    assert_string_equal(got(target, buf, sizeof buf), "new\n");
    assert_int_equal(stat(target, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0640);
    assert_int_equal(entries(f->dir), 2);
}

static void test_fifo_in_place(void **state)
{
    fixture *f = *state;
    char err[256];
    assert_int_equal(mkfifo(f->path, 0600), 0);
    /* a reader, so that opening the FIFO for writing does not block */
    int rd = open(f->path, O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    base_outfile o;
    assert_int_equal(base_outfile_open(&o, f->path, 0, err, sizeof err), 0);
    assert_string_equal(base_outfile_name(&o), f->path);
    fputs("through", o.f);
    assert_int_equal(base_outfile_commit(&o, err, sizeof err), 0);
    char buf[16] = {0};
    assert_int_equal(read(rd, buf, sizeof buf - 1), 7);
    assert_string_equal(buf, "through");
    close(rd);
    struct stat st;
    assert_int_equal(lstat(f->path, &st), 0);
    assert_true(S_ISFIFO(st.st_mode));
}

static void test_unwritable_dir(void **state)
{
    fixture *f = *state;
    char err[256];
    char path[192];
    snprintf(path, sizeof path, "%s/no/such/dir/out.txt", f->dir);
    base_outfile o;
    assert_int_equal(base_outfile_open(&o, path, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, path));
    assert_null(o.path);
    assert_null(o.tmp);
}

static void test_dir_of(void **state)
{
    (void)state;
    char dir[64];
    assert_string_equal(base_dir_of("a.db", dir, sizeof dir), "a.db");
    assert_string_equal(dir, ".");
    assert_string_equal(base_dir_of("/a.db", dir, sizeof dir), "a.db");
    assert_string_equal(dir, "/");
    assert_string_equal(base_dir_of("x/y/a.db", dir, sizeof dir), "a.db");
    assert_string_equal(dir, "x/y");
    assert_int_equal(base_sync_dir_of("/tmp/anything"), 0);
    assert_int_equal(base_sync_dir_of("/no/such/dir/x"), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_commit_replaces_whole, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_leaves_old, setup, teardown),
        cmocka_unit_test_setup_teardown(test_excl, setup, teardown),
        cmocka_unit_test_setup_teardown(test_link_and_mode_kept, setup, teardown),
        cmocka_unit_test_setup_teardown(test_fifo_in_place, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unwritable_dir, setup, teardown),
        cmocka_unit_test(test_dir_of),
    };
    return cmocka_run_group_tests_name("outfile", tests, NULL, NULL);
}
