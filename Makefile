# Anvil. `make` builds the six programs into build/; `make check` installs what is missing
# (NODEPS=1: not even a look), builds, and runs every test (SANITIZE=1: under ASan and UBSan);
# `make demo` runs the example and the escapes end to end; `make soak` runs 500 mixed runs from
# 16 clients and checks that nothing leaked.
# Dependencies come from Debian's archive only (see `make deps`).

# `make check SANITIZE=1` (or `make SANITIZE=1`): everything built with AddressSanitizer and
# UndefinedBehaviorSanitizer, in a build directory of its own (build/asan; its test build in
# build/asan/test), so that its objects never mix with an uninstrumented build's.
SANITIZE ?=
ifeq ($(SANITIZE),1)
BUILD    ?= build/asan
else
BUILD    ?= build
endif
CC       ?= cc
PKG_CONFIG ?= pkg-config

# Every library is found through pkg-config, each module beside the Debian package that ships
# its .pc file. Looked up when a rule first needs it (not when the Makefile is read, so that
# `make deps` and `make clean` work on a machine that has none of them), and a module pkg-config
# does not know stops the build with one line naming the package to install. (Debian 12's
# libmsgpack-dev 4.0 calls its module msgpack; msgpack-c 6 renamed it msgpack-c.)
PC_TABLE := libuv:libuv1-dev msgpack:libmsgpack-dev jansson:libjansson-dev libcurl:libcurl4-openssl-dev \
            libcap:libcap-dev libseccomp:libseccomp-dev libmicrohttpd:libmicrohttpd-dev cmocka:libcmocka-dev \
            libmd:libmd-dev inih:libinih-dev python3-embed:libpython3-dev
pc_pkg = $(patsubst $(1):%,%,$(filter $(1):%,$(PC_TABLE)))
# Debian's interpreter, with the data stack: never a python3-embed.pc found through a
# PKG_CONFIG_PATH set earlier (nor a python3-config on PATH).
pc_cmd = $(if $(filter python3-embed,$(1)),PKG_CONFIG_PATH= )$(PKG_CONFIG)
# pc WHAT MODULES: pkg-config WHAT (--cflags, --libs) of each of MODULES, or the error.
pc = $(foreach m,$(2),$(if $(shell $(call pc_cmd,$(m)) --exists $(m) && echo y),$(shell $(call pc_cmd,$(m)) $(1) $(m)),$(error pkg-config finds no $(m): install the Debian package $(call pc_pkg,$(m)) (make deps does))))
# Each looked up once (make's memoising idiom: the first use replaces the variable with its value).
memo = $(eval $(1) := $(2))$($(1))
SUP_LIBS   = $(call memo,SUP_LIBS,$(call pc,--libs,libuv msgpack libcap inih))
BRO_LIBS   = $(call memo,BRO_LIBS,$(call pc,--libs,libuv msgpack jansson libcurl libmicrohttpd libmd inih))
CTL_LIBS   = $(call memo,CTL_LIBS,$(call pc,--libs,msgpack jansson libmicrohttpd libmd))
MCP_LIBS   = $(call memo,MCP_LIBS,$(call pc,--libs,msgpack jansson libmd))
PY_LIBS    = $(call memo,PY_LIBS,$(call pc,--libs,python3-embed msgpack libseccomp))
UNIT_LIBS  = $(call memo,UNIT_LIBS,$(call pc,--libs,cmocka libuv msgpack jansson libcap libseccomp))
MODEL_TEST_LIBS = $(call memo,MODEL_TEST_LIBS,$(call pc,--libs,cmocka jansson))
MODELCLIENT_LIBS = $(call memo,MODELCLIENT_LIBS,$(call pc,--libs,libcurl libuv jansson))
TOOL_LIBS  = $(call memo,TOOL_LIBS,$(call pc,--libs,msgpack))
# http-parser (libhttp-parser-dev) ships no .pc file: its header is in /usr/include, its
# library beside libc's.
EGR_LIBS   = $(call memo,EGR_LIBS,$(call pc,--libs,libuv jansson)) -lhttp_parser
# Headers: every object sees the daemons' libraries' (none need a flag on Debian today, but a
# module that did would be given it); the runner's objects alone see Python's; cmocka's only
# the unit tests.
PC_CFLAGS  = $(call memo,PC_CFLAGS,$(call pc,--cflags,libuv msgpack jansson libcurl libcap libseccomp libmicrohttpd libmd inih))
PY_CFLAGS  = $(call memo,PY_CFLAGS,$(call pc,--cflags,python3-embed))
UNIT_CFLAGS = $(call memo,UNIT_CFLAGS,$(call pc,--cflags,cmocka))

