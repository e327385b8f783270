# argusq -- see README.md.
#
#   make          build/argusq
#   make test     unit tests (cmocka) and end-to-end tests, built with ASan+UBSan
#   make demo     ingest a shipped trace into a fresh archive and print a slice
#   make clean
#
# A fresh Debian machine has none of the libraries and generators we need:
# the first build installs them with apt-get (as root, or through sudo);
# graphviz is for the tests, which check that `--format dot` is valid DOT.

CC      ?= cc
DEBS    := liblmdb-dev lemon re2c libcmocka-dev libedit-dev pkg-config linux-libc-dev graphviz
WARN    := -Wall -Wextra -Werror
CSTD    := -std=c11 -D_GNU_SOURCE
CFLAGS  ?= -O2 -g
SANFLAGS := -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LEMON_T := /usr/share/lemon/lempar.c
SYSCALL_H := /usr/include/x86_64-linux-gnu/asm/unistd_64.h

B       := build
GEN     := $(B)/gen
LIB_SRC := $(wildcard db/*.c ingest/*.c graph/*.c query/*.c)
Y_SRC   := $(wildcard grammar/*.y)
RE_SRC  := $(wildcard grammar/*.re ingest/*.re query/*.re)
GEN_C   := $(patsubst grammar/%.y,$(GEN)/%.c,$(Y_SRC)) \
           $(patsubst %.re,$(GEN)/%.c,$(notdir $(RE_SRC))) $(GEN)/syscalls.c
GEN_H   := $(patsubst grammar/%.y,$(GEN)/%.h,$(Y_SRC))
INC     := -I. -I$(GEN)
LIBS    := -llmdb -ledit
TEST_SRC := $(wildcard tests/unit/test_*.c)

# object lists: optimized build in build/obj, sanitizer build in build/san
OBJ     := $(patsubst %.c,$(B)/obj/%.o,$(LIB_SRC)) $(patsubst $(GEN)/%.c,$(B)/obj/gen/%.o,$(GEN_C))
SAN_OBJ := $(patsubst %.c,$(B)/san/%.o,$(LIB_SRC)) $(patsubst $(GEN)/%.c,$(B)/san/gen/%.o,$(GEN_C))
TESTS   := $(patsubst tests/unit/%.c,$(B)/san/tests/%,$(TEST_SRC))

.PHONY: all test unit e2e demo clean deps bench
.SECONDARY:

all: $(B)/argusq

deps: $(B)/.deps
$(B)/.deps:
	@mkdir -p $(B)
	@missing=""; for p in $(DEBS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends $$missing >/dev/null || exit 1; \
	fi
	@touch $@

# ---- generated sources ----
$(GEN)/%.c $(GEN)/%.h: grammar/%.y | $(B)/.deps
	@mkdir -p $(GEN)
	lemon -q -T$(LEMON_T) -d$(GEN) $<

$(GEN)/%.c: grammar/%.re $(GEN_H) | $(B)/.deps
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<

$(GEN)/%.c: ingest/%.re | $(B)/.deps
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<

$(GEN)/%.c: query/%.re $(GEN_H) | $(B)/.deps
	@mkdir -p $(GEN)
	re2c -W --no-generation-date -o $@ $<

# x86-64 syscall names, from the kernel's own header (linux-libc-dev)
$(GEN)/syscalls.c: $(SYSCALL_H) | $(B)/.deps
	@mkdir -p $(GEN)
	awk 'BEGIN { print "/* generated from $(SYSCALL_H) */"; \
	             print "#include <stddef.h>"; \
	             print "const char *const ingest_syscall_names[] = {" } \
	     $$1 == "#define" && $$2 ~ /^__NR_/ && $$3 ~ /^[0-9]+$$/ { \
	             sub(/^__NR_/, "", $$2); printf "    [%s] = \"%s\",\n", $$3, $$2; \
	             if ($$3 + 0 > max) max = $$3 + 0 } \
	     END   { print "};"; printf "const size_t ingest_syscall_count = %d;\n", max + 1 }' $< > $@

# ---- compile ----
$(B)/obj/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(CFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/obj/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(CFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/san/%.o: %.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) $(SANFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/san/gen/%.o: $(GEN)/%.c $(GEN_H) | $(B)/.deps
	@mkdir -p $(dir $@)
	$(CC) $(CSTD) $(WARN) -Wno-unused-parameter $(SANFLAGS) $(INC) -MMD -MP -c -o $@ $<

$(B)/argusq: $(B)/obj/cli/main.o $(OBJ)
	$(CC) $(CFLAGS) -o $@ $^ $(LIBS)

$(B)/san/argusq: $(B)/san/cli/main.o $(SAN_OBJ)
	$(CC) $(SANFLAGS) -o $@ $^ $(LIBS)

$(B)/san/tests/%: $(B)/san/tests/unit/%.o $(SAN_OBJ)
	@mkdir -p $(dir $@)
	$(CC) $(SANFLAGS) -o $@ $^ $(LIBS) -lcmocka

# ---- tests ----
# Every unit test binary and every end-to-end script runs under ASan+UBSan;
# tests/run.sh prints one "N passed, N failed" line at the end.
test: $(B)/argusq $(B)/san/argusq $(TESTS)
	@sh tests/run.sh $(B)/san $(TESTS)

demo: $(B)/argusq
	@sh tests/demo.sh $(B)/argusq

clean:
	rm -rf $(B) argus.db argus.db-lock

-include $(shell find $(B) -name '*.d' 2>/dev/null)
