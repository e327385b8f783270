# argusq -- see README.md.
#
#   make          build/argusq, and libargusq (build/libargusq.a, build/libargusq.so)
#   make test     unit tests (cmocka) and end-to-end tests, built with ASan+UBSan
#   make demo     ingest a shipped trace into a fresh archive and print a slice
#   make test-fresh  (as root) `make demo` and `make test` of the committed HEAD
#                 in a new minimal Debian 12 root (debootstrap, cached in
#                 /var/cache/argusq-fresh), where only make and gcc are
#                 installed: proves DEBS is complete (tests/fresh.sh;
#                 FRESH_WORKTREE=1 tests the working tree instead)
#   make eval     (as root) the diagnosis evaluation: records every workload of
#                 tests/workloads (normal and anomaly, with argusq record and as
#                 tracefs text) and prints the culprit's rank in `diagnose`, alone
#                 and against the normal run (tests/eval/eval.py; not part of
#                 make test; EVAL_FROM=tests/traces evaluates the committed
#                 recordings instead, EVAL_ARGS="--only faultio -v" and so on)
#   make bench    performance at the paper's scale (bench/run.py; BENCH_EVENTS=2000000 for a quick run)
#   make bench-fleet  only its fleet line: 20 archives on two Dask workers against the CLI
#   make tsan     libargusq's threads test built with ThreadSanitizer
#   make stateful  the archive's invariants under 10,000 random write and admin
#                 steps of each of three seeds (tests/e2e/test_stateful.py)
#   make crashtest  crash states of an ingest of ../shared/traces/pipeline.dat
#                 (tests/crash: an LD_PRELOAD write logger and crashgen.py;
#                 make test runs a short one on a small trace)
#   make install  build/argusq, its man page and bash completion, libargusq
#                 (the .so and .a, include/argusq.h, argusq.pc, argusq(3)) and
#                 the Python package under $(DESTDIR)$(PREFIX) (PREFIX=/usr/local)
#   make clean
#
# A fresh Debian machine has none of the libraries and generators we need:
# the first build installs them with apt-get (as root, or through sudo);
# graphviz is for the tests, which check that `--format dot` is valid DOT
# (and for `--format svg`); man-db and groff-base render the man page;
# python3 runs the end-to-end tests.  `make test-fresh` checks that DEBS
# is all a fresh machine needs: without any one of them the build or a test
# fails, except linux-libc-dev (the syscall table's header) and groff-base
# (man's renderer; the man page test runs groff too), which libc6-dev and
# man-db also pull in, and valgrind, without which its test is skipped.