WARN     := -Wall -Wextra -Wshadow -Wformat=2 -Wstrict-prototypes -Wmissing-prototypes \
            -Werror=implicit-function-declaration -Werror=format -Werror=format-security \
            -Werror=incompatible-pointer-types -Werror=return-type -Werror=int-conversion
# CFLAGS=... on the command line (or in the environment) adds to the project's flags, after
# them (so that a -O0 or a -Wno-... of the caller's wins), and never replaces -I., the warnings,
# the dependency files or the hardening: `override` is what makes make append to a command
# line's value instead of ignoring the assignment. _FORTIFY_SOURCE needs an optimising build
# (glibc warns on every file at -O0, and checks nothing there), so a -O0 build goes without.
CFLAGS   ?= -O2 -g
HARDEN   := $(if $(filter -O0,$(CFLAGS)),,-D_FORTIFY_SOURCE=2) -fstack-protector-strong \
            -fstack-clash-protection -fcf-protection -fPIE
ifeq ($(SANITIZE),1)
# ASan and UBSan, and UB fails the program instead of printing and going on. _FORTIFY_SOURCE
# goes: its __*_chk versions of memcpy and the like are not ASan's interceptors, so a build with
# both checks less, not more.
HARDEN   := $(filter-out -D_FORTIFY_SOURCE=2,$(HARDEN))
SAN      := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# The two programs that run in the jail get UBSan alone, trapping (an illegal instruction at
# the fault, no runtime library to link or to load), not ASan:
#   anvil-init is static-pie, and ASan's runtime cannot be linked statically;
#   anvil-py runs under the run's RLIMIT_AS (ASan reserves terabytes of shadow address space at
#   start-up: refused), its seccomp filter (LeakSanitizer stops the world with ptrace at exit:
#   refused), Landlock and the cgroup's memory cap (ASan's quarantine and shadow count against
#   the tool's memory, so the memory tests would measure ASan). Their C is checked under ASan
#   where it can be: lib/, proto/, policy/ and jail/ (anvil-init's jail_pid1_main included) in
#   the supervisor, the unit tests and the fuzz targets; runner/'s own (the audit hook, the
#   pre-check) only under UBSan (docs/testing.md).
JAIL_SAN := -fsanitize=undefined -fsanitize-undefined-trap-on-error -fno-sanitize-recover=undefined
JAIL_OBJ := $(BUILD)/obj-jail
JAIL_LIB := $(BUILD)/libanvil-jail.a
else
SAN      :=
JAIL_SAN :=
JAIL_OBJ := $(BUILD)/obj
JAIL_LIB := $(BUILD)/libanvil.a
endif
# A build directory holds one kind of build: each records its kind in $(BUILD)/.kind (written
# with its first object), and a build of the other kind into it stops at once rather than mix
# instrumented and plain objects (make decides by timestamps, not by flags).
BUILD_KIND := $(if $(filter 1,$(SANITIZE)),sanitized,plain)
ifeq ($(filter clean,$(MAKECMDGOALS)),)
ifneq ($(wildcard $(BUILD)/.kind),)
ifneq ($(shell cat $(BUILD)/.kind),$(BUILD_KIND))
$(error $(BUILD) holds a $(shell cat $(BUILD)/.kind) build, not a $(BUILD_KIND) one: give BUILD= another directory, or make clean BUILD=$(BUILD))
endif
endif
endif
$(BUILD)/.kind:
	@mkdir -p $(dir $@)
	@echo $(BUILD_KIND) >$@

# The one version string: each program's --version, its hello frame, the man pages.
VERSION := 0.1
PROJECT_CFLAGS := -DANVIL_VERSION=\"$(VERSION)\" -std=gnu11 $(WARN) $(HARDEN) -I. -MMD -MP
override CFLAGS := $(PROJECT_CFLAGS) $(CFLAGS) $(TEST_CFLAGS)
# The same for LDFLAGS: a caller's are added after -pie and full RELRO, never instead.
override LDFLAGS := -pie -Wl,-z,relro,-z,now -Wl,--as-needed $(LDFLAGS)

