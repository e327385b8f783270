/* tests/unit/test_arch.c -- base/arch.c: each machine's syscall table as
 * the kernel's headers give it, checked against numbers read here from
 * the kernels' own syscall tables (arch/x86/entry/syscalls/syscall_64.tbl
 * and syscall_32.tbl, arch/arm/tools/syscall.tbl, include/uapi/asm-generic/
 * unistd.h for arm64 and riscv64): futex, whose number 240 a 32-bit ARM
 * trace once had named by the x86-64 table (mq_open), and the first and
 * some machine-only calls; the spellings of uname -m; a name to its
 * number and back; and a signature of numbers read with a machine's table
 * (graph_syscall_forms). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "graph/graph.h"

static void assert_nr(const char *machine, uint32_t nr, const char *name)
{
    const base_arch *a = base_arch_find(machine);
    if (!a)
        fail_msg("no machine %s", machine);
    const char *got = base_arch_syscall(a, nr);
    if (!got || strcmp(got, name) != 0)
        fail_msg("%s: syscall %u is %s, want %s", machine, nr, got ? got : "(none)", name);
    uint32_t back;
    assert_true(base_arch_syscall_nr(a, name, strlen(name), &back));
    assert_int_equal(back, nr);
}

static void test_futex_everywhere(void **state)
{
    (void)state;
    assert_nr("x86_64", 202, "futex");
    assert_nr("i386", 240, "futex");
    assert_nr("arm", 240, "futex");
    assert_nr("arm64", 98, "futex");
    assert_nr("riscv64", 98, "futex");
    assert_nr("x86_64", 240, "mq_open"); /* what a 32-bit ARM trace's 240 was called before */
}

static void test_each_machine(void **state)
{
    (void)state;
    assert_nr("x86_64", 0, "read");
    assert_nr("x86_64", 1, "write");
    assert_nr("x86_64", 435, "clone3");
    assert_nr("i386", 3, "read");
    assert_nr("i386", 4, "write");
    assert_nr("i386", 102, "socketcall");
    assert_nr("arm", 0, "restart_syscall"); /* EABI: no base of 0x900000 */
    assert_nr("arm", 3, "read");
    assert_nr("arm", 341, "sync_file_range2"); /* the alias the tracepoints print */
    assert_nr("arm64", 63, "read");
    assert_nr("arm64", 64, "write");
    assert_nr("arm64", 25, "fcntl"); /* __NR3264_fcntl on a 64-bit machine */
    assert_nr("arm64", 79, "newfstatat");
    assert_nr("riscv64", 259, "riscv_flush_icache"); /* __NR_arch_specific_syscall + 15 */
    assert_null(base_arch_syscall(base_arch_find("arm"), 102)); /* socketcall: OABI only */
    assert_null(base_arch_syscall(base_arch_find("x86_64"), 999));
    assert_null(base_arch_syscall(base_arch_find("x86_64"), UINT64_MAX));
    uint32_t nr = 7;
    assert_false(base_arch_syscall_nr(base_arch_find("x86_64"), "fute", 4, &nr)); /* a prefix is not a name */
    assert_false(base_arch_syscall_nr(base_arch_find("x86_64"), "futexes", 7, &nr));
    assert_true(base_arch_syscall_nr(base_arch_find("x86_64"), "futex_waitv", 5, &nr)); /* len bytes only */
    assert_int_equal(nr, 202);
    assert_false(base_arch_syscall_nr(base_arch_find("arm64"), "open", 4, &nr)); /* the generic table has openat */
}

static void test_spellings(void **state)
{
    (void)state;
    static const char *const same[][2] = {{"amd64", "x86_64"}, {"x86-64", "x86_64"}, {"aarch64", "arm64"},
                                          {"armv7l", "arm"},   {"armhf", "arm"},      {"i686", "i386"},
                                          {"riscv64", "riscv64"}};
    for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
        const base_arch *a = base_arch_find(same[i][0]);
        assert_non_null(a);
        assert_string_equal(base_arch_name(a), same[i][1]);
    }
    assert_null(base_arch_find("mips"));
    assert_null(base_arch_find(""));
    assert_null(base_arch_find(NULL));
    assert_null(base_arch_find("X86_64")); /* uname never says it so */
}

static void test_forms(void **state)
{
    (void)state;
    uint32_t x_num, x_name, a_num, a_name;
    assert_true(graph_syscall_forms(base_arch_find("x86_64"), 202, &x_num, &x_name));
    assert_true(graph_syscall_forms(base_arch_find("arm64"), 98, &a_num, &a_name));
    assert_int_equal(x_name, a_name); /* futex is futex on either */
    assert_int_not_equal(x_num, a_num);
    assert_int_not_equal(x_num, x_name);
    assert_false(graph_syscall_forms(base_arch_find("x86_64"), 999, &x_num, &x_name));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_futex_everywhere),
        cmocka_unit_test(test_each_machine),
        cmocka_unit_test(test_spellings),
        cmocka_unit_test(test_forms),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