CC      ?= cc
DEBS    := liblmdb-dev lemon re2c libcmocka-dev libedit-dev pkg-config linux-libc-dev graphviz
# the end-to-end tests (tests/e2e, Python's unittest; json, pty, xml, csv)
DEBS    += python3
# fleet queries (python/argusq/fleet.py and its tests): Dask distributed;
# pandas for Archive.df() (optional to users; its test runs it)
DEBS    += python3-distributed python3-pandas
# trace.dat reading and `argusq record` (ingest/ftrace/tracedat.c, record/)
DEBS    += libtracecmd-dev libtracefs-dev libtraceevent-dev
# Perfetto traces (ingest/perfetto/): protobuf-c and its generator, zlib
DEBS    += protobuf-c-compiler libprotobuf-c-dev zlib1g-dev
# recursive (=): pkg-config runs when a recipe needs it, after the deps are installed
TRACE_PC = libtracecmd libtracefs libtraceevent
TRACE_CFLAGS = $(shell pkg-config --cflags $(TRACE_PC) 2>/dev/null)
# CTF traces (LTTng; ingest/ctf/*.c): libbabeltrace2, opened with dlopen, and
# its plugins (source.ctf.fs, filter.utils.muxer); perf.data is read through
# `perf script` (ingest/perf/perf.c), and the tests record with perf
DEBS    += libbabeltrace2-dev linux-perf
# tests/e2e/test_foreign_sched.py reads the foreign trace.dat files and CTF
# folders with the tools themselves, independently of argusq's readers
DEBS    += trace-cmd babeltrace2
DEBS    += man-db groff-base
# the pictures' test renders the SVG argusq draws (tests/e2e/test_pictures.py)
DEBS    += librsvg2-bin
# the syscall tables of the machines other than x86 (base/syscalls.sh)
DEBS    += linux-libc-dev-arm64-cross linux-libc-dev-armhf-cross linux-libc-dev-riscv64-cross
# libFuzzer harnesses (fuzz/, `make fuzz`) and the valgrind end-to-end test
DEBS    += clang libclang-rt-dev valgrind
WARN    := -Wall -Wextra -Werror
CSTD    := -std=c11 -D_GNU_SOURCE
# Invariants are assert()s: the sanitizer build that make test runs checks
# them, the optimized build leaves them out (SQLite's and LMDB's habit), so
# one may stand on a hot path.
CFLAGS  ?= -O2 -g -DNDEBUG
# The command is linked with link-time optimization: the graph thread's
# calls between graph/, db/wqueue.c and db/evblock_enc.c, and the reader's
# into ingest/ftrace/*.c, cross files on every event, and only the linker
# can inline them there (docs/PERFORMANCE.md has what it saved).  The
# objects are fat (their ordinary code beside the compiler's intermediate
# form), so build/libargusq.a links into any program, with or without LTO,
# as it did before.
LTOFLAGS := -flto=auto -ffat-lto-objects
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LEMON_T := /usr/share/lemon/lempar.c
SYSCALL_HDRS := /usr/include/x86_64-linux-gnu/asm/unistd_64.h /usr/include/x86_64-linux-gnu/asm/unistd_32.h \
                /usr/aarch64-linux-gnu/include/asm/unistd.h /usr/arm-linux-gnueabihf/include/asm/unistd.h \
                /usr/riscv64-linux-gnu/include/asm/unistd.h