LIB_SRCS := $(wildcard lib/*.c) $(wildcard proto/*.c) $(wildcard policy/*.c) $(wildcard jail/*.c)
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/obj/%.o)

SUP_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard supervisor/*.c))
BRO_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard broker/*.c))
CTL_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard ctl/*.c))
MCP_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard mcp/*.c))
EGR_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard egress/*.c))
# A capability's hosts (policy/cap_scope.c) are read with the proxy's own rule parser, so what
# the broker grants is what anvil-egress enforces: linked beside the library where it is used
# (an archive cannot hold both rules.o).
SCOPE_OBJS := $(BUILD)/obj/egress/rules.o
PY_OBJS  := $(patsubst %.c,$(JAIL_OBJ)/%.o,$(wildcard runner/*.c))

UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(UNIT_SRCS))
E2E_TOOLS := $(patsubst tests/e2e/%.c,$(BUILD)/tests/%,$(wildcard tests/e2e/*.c))

PROGRAMS := $(BUILD)/anvil-supervisor $(BUILD)/anvil-broker $(BUILD)/anvilctl $(BUILD)/anvil-py \
            $(BUILD)/anvil-init $(BUILD)/anvil-mcp $(BUILD)/anvil-egress

LIB_A := $(BUILD)/libanvil.a

.PHONY: all check demo deps fuzz format bench soak clean tests install uninstall
all: $(PROGRAMS)

# Where `make install` puts things. The supervisor looks for the runner and pid 1 beside its
# binary (a build tree), else at LIBEXECDIR as seen from SBINDIR ("../lib/anvil"), from its
# own directory: compiled in (anvil-paths.h, rewritten only when it changes), and the same
# for every PREFIX and DESTDIR, so that `make install PREFIX=...` after `make` rebuilds
# nothing and an installed tree finds its own runner wherever it is.
PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
SBINDIR    ?= $(PREFIX)/sbin
LIBEXECDIR ?= $(PREFIX)/lib/anvil
MANDIR     ?= $(PREFIX)/share/man
COMPLETIONDIR ?= $(PREFIX)/share/bash-completion/completions
SYSCONFDIR ?= /etc
# Debian 12 installs units in /lib/systemd/system (systemd.pc says so); elsewhere below PREFIX.
ifeq ($(PREFIX),/usr)
UNITDIR    ?= $(shell $(PKG_CONFIG) --variable=systemdsystemunitdir systemd 2>/dev/null || echo /usr/lib/systemd/system)
else
UNITDIR    ?= $(PREFIX)/lib/systemd/system
endif
SYSUSERSDIR ?= $(PREFIX)/lib/sysusers.d
# The Python client (clients/python/anvil_client, docs/python.md), where Debian's python3 finds
# it: its own packages' directory for /usr, else (/usr/local) its versioned site directory.
ifeq ($(PREFIX),/usr)
PYTHONDIR  ?= /usr/lib/python3/dist-packages
else
PYTHONDIR  ?= $(PREFIX)/lib/$(shell /usr/bin/python3 -c 'import sys; print("python%d.%d" % sys.version_info[:2])' 2>/dev/null || echo python3)/dist-packages
endif
PY_CLIENT  := $(sort $(wildcard clients/python/anvil_client/*.py))
LIBEXEC_REL := $(shell realpath -m --relative-to=$(SBINDIR) $(LIBEXECDIR))

PATHS_H := $(BUILD)/include/anvil-paths.h
$(PATHS_H): FORCE
	@mkdir -p $(dir $@)
	@printf '#define ANVIL_LIBEXEC_REL "%s"\n' '$(LIBEXEC_REL)' >$@.tmp
	@if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
$(BUILD)/obj/supervisor/main.o: $(PATHS_H)
$(BUILD)/obj/supervisor/main.o: override CFLAGS += -include $(PATHS_H)
.PHONY: FORCE

$(BUILD)/obj/%.o: %.c | $(BUILD)/.kind
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) -c $< -o $@

# The runner's objects see Python's headers; nothing else does.
$(JAIL_OBJ)/runner/%.o: runner/%.c | $(BUILD)/.kind
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(JAIL_SAN) $(PC_CFLAGS) $(PY_CFLAGS) -c $< -o $@

$(LIB_A): $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

ifeq ($(SANITIZE),1)
# The runner's objects for test_precheck, under ASan (anvil-py's own are in $(JAIL_OBJ)).
$(BUILD)/obj/runner/%.o: runner/%.c | $(BUILD)/.kind
	@mkdir -p $(dir $@)
	@echo "  CC      $<"
	@$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(PY_CFLAGS) -c $< -o $@

# The jail's two programs' objects and library, under UBSan alone (see SAN above).
$(JAIL_OBJ)/%.o: %.c | $(BUILD)/.kind
	@mkdir -p $(dir $@)
	@echo "  CC      $< (UBSan only)"
	@$(CC) $(CFLAGS) $(JAIL_SAN) $(PC_CFLAGS) -c $< -o $@

$(JAIL_LIB): $(LIB_SRCS:%.c=$(JAIL_OBJ)/%.o)
	@rm -f $@
	ar rcs $@ $^
endif

# The link map names every member of libanvil.a the root daemon pulls in: scripts/root-loc.sh
# counts exactly those sources.
$(BUILD)/anvil-supervisor: $(SUP_OBJS) $(LIB_A)
	$(CC) $(SAN) $(LDFLAGS) -Wl,-Map=$@.map -o $@ $^ $(SUP_LIBS)

# Debian's libinih reads both daemons' configuration file (lib/config.c); libmd the artifacts'
# sha256 (broker/render.c), which the supervisor leaves to the broker.
$(BUILD)/anvil-broker: $(BRO_OBJS) $(SCOPE_OBJS) $(LIB_A)
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(BRO_LIBS)

# The egress proxy (egress/, docs/egress.md): its own process and user, libuv, jansson for its
# control messages, http-parser for the requests it proxies.
$(BUILD)/anvil-egress: $(EGR_OBJS) $(LIB_A)
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(EGR_LIBS)

# anvilctl verify's scripted model is served by libmicrohttpd; artifacts are hashed with libmd
# (verify's read-back, and a supervisor's results, which leave the hashing to the client).
# anvilctl writes the prose of a supervisor's facts as the broker does (broker/render.c).
$(BUILD)/anvilctl: $(CTL_OBJS) $(BUILD)/obj/broker/render.o $(SCOPE_OBJS) $(LIB_A)
	$(CC) $(SAN) $(LDFLAGS) -o $@ $^ $(CTL_LIBS)

# anvil-mcp is a client of the broker as anvilctl is: its connection and inputs (ctl/client.c,
# ctl/input.c) and the results' prose (broker/render.c, which a supervisor's results need);
# jansson its JSON-RPC, libmd the artifacts' SHA-256 it checks; a thread per request.
$(BUILD)/anvil-mcp: $(MCP_OBJS) $(BUILD)/obj/ctl/client.o $(BUILD)/obj/ctl/input.o $(BUILD)/obj/broker/render.o $(SCOPE_OBJS) $(LIB_A)
	$(CC) $(SAN) $(LDFLAGS) -pthread -o $@ $^ $(MCP_LIBS)

$(BUILD)/anvil-py: $(PY_OBJS) $(JAIL_LIB)
	$(CC) $(LDFLAGS) -o $@ $^ $(PY_LIBS)

# The jail's pid 1: static, so its exec links nothing (it uses libc alone).
$(BUILD)/anvil-init: $(JAIL_OBJ)/jail/init/main.o $(JAIL_LIB)
	$(CC) -static-pie $(filter-out -pie,$(LDFLAGS)) -o $@ $^

# The test programs are compiled and linked in one step; -MMD writes $(BUILD)/tests/NAME.d
# beside each (included at the end), so that a header's change rebuilds them too. Those
# headers are then prerequisites: the recipes leave them out of $^ (cc would compile each).
$(BUILD)/tests/%: tests/unit/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS)

$(BUILD)/tests/%: tests/e2e/%.c $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(TOOL_LIBS)

# The model client's tests link its objects (and libcurl) beside the library: the parsing
# for the unit test, all of it for the e2e tool that runs one request.
MODEL_OBJS := $(BUILD)/obj/broker/model.o $(BUILD)/obj/broker/model_cfg.o $(BUILD)/obj/broker/model_parse.o

# The agent's pure pieces (a reply read, the observation and the prompt) are the broker's:
# their tests link them beside the library.
AGENT_OBJS := $(BUILD)/obj/broker/reply.o $(BUILD)/obj/broker/prompt.o $(BUILD)/obj/broker/textbuf.o

$(BUILD)/tests/test_agent $(BUILD)/tests/test_policy: $(BUILD)/tests/%: tests/unit/%.c $(AGENT_OBJS) $(SCOPE_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS)

# The runner's pre-check, outside the jail (the one place its C runs under ASan): its objects
# beside the library and the embedded interpreter.
PRECHECK_OBJS := $(BUILD)/obj/runner/precheck.o $(BUILD)/obj/runner/events.o
$(BUILD)/tests/test_precheck: tests/unit/test_precheck.c $(PRECHECK_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(PY_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS) $(PY_LIBS)

# The egress proxy's host matcher and address classifier, linked beside the library.
$(BUILD)/tests/test_egress $(BUILD)/tests/test_scope: $(BUILD)/tests/%: tests/unit/%.c $(SCOPE_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS)

# The results' prose and hashing (broker/render.c), linked beside the library.
$(BUILD)/tests/test_render: tests/unit/test_render.c $(BUILD)/obj/broker/render.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS) $(CTL_LIBS)

# The web UI's routes, paths and types (broker/http_route.c), linked beside the library.
$(BUILD)/tests/test_http: tests/unit/test_http.c $(BUILD)/obj/broker/http_route.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(UNIT_LIBS)

$(BUILD)/tests/test_model: tests/unit/test_model.c $(BUILD)/obj/broker/model_parse.o $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(UNIT_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(MODEL_TEST_LIBS)

$(BUILD)/tests/modelclient: tests/e2e/modelclient.c $(MODEL_OBJS) $(LIB_A)
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SAN) $(PC_CFLAGS) $(LDFLAGS) -o $@ $(filter-out %.h,$^) $(MODELCLIENT_LIBS)

tests: $(UNIT_BINS) $(E2E_TOOLS)

deps:
	@scripts/deps.sh

# check, demo, bench and soak first make sure the Debian packages are there (scripts/deps.sh:
# one dpkg-query, silent when nothing is missing; one line naming what is, then apt-get);
# NODEPS=1 skips that step altogether (a machine set up otherwise, or no package manager).
NEEDS_DEPS := $(if $(filter 1,$(NODEPS)),,deps)

# The tests run against a test build of its own (build/test; build/asan/test under SANITIZE=1):
# only there does the supervisor accept --test-no-python-layers, which the kernel layers'
# tests use to show they hold alone. tests/run.sh sees for itself that a build is sanitized.
TEST_BUILD := $(BUILD)/test

check: $(NEEDS_DEPS)
	$(MAKE) BUILD=$(TEST_BUILD) TEST_CFLAGS=-DANVIL_TEST_BUILD all tests
	@tests/run.sh $(TEST_BUILD)

demo: $(NEEDS_DEPS)
	$(MAKE) all
	@scripts/demo.sh $(BUILD)

# The benchmark (docs/bench.md), as root: a supervisor and a broker of its own, Anvil against
# bwrap + python3 and python3 in the same run; prints the table and writes the PNG plots to
# BENCH_OUT. BENCH=quick (under 2 minutes), full (the long form) or smoke (t_bench_smoke).
BENCH          ?= quick
BENCH_OUT      ?= bench/out
BENCH_UID_BASE ?= 3900000000
bench: $(NEEDS_DEPS)
	$(MAKE) all
	@/usr/bin/python3 bench/bench.py --build $(BUILD) --mode $(BENCH) --out $(BENCH_OUT) --uid-base $(BENCH_UID_BASE)

# The soak, not part of check (which runs a short one, tests/e2e/t_soak.sh): SOAK_RUNS runs of
# a mixed set from SOAK_CLIENTS clients through the broker, against a supervisor and a broker
# of its own (as root), then the checks that nothing leaked and every result was right; it
# prints the figures (tests/soak/soak.py). SOAK_OPTS: more of its options ("--max-runs 2").
SOAK_RUNS     ?= 500
SOAK_CLIENTS  ?= 16
SOAK_UID_BASE ?= 3800000000
soak: $(NEEDS_DEPS)
	$(MAKE) all
	@/usr/bin/python3 tests/soak/soak.py --build $(BUILD) --runs $(SOAK_RUNS) --clients $(SOAK_CLIENTS) \
		--uid-base $(SOAK_UID_BASE) $(SOAK_OPTS)

# The fuzz target compiles the protocol's sources itself with clang, instrumented, rather than
# linking libanvil.a (built without coverage). `make fuzz FUZZ_SECONDS=600` runs it longer;
# crashes land in $(BUILD)/fuzz/crashes/, the grown corpus in $(BUILD)/fuzz/corpus/.
FUZZ_CC      ?= clang
FUZZ_SECONDS ?= 60
FUZZ_LIB     := lib/err.c lib/fd.c lib/utf8.c proto/codec.c proto/frame.c proto/messages.c
# clang's -Wformat=2 also flags lib/err.c's vsnprintf of a va_list, which gcc accepts.
FUZZ_CFLAGS  := -std=gnu11 -g -O1 -I. $(WARN) -Wno-format-nonliteral -fno-omit-frame-pointer

$(BUILD)/fuzz/fuzz_proto: tests/fuzz/fuzz_proto.c $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^ $(TOOL_LIBS)

$(BUILD)/fuzz/fuzz_proto_seeds: tests/fuzz/fuzz_proto.c $(FUZZ_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDS -o $@ $^ $(TOOL_LIBS)

fuzz: $(BUILD)/fuzz/fuzz_proto $(BUILD)/fuzz/fuzz_proto_seeds
	@mkdir -p $(BUILD)/fuzz/corpus $(BUILD)/fuzz/crashes
	$(BUILD)/fuzz/fuzz_proto_seeds $(BUILD)/fuzz/seeds
	$(BUILD)/fuzz/fuzz_proto -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/crashes/ $(BUILD)/fuzz/corpus $(BUILD)/fuzz/seeds

# The kernel audit record parser (policy/kaudit.c): `make fuzz-kaudit`, as `make fuzz` does the
# protocol's; crashes in $(BUILD)/fuzz/kaudit-crashes/.
FUZZ_KAUDIT_LIB := lib/utf8.c policy/kaudit.c policy/reasons.c

$(BUILD)/fuzz/fuzz_kaudit: tests/fuzz/fuzz_kaudit.c $(FUZZ_KAUDIT_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^

$(BUILD)/fuzz/fuzz_kaudit_seeds: tests/fuzz/fuzz_kaudit.c $(FUZZ_KAUDIT_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDS -o $@ $^

.PHONY: fuzz-kaudit
fuzz-kaudit: $(BUILD)/fuzz/fuzz_kaudit $(BUILD)/fuzz/fuzz_kaudit_seeds
	@mkdir -p $(BUILD)/fuzz/kaudit-corpus $(BUILD)/fuzz/kaudit-crashes
	$(BUILD)/fuzz/fuzz_kaudit_seeds $(BUILD)/fuzz/kaudit-seeds
	$(BUILD)/fuzz/fuzz_kaudit -max_total_time=$(FUZZ_SECONDS) -max_len=10000 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/kaudit-crashes/ $(BUILD)/fuzz/kaudit-corpus $(BUILD)/fuzz/kaudit-seeds

# The model client's decoders (broker/model_parse.c): `make fuzz-model`, as above; crashes in
# $(BUILD)/fuzz/model-crashes/.
FUZZ_MODEL_LIB := lib/utf8.c broker/model_parse.c policy/reasons.c

$(BUILD)/fuzz/fuzz_model: tests/fuzz/fuzz_model.c $(FUZZ_MODEL_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^ $(call pc,--libs,jansson)

$(BUILD)/fuzz/fuzz_model_seeds: tests/fuzz/fuzz_model.c $(FUZZ_MODEL_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDS -o $@ $^ $(call pc,--libs,jansson)

.PHONY: fuzz-model
fuzz-model: $(BUILD)/fuzz/fuzz_model $(BUILD)/fuzz/fuzz_model_seeds
	@mkdir -p $(BUILD)/fuzz/model-corpus $(BUILD)/fuzz/model-crashes
	$(BUILD)/fuzz/fuzz_model_seeds $(BUILD)/fuzz/model-seeds
	$(BUILD)/fuzz/fuzz_model -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/model-crashes/ $(BUILD)/fuzz/model-corpus $(BUILD)/fuzz/model-seeds

# The egress proxy's host and rule parsers (egress/rules.c): `make fuzz-egress`, as above;
# crashes in $(BUILD)/fuzz/egress-crashes/.
FUZZ_EGRESS_LIB := lib/err.c egress/rules.c

$(BUILD)/fuzz/fuzz_egress: tests/fuzz/fuzz_egress.c $(FUZZ_EGRESS_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^

$(BUILD)/fuzz/fuzz_egress_seeds: tests/fuzz/fuzz_egress.c $(FUZZ_EGRESS_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDS -o $@ $^

.PHONY: fuzz-egress
fuzz-egress: $(BUILD)/fuzz/fuzz_egress $(BUILD)/fuzz/fuzz_egress_seeds
	@mkdir -p $(BUILD)/fuzz/egress-corpus $(BUILD)/fuzz/egress-crashes
	$(BUILD)/fuzz/fuzz_egress_seeds $(BUILD)/fuzz/egress-seeds
	$(BUILD)/fuzz/fuzz_egress -max_total_time=$(FUZZ_SECONDS) -max_len=512 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/egress-crashes/ $(BUILD)/fuzz/egress-corpus $(BUILD)/fuzz/egress-seeds

# The agent's pure pieces (broker/reply.c, broker/prompt.c): a model's reply, the capability
# declaration, the observation and the prompt: `make fuzz-agent`; crashes in $(BUILD)/fuzz/agent-crashes/.
FUZZ_AGENT_LIB := $(FUZZ_LIB) proto/names.c broker/reply.c broker/prompt.c broker/textbuf.c policy/reasons.c policy/capabilities.c \
	policy/variables.c

$(BUILD)/fuzz/fuzz_agent: tests/fuzz/fuzz_agent.c $(FUZZ_AGENT_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -o $@ $^ $(TOOL_LIBS) $(call pc,--libs,jansson)

$(BUILD)/fuzz/fuzz_agent_seeds: tests/fuzz/fuzz_agent.c $(FUZZ_AGENT_LIB)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(FUZZ_CFLAGS) -DFUZZ_SEEDS -o $@ $^ $(TOOL_LIBS) $(call pc,--libs,jansson)

.PHONY: fuzz-agent
fuzz-agent: $(BUILD)/fuzz/fuzz_agent $(BUILD)/fuzz/fuzz_agent_seeds
	@mkdir -p $(BUILD)/fuzz/agent-corpus $(BUILD)/fuzz/agent-crashes
	$(BUILD)/fuzz/fuzz_agent_seeds $(BUILD)/fuzz/agent-seeds
	$(BUILD)/fuzz/fuzz_agent -max_total_time=$(FUZZ_SECONDS) -max_len=65536 -timeout=10 \
		-artifact_prefix=$(BUILD)/fuzz/agent-crashes/ $(BUILD)/fuzz/agent-corpus $(BUILD)/fuzz/agent-seeds

# `make install PREFIX=/usr DESTDIR=...`: the programs, the runner and pid 1, the units, the
# system users, the shipped configuration (never over one already there: an administrator's
# edits stay), the man pages, generated by help2man from each program's --help and
# --version, so that they never say other than the programs do, and anvilctl's bash
# completion (which reads its options from anvilctl's help too). Every file installed is listed in
# $(BUILD)/install.list (as the paths below DESTDIR) for `make uninstall`, which removes
# exactly those, and the configuration only if it is still the shipped one.
MAN_PAGES := $(BUILD)/man/anvil-supervisor.8 $(BUILD)/man/anvil-broker.8 $(BUILD)/man/anvil-egress.8 \
             $(BUILD)/man/anvilctl.1 $(BUILD)/man/anvil-mcp.1

$(BUILD)/man/%.8: $(BUILD)/%
	@mkdir -p $(dir $@)
	help2man --no-info --no-discard-stderr --section=8 \
		--name="$(if $(filter anvil-supervisor,$*),builds jails and runs tools in them,$(if $(filter anvil-egress,$*),the egress proxy: each run's approved hosts and no other,the unprivileged daemon between clients and the supervisor))" \
		--output=$@ $<

# anvilctl's page also holds each command's own help (anvilctl help COMMAND), as it prints it.
$(BUILD)/man/anvilctl.h2m: $(BUILD)/anvilctl
	@mkdir -p $(dir $@)
# (the tail every command's help shares, the broker and the exit status, is the page's once)
	{ for c in run submit trace probe verify ui; do printf '[COMMAND %s]\n.nf\n' "$$(echo $$c | tr a-z A-Z)"; \
		$< help $$c | sed -e '/^The broker is reached at/,$$d' -e 's/\\/\\e/g' -e "s/^[.']/\\\\\&&/"; \
		printf '.fi\n'; done; } >$@

# anvil-mcp's page is its --help alone (a more specific rule than the one below, so make takes it).
$(BUILD)/man/anvil-mcp.1: $(BUILD)/anvil-mcp
	@mkdir -p $(dir $@)
	help2man --no-info --no-discard-stderr --section=1 \
		--name="serves Anvil to an MCP host over stdio" --output=$@ $<

$(BUILD)/man/%.1: $(BUILD)/% $(BUILD)/man/%.h2m
	@mkdir -p $(dir $@)
	help2man --no-info --no-discard-stderr --section=1 --include=$(BUILD)/man/$*.h2m \
		--name="runs tools and agent tasks through Anvil" --output=$@ $<

INSTALLED = $(SBINDIR)/anvil-supervisor $(SBINDIR)/anvil-broker $(SBINDIR)/anvil-egress $(BINDIR)/anvilctl $(BINDIR)/anvil-mcp \
            $(LIBEXECDIR)/anvil-py $(LIBEXECDIR)/anvil-init \
            $(UNITDIR)/anvil-supervisor.service $(UNITDIR)/anvil-broker.service $(UNITDIR)/anvil-broker.socket \
            $(UNITDIR)/anvil-egress.service \
            $(SYSUSERSDIR)/anvil.conf \
            $(MANDIR)/man8/anvil-supervisor.8 $(MANDIR)/man8/anvil-broker.8 $(MANDIR)/man8/anvil-egress.8 \
            $(MANDIR)/man1/anvilctl.1 \
            $(MANDIR)/man1/anvil-mcp.1 \
            $(COMPLETIONDIR)/anvilctl \
            $(addprefix $(PYTHONDIR)/anvil_client/,$(notdir $(PY_CLIENT))) \
            $(WEB_FILES:%=$(WEBDIR)/%)

# The web UI's files (web/, served by the broker's --http from $(WEBDIR), which it finds
# beside itself: SBINDIR/../share/anvil/web), each installed as it is.
WEBDIR    ?= $(PREFIX)/share/anvil/web
WEB_FILES := $(patsubst web/%,%,$(shell find web -type f 2>/dev/null | sort))

install: all $(MAN_PAGES)
	install -d $(DESTDIR)$(SBINDIR) $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(UNITDIR) \
		$(DESTDIR)$(SYSUSERSDIR) $(DESTDIR)$(MANDIR)/man8 $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(SYSCONFDIR)/anvil \
		$(DESTDIR)$(COMPLETIONDIR) $(DESTDIR)$(PYTHONDIR)/anvil_client
	install -m 0755 $(BUILD)/anvil-supervisor $(BUILD)/anvil-broker $(BUILD)/anvil-egress $(DESTDIR)$(SBINDIR)/
	install -m 0755 $(BUILD)/anvilctl $(BUILD)/anvil-mcp $(DESTDIR)$(BINDIR)/
	install -m 0755 $(BUILD)/anvil-py $(BUILD)/anvil-init $(DESTDIR)$(LIBEXECDIR)/
	for u in anvil-supervisor.service anvil-broker.service anvil-broker.socket anvil-egress.service; do \
		sed -e 's|/usr/sbin/|$(SBINDIR)/|g' -e 's|/etc/anvil/|$(SYSCONFDIR)/anvil/|g' systemd/$$u >$(DESTDIR)$(UNITDIR)/$$u && \
		chmod 0644 $(DESTDIR)$(UNITDIR)/$$u || exit 1; done
	install -m 0644 systemd/sysusers.d/anvil.conf $(DESTDIR)$(SYSUSERSDIR)/anvil.conf
	install -m 0644 $(BUILD)/man/anvil-supervisor.8 $(BUILD)/man/anvil-broker.8 $(BUILD)/man/anvil-egress.8 \
		$(DESTDIR)$(MANDIR)/man8/
	install -m 0644 $(BUILD)/man/anvilctl.1 $(BUILD)/man/anvil-mcp.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 ctl/anvilctl.bash $(DESTDIR)$(COMPLETIONDIR)/anvilctl
	install -m 0644 $(PY_CLIENT) $(DESTDIR)$(PYTHONDIR)/anvil_client/
	for f in $(WEB_FILES); do install -D -m 0644 web/$$f $(DESTDIR)$(WEBDIR)/$$f || exit 1; done
	@printf '%s\n' $(INSTALLED) >$(BUILD)/install.list
	@if [ -f etc/anvil.conf ]; then \
		if [ -e $(DESTDIR)$(SYSCONFDIR)/anvil/anvil.conf ]; then \
			echo "  kept $(DESTDIR)$(SYSCONFDIR)/anvil/anvil.conf (the shipped one is etc/anvil.conf)"; \
		else install -m 0644 etc/anvil.conf $(DESTDIR)$(SYSCONFDIR)/anvil/anvil.conf && \
			echo $(SYSCONFDIR)/anvil/anvil.conf >>$(BUILD)/install.list; fi; fi
	@echo "  installed $$(wc -l <$(BUILD)/install.list) files below $(DESTDIR)/ (listed in $(BUILD)/install.list)"

# What install put, and the directories it made that are then empty. The configuration goes
# only while it is byte for byte the shipped one: an edited one is the administrator's.
uninstall:
	for f in $(INSTALLED); do rm -f $(DESTDIR)$$f; done
	rm -rf $(DESTDIR)$(PYTHONDIR)/anvil_client/__pycache__ # what python3 compiled of those alone
	@c=$(DESTDIR)$(SYSCONFDIR)/anvil/anvil.conf; if [ -f "$$c" ]; then \
		if [ -f etc/anvil.conf ] && cmp -s etc/anvil.conf "$$c"; then rm -f "$$c"; \
		else echo "  kept $$c: it is not the shipped one"; fi; fi
	-@rmdir $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(SYSCONFDIR)/anvil $(DESTDIR)$(PYTHONDIR)/anvil_client 2>/dev/null; true
	-@find $(DESTDIR)$(WEBDIR) -depth -type d -empty -delete 2>/dev/null; rmdir $(DESTDIR)$(PREFIX)/share/anvil 2>/dev/null; true

# The units started for real: a VM boots systemd as pid 1 and runs the README's install, a
# tool, an agent task, the stop and `make uninstall` (tests/vm/systemd.sh; minutes under
# emulation, so not part of check). Needs qemu-system-x86, linux-image-amd64, busybox-static.
.PHONY: check-systemd-vm
check-systemd-vm:
	@tests/vm/systemd.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD)

# The objects' dependency files and the test programs' ($(BUILD)/tests/*.d).
-include $(shell find $(BUILD)/obj $(JAIL_OBJ) -name '*.d' 2>/dev/null) $(wildcard $(BUILD)/tests/*.d)