B       := build
GEN     := $(B)/gen
LIB_SRC := $(wildcard base/*.c db/*.c ingest/*.c ingest/*/*.c record/*.c dump/*.c graph/*.c query/*.c)
Y_SRC   := $(wildcard query/*.y)
RE_SRC  := $(wildcard ingest/*/*.re query/*.re)
GEN_C   := $(patsubst query/%.y,$(GEN)/%.c,$(Y_SRC)) \
           $(patsubst %.re,$(GEN)/%.c,$(notdir $(RE_SRC))) $(GEN)/syscalls.c
GEN_H   := $(patsubst query/%.y,$(GEN)/%.h,$(Y_SRC)) $(GEN)/query_keywords.h
# protoc-c: ingest/perfetto/NAME.proto -> build/gen/NAME.pb-c.[ch]
PROTO_SRC := $(wildcard ingest/perfetto/*.proto)
GEN_C   += $(patsubst ingest/perfetto/%.proto,$(GEN)/%.pb-c.c,$(PROTO_SRC))
GEN_H   += $(patsubst ingest/perfetto/%.proto,$(GEN)/%.pb-c.h,$(PROTO_SRC))
INC     = -I. -I$(GEN) $(TRACE_CFLAGS)
# LMDB and libedit (with what it needs: libtinfo, libbsd, libmd) are linked
# statically: loading those five shared objects was 0.5 ms of every one-shot
# query's 1.8 ms (make bench, "slice back depth 20: whole process").  The .a
# files come with the -dev packages above.  libtracecmd has no .a in Debian,
# and loading it (with libtracefs, libtraceevent, libzstd) was another
# 0.27 ms: it is opened with dlopen when a trace.dat is read or a recording
# starts (ingest/ftrace/tracelib_int.h, record/tracelib_int.h), so it is not
# linked at all.
STATIC_LIBS = -llmdb -ledit -ltinfo -lbsd -lmd
# protobuf-c and zlib (the Perfetto reader) are static too, for the same reason
STATIC_LIBS += -lprotobuf-c -lz
LIBS    = -Wl,-Bstatic $(STATIC_LIBS) -Wl,-Bdynamic -ldl -pthread
TEST_SRC := $(wildcard tests/unit/test_*.c)

# libargusq (lib/, include/argusq.h): the engine as a library with a small
# stable C API, of which the argusq command is a client.  build/libargusq.a
# holds every object of the optimized build; the command links it (so it
# stays static, as above).  build/libargusq.so is for other programs and the
# Python bindings (python/argusq, ctypes): position-independent objects of
# its own (build/pic), compiled with -fvisibility=hidden so that only the
# argusq_ API (ARGUSQ_API in the header) is exported, and linked against the
# shared liblmdb (Debian's liblmdb.a is not position-independent); soname
# libargusq.so.0, to be raised when the ABI breaks.
API_SRC := $(wildcard lib/*.c)
SO_NAME := libargusq.so.0
SO_FILE := libargusq.so.0.1.0
PICFLAGS := -fPIC -fvisibility=hidden
SO_LIBS := -llmdb -ldl -pthread
SO_LIBS += -lprotobuf-c -lz

# object lists: optimized build in build/obj, sanitizer build in build/san
OBJ     := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) $(patsubst $(GEN)/%.c,$(B)/obj/gen/%.o,$(GEN_C))
SAN_OBJ := $(patsubst %.c,$(B)/san/%.o,$(LIB_SRC)) $(patsubst $(GEN)/%.c,$(B)/san/gen/%.o,$(GEN_C))
API_OBJ := $(patsubst %.c,$(B)/obj/%.o,$(API_SRC))
SAN_API_OBJ := $(patsubst %.c,$(B)/san/%.o,$(API_SRC))
PIC_OBJ := $(patsubst %.c,$(B)/pic/%.o,$(LIB_SRC) $(API_SRC)) $(patsubst $(GEN)/%.c,$(B)/pic/gen/%.o,$(GEN_C))
TESTS   := $(patsubst tests/unit/%.c,$(B)/san/tests/%,$(TEST_SRC))

.PHONY: all test unit e2e demo clean deps bench install
.SECONDARY:

all: $(B)/argusq $(B)/libargusq.a $(B)/libargusq.so $(B)/$(SO_NAME)

deps: $(B)/.deps
# $(call install_debs,PACKAGES): apt-get install those not installed yet
install_debs = missing=""; for p in $(1); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi

$(B)/.deps:
	@mkdir -p $(B)
	@$(call install_debs,$(DEBS))
	@touch $@

# make bench's peers and inputs: trace-cmd report (it brings
# libtraceevent1-plugin, which argusq does not use), the sqlite3 shell,
# xz for pipeline.txt.xz
BENCH_DEBS := trace-cmd sqlite3 xz-utils
# babeltrace2: the CTF ingest line's peer (babeltrace2 FOLDER > /dev/null)
BENCH_DEBS += babeltrace2
$(B)/.bench-deps: | $(B)/.deps
	@$(call install_debs,$(BENCH_DEBS))
	@touch $@

# ---- generated sources ----
$(GEN)/%.c $(GEN)/%.h: query/%.y | $(B)/.deps
	@mkdir -p $(GEN)
	lemon -q -T$(LEMON_T) -d$(GEN) $<
	@touch $(GEN)/$*.h # lemon leaves an unchanged header's time: else both are made again at every make

$(GEN)/%.pb-c.c $(GEN)/%.pb-c.h: ingest/perfetto/%.proto | $(B)/.deps
	@mkdir -p $(GEN)
	protoc-c --proto_path=ingest/perfetto --c_out=$(GEN) $<

# a reader family's scanners: ingest/FAMILY/NAME.re -> build/gen/NAME.c (one
# rule per folder that has a .re; GEN_C names them without their folder)
define ingest_re2c
$(GEN)/%.c: $(1)/%.re | $(B)/.deps
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $$@ $$<
endef
$(foreach d,$(sort $(patsubst %/,%,$(dir $(wildcard ingest/*/*.re)))),$(eval $(call ingest_re2c,$(d))))

# the language's keywords, as the lexer spells them (query/words.c lists
# them for a shell's completion): a keyword added to the lexer is offered
$(GEN)/query_keywords.h: query/query_lex.re | $(B)/.deps
	@mkdir -p $(GEN)
	sed -n "s/^ *'\([a-z_]*\)' *{ code = QTK_.*/    \"\1\",/p" $< > $@.tmp && test -s $@.tmp && mv $@.tmp $@

$(GEN)/%.c: query/%.re $(GEN_H) | $(B)/.deps
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<

# Each machine's syscall names, from the kernel's own headers: x86-64's and
# i386's come with linux-libc-dev, the others with Debian's cross headers
# (base/syscalls.sh; base/base.h)
$(GEN)/syscalls.c: base/syscalls.sh $(SYSCALL_HDRS) | $(B)/.deps
	@mkdir -p $(GEN)
	{ echo '#include "base/base_int.h"'; \
	  base/syscalls.sh x86_64 /usr/include/x86_64-linux-gnu asm/unistd_64.h && \
	  base/syscalls.sh arm64 /usr/aarch64-linux-gnu/include asm/unistd.h && \
	  base/syscalls.sh arm /usr/arm-linux-gnueabihf/include asm/unistd.h -D__ARM_EABI__ && \
	  base/syscalls.sh i386 /usr/include/x86_64-linux-gnu asm/unistd_32.h && \
	  base/syscalls.sh riscv64 /usr/riscv64-linux-gnu/include asm/unistd.h && \
	  echo 'const struct base_arch base_arches[] = {' && \
	  for a in x86_64 arm64 arm i386 riscv64; do \
	    echo "    {\"$$a\", $${a}_names, sizeof $${a}_names / sizeof $${a}_names[0], $${a}_byname, sizeof $${a}_byname / sizeof $${a}_byname[0]},"; \
	  done && \
	  echo '};' && echo 'const size_t base_narches = sizeof base_arches / sizeof base_arches[0];'; } > $@.tmp
	mv $@.tmp $@

# ---- compile ----
$(B)/obj/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(LTOFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/obj/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(CFLAGS) $(LTOFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/san/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(SANFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/san/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(SANFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/pic/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(PICFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/pic/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(CFLAGS) $(PICFLAGS) $(INC) -MMD -MP -c -o $@ $<

# ---- libargusq ----
$(B)/libargusq.a: $(OBJ) $(API_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/san/libargusq.a: $(SAN_OBJ) $(SAN_API_OBJ)
	@rm -f $@
	ar rcs $@ $^

$(B)/$(SO_FILE): $(PIC_OBJ)
	$(CC) $(CFLAGS) -shared -Wl,-soname,$(SO_NAME) -Wl,--no-undefined -o $@ $^ $(SO_LIBS)

$(B)/$(SO_NAME) $(B)/libargusq.so: $(B)/$(SO_FILE)
	ln -sf $(SO_FILE) $@

CLI_SRC := $(wildcard cli/*.c)

$(B)/argusq: $(patsubst %.c,$(B)/obj/%.o,$(CLI_SRC)) $(B)/libargusq.a
	$(CC) $(CFLAGS) $(LTOFLAGS) -o $@ $^ $(LIBS)

$(B)/san/argusq: $(patsubst %.c,$(B)/san/%.o,$(CLI_SRC)) $(B)/san/libargusq.a
	$(CC) $(SANFLAGS) -o $@ $^ $(LIBS)

$(B)/san/tests/%: $(B)/san/tests/unit/%.o $(B)/san/libargusq.a
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ $(LIBS) -lcmocka

# ---- tests ----
# Every unit test binary and every end-to-end script runs under ASan+UBSan;
# tests/run.sh prints one "N passed, N failed" line at the end.
test: $(B)/argusq $(B)/san/argusq $(TESTS) $(B)/libargusq.so $(B)/$(SO_NAME)
	@FUZZERS="$(FUZZERS)" ARGUSQ_LIB=$(CURDIR)/$(B)/libargusq.so ARGUSQ_CLI=$(CURDIR)/$(B)/argusq \
	  sh tests/run.sh $(B)/san $(TESTS)

demo: $(B)/argusq
	@sh tests/demo.sh $(B)/argusq

# ---- the fresh-machine check (as root): `make demo` and `make test` of the
# committed HEAD in a new minimal Debian 12 root (debootstrap, cached in
# /var/cache/argusq-fresh), so a package missing from DEBS shows; see
# tests/fresh.sh.  FRESH_WORKTREE=1 tests the working tree instead.
.PHONY: test-fresh
test-fresh:
	@bash tests/fresh.sh

# ---- crash states (tests/crash): wlog.so, preloaded into an ingest, logs
# every write and sync of the archive; crashgen.py rebuilds what a power
# cut at each point of the log could leave on disk and checks each state.
# make crashtest: thousands of states of a 280k-event ingest in small
# batches (a few minutes); make test runs a few dozen on a small trace
# (tests/e2e/test_crash.py) ----
WLOG := $(B)/crash/wlog.so
CRASH_TRACE ?= ../shared/traces/pipeline.dat
CRASH_STATES ?= 3000
CRASH_BATCH_OPS ?= 2000
CRASH_SEED ?= 1
.PHONY: crashtest

$(WLOG): tests/crash/wlog.c | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -g -fPIC -shared -o $@ $< -ldl -pthread

crashtest: $(B)/argusq $(B)/san/argusq $(WLOG)
	python3 tests/crash/crashgen.py --argusq $(B)/argusq --san $(B)/san/argusq --wlog $(WLOG) \
	  --trace $(CRASH_TRACE) --states $(CRASH_STATES) --batch-ops $(CRASH_BATCH_OPS) --seed $(CRASH_SEED)
	python3 tests/crash/crashgen.py --argusq $(B)/argusq --san $(B)/san/argusq --wlog $(WLOG) \
	  --op rules --states $(CRASH_STATES) --seed $(CRASH_SEED)

test: $(WLOG)

# make stateful: the archive's invariants under long random sequences of
# every write statement and admin command (tests/e2e/test_stateful.py;
# make test runs 60 steps of seed 1), STATEFUL_STEPS steps of each seed on
# the optimized build; a failure prints its seed and steps, and the same
# seed replays them
STATEFUL_STEPS ?= 10000
STATEFUL_SEEDS ?= 1 2 3
.PHONY: stateful
stateful: $(B)/argusq
	cd tests/e2e && ARGUSQ=$(CURDIR)/$(B)/argusq ARGUSQ_STATEFUL_STEPS=$(STATEFUL_STEPS) \
	  ARGUSQ_STATEFUL_SEEDS="$(STATEFUL_SEEDS)" python3 -m unittest -v test_stateful

# ---- the diagnosis evaluation: tests/eval/workloads.tsv names
# each workload's victim, culprit and the state the culprit is named in;
# tests/eval/eval.py records each workload (root) or reads EVAL_FROM's
# recordings, runs diagnose alone and against the normal run, and prints
# one table.  Not part of make test: it records about 80 runs (4 minutes). ----
EVAL_FROM ?=
EVAL_ARGS ?=
.PHONY: eval
eval: $(B)/argusq
	python3 tests/eval/eval.py --argusq $(B)/argusq $(if $(EVAL_FROM),--from $(EVAL_FROM)) $(EVAL_ARGS)

# ---- benchmarks: inputs and archives in bench/data/, results in bench/results.json ----
BENCH_EVENTS ?= 19000000
BENCH_FTRACE_COPIES ?= 18
BENCH_RUNS ?= 3
bench: $(B)/argusq $(B)/libargusq.so $(B)/$(SO_NAME) $(B)/bench/gen_argus $(B)/bench/scale_ftrace $(B)/.bench-deps
	python3 bench/run.py --argusq $(B)/argusq --bin $(B)/bench --events $(BENCH_EVENTS) \
	  --ftrace-copies $(BENCH_FTRACE_COPIES) --runs $(BENCH_RUNS)

# the fleet line alone (bench/fleet_bench.py: 20 archives on two Dask
# workers against the CLI one by one), into bench/results.json
.PHONY: bench-fleet
bench-fleet: $(B)/argusq $(B)/libargusq.so $(B)/$(SO_NAME)
	python3 bench/run.py --argusq $(B)/argusq --runs $(BENCH_RUNS) --only fleet

# same-archives BASE=REV: does build/argusq write the archive REV's argusq
# writes, table for table, on every trace of tests/traces and ../shared
# (bench/same_archives.py)?  The gate of a change that must not change what
# is stored.  REV is built in a worktree of its own under build/.
BASE ?= HEAD
.PHONY: same-archives
same-archives: $(B)/argusq
	@$(call install_debs,lmdb-utils)
	rm -rf $(B)/base-rev && git worktree prune && git worktree add -f --detach $(B)/base-rev $(BASE)
	$(MAKE) -C $(B)/base-rev build/argusq
	python3 bench/same_archives.py $(B)/base-rev/build/argusq $(B)/argusq; rc=$$?; \
	  git worktree remove --force $(B)/base-rev; exit $$rc

$(B)/bench/%: bench/%.c
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -O2 -o $@ $<

clean:
	rm -rf $(B) argus.db argus.db-lock

-include $(shell find $(B) -name '*.d' 2>/dev/null)

# ---- install: the binary, the man pages, the bash completion; libargusq
# with its header and pkg-config file; the Python package where Debian's
# python3 looks (PREFIX/lib/python3/dist-packages), told where the library
# is (argusq/_installed.py) so that it needs no ldconfig.  pkg-config's
# --define-prefix works on a staged tree: argusq.pc names its directories
# from ${prefix}. ----
PREFIX  ?= /usr/local
DESTDIR ?=
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
PYDIR   ?= $(PREFIX)/lib/python3/dist-packages
PY_SRC  := $(wildcard python/argusq/*.py)
pc_dir   = $(patsubst $(PREFIX)/%,$${prefix}/%,$(1))
API_VERSION = $(shell sed -n 's/^\#define ARGUSQ_VERSION "\(.*\)"/\1/p' include/argusq.h)
install: $(B)/argusq $(B)/libargusq.a $(B)/$(SO_FILE)
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man1 \
	  $(DESTDIR)$(PREFIX)/share/bash-completion/completions $(DESTDIR)$(PREFIX)/share/man/man3 \
	  $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(INCDIR) $(DESTDIR)$(PYDIR)/argusq
	install -m 755 $(B)/argusq $(DESTDIR)$(PREFIX)/bin/argusq
	install -m 644 docs/man/argusq.1 $(DESTDIR)$(PREFIX)/share/man/man1/argusq.1
	install -m 644 contrib/argusq.bash $(DESTDIR)$(PREFIX)/share/bash-completion/completions/argusq
	install -m 755 $(B)/$(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_FILE)
	ln -sf $(SO_FILE) $(DESTDIR)$(LIBDIR)/$(SO_NAME)
	ln -sf $(SO_NAME) $(DESTDIR)$(LIBDIR)/libargusq.so
	install -m 644 $(B)/libargusq.a $(DESTDIR)$(LIBDIR)/libargusq.a
	install -m 644 include/argusq.h $(DESTDIR)$(INCDIR)/argusq.h
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@LIBDIR@|$(call pc_dir,$(LIBDIR))|' \
	  -e 's|@INCDIR@|$(call pc_dir,$(INCDIR))|' -e 's|@VERSION@|$(API_VERSION)|' \
	  -e 's|@LIBS@|$(SO_LIBS)|' contrib/argusq.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/argusq.pc
	install -m 644 docs/man/argusq.3 $(DESTDIR)$(PREFIX)/share/man/man3/argusq.3
	install -m 644 $(PY_SRC) $(DESTDIR)$(PYDIR)/argusq/
	printf '#!/usr/bin/python3\n# argusq-fleet: argusq statements over many archives on Dask (argusq/fleet.py)\nimport sys\nsys.path.insert(0, "%s")\nfrom argusq.fleet import main\nsys.exit(main())\n' '$(PYDIR)' \
	  > $(DESTDIR)$(PREFIX)/bin/argusq-fleet && chmod 755 $(DESTDIR)$(PREFIX)/bin/argusq-fleet
	printf '# written by make install: where libargusq is\nLIBDIR = %s\n' "'$(LIBDIR)'" \
	  > $(DESTDIR)$(PYDIR)/argusq/_installed.py
	@if [ -z "$(DESTDIR)" ] && [ "$$(id -u)" = 0 ]; then ldconfig || true; fi

# ---- ThreadSanitizer, by hand (`make tsan`; not part of make test, it is a
# third build of everything): libargusq's unit test, whose readers run in
# four threads on one handle and on two handles of one file while a fifth
# ingests, test_db's shared handles, and test_chan's two ends of the
# ingest's channel (base/chan.c), built with -fsanitize=thread.
# ARGUSQ_MAP_MB keeps LMDB's map small: TSan's shadow memory leaves no
# room for the usual 1 TiB. ----
TSAN_FLAGS := -O1 -g -fsanitize=thread
TSAN_OBJ := $(patsubst %.c,$(B)/tsan/%.o,$(LIB_SRC) $(API_SRC)) $(patsubst $(GEN)/%.c,$(B)/tsan/gen/%.o,$(GEN_C))
.PHONY: tsan

$(B)/tsan/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(TSAN_FLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/tsan/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(TSAN_FLAGS) $(INC) -MMD -MP -c -o $@ $<

TSAN_TESTS := $(B)/tsan/test_lib $(B)/tsan/test_db $(B)/tsan/test_chan

$(TSAN_TESTS): $(B)/tsan/%: $(B)/tsan/tests/unit/%.o $(TSAN_OBJ)
	$(CC) $(TSAN_FLAGS) -o $@ $^ $(SO_LIBS) -lcmocka

tsan: $(TSAN_TESTS)
	@for t in $(TSAN_TESTS); do ARGUSQ_MAP_MB=4096 TSAN_OPTIONS=halt_on_error=1 $$t || exit 1; done

# ---- fuzzing: libFuzzer harnesses in fuzz/, built with clang from the same
# sources into build/fuzz; `make fuzz` runs each for FUZZ_SECONDS on a copy
# of its seed corpus (fuzz/corpus/NAME), `make test` for a few seconds ----
FUZZ_CC      := clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS   := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZERS      := $(patsubst fuzz/%.c,$(B)/fuzz/%,$(wildcard fuzz/fuzz_*.c))
FUZZ_OBJ     := $(patsubst %.c,$(B)/fuzz/obj/%.o,$(LIB_SRC)) $(patsubst $(GEN)/%.c,$(B)/fuzz/obj/gen/%.o,$(GEN_C))
.PHONY: fuzz

fuzz: $(FUZZERS)
	@sh fuzz/run.sh $(FUZZ_SECONDS) $(FUZZERS)

test: $(FUZZERS)

# fuzzer-no-link: coverage for libFuzzer, whose main() comes in at link time
$(B)/fuzz/obj/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(INC) -DFUZZ_ROOT='"$(CURDIR)"' -MMD -MP -c -o $@ $<

$(B)/fuzz/obj/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CSTD) $(WARN) -Wno-unused-parameter $(FUZZ_FLAGS) -fsanitize=fuzzer-no-link $(INC) -MMD -MP -c -o $@ $<

$(FUZZERS): $(B)/fuzz/%: $(B)/fuzz/obj/fuzz/%.o $(FUZZ_OBJ)
	$(FUZZ_CC) $(FUZZ_FLAGS) -fsanitize=fuzzer -o $@ $^ $(LIBS)
