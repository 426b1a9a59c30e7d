# The two commands a user needs: `make demo` (the main job) and `make test`.
# SANITIZE=1 builds everything with ASan+UBSan into build-asan/ (Debug, at -O1).
# BUILD_TYPE=Release|Debug|RelWithDebInfo (default RelWithDebInfo) and
# CC=clang pick the build; give each its own folder with BUILD=, e.g.
#   make test CC=clang BUILD=build-clang
#   make test BUILD_TYPE=Release BUILD=build-release
# (a folder is reconfigured when these are given and differ from its
# configuration).  -Werror is always on.
# VALGRIND=1 runs the main job (every `make demo` command starts with $(RUN))
# under valgrind's memcheck, failing on any error or leak (CI does).
# `make demo` builds only the command line, quietly (the log is shown only
# when the build fails);
# `make test` shows the build and every test, then a summary that lists the
# skipped tests and why (scripts/ctest.sh).
# `make fuzz` builds the libFuzzer targets (clang) into build-fuzz/ and runs
# each for FUZZ_SECONDS (default 60; FUZZ_TARGETS="onnx npy" picks some);
# docs/hardening.md.
BUILD ?= build
BUILD_TYPE ?= RelWithDebInfo
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(SANITIZE),1)
BUILD := build-asan
BUILD_TYPE := Debug
CMAKE_FLAGS += -DENPU_SANITIZE=ON
endif
CONFIG := -DCMAKE_C_COMPILER=$(CC) -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) $(CMAKE_FLAGS)
# Which of them were asked for (command line or environment): an existing
# folder is reconfigured only for those, so `make demo BUILD=build-clang`
# (as a test does) builds that folder as it was configured.
ASKED := $(strip $(foreach v,CC BUILD_TYPE CMAKE_FLAGS SANITIZE,$(filter command environment,$(firstword $(origin $(v))))))
DEPS_OPTS := $(if $(findstring clang,$(CC)),--clang)
EASYNPU := $(BUILD)/easynpu
RUN :=
DEMO_DEPS :=
ifeq ($(VALGRIND),1)
RUN := valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,indirect,possible -q
DEMO_DEPS := deps-valgrind
endif
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

.PHONY: all deps deps-valgrind configure build build-cli test test-long demo fuzz clean

all: build

deps:
	@sh scripts/deps.sh $(DEPS_OPTS)

deps-valgrind:
	@sh scripts/deps.sh --valgrind

# Configures when the folder is new, or CC / BUILD_TYPE / CMAKE_FLAGS /
# SANITIZE were given and differ from the folder's configuration.
configure: deps
	@if [ ! -f $(BUILD)/CMakeCache.txt ] || \
	    { [ -n "$(ASKED)" ] && [ "$$(cat $(BUILD)/.make-config 2>/dev/null)" != "$(CONFIG)" ]; }; then \
	  echo "cmake -S . -B $(BUILD) $(CONFIG)"; \
	  cmake -S . -B $(BUILD) $(CONFIG) && echo "$(CONFIG)" > $(BUILD)/.make-config; \
	fi

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# Only the command line (the library and `easynpu`): what the main job needs.
build-cli: configure
	cmake --build $(BUILD) -j $(JOBS) --target easynpu_cli

# Two tiers (tests/testutil.h ENPU_TEST_MAIN_TIERS): `make test` is the
# newcomer's command, minutes on two cores; `make test-long` runs the long
# campaigns (CTest label `long`), which CI runs too.
test: build
	@sh scripts/ctest.sh $(BUILD) $(JOBS) -LE long

test-long: build
	@sh scripts/ctest.sh $(BUILD) $(JOBS) -L long

demo: $(DEMO_DEPS)
	@mkdir -p $(BUILD)
	@echo "building $(EASYNPU) ..."
	@$(MAKE) --no-print-directory build-cli > $(BUILD)/make-build.log 2>&1 || \
	  { cat $(BUILD)/make-build.log; echo "make demo: the build failed (log above, also in $(BUILD)/make-build.log)"; exit 1; }
	$(RUN) $(EASYNPU) run models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy

fuzz:
	ENPU_FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_TARGETS)

clean:
	rm -rf build build-asan build-fuzz build-clang build-release

# The RTL (docs/rtl.md): `make rtl-test` co-simulates it with the C simulator
# cycle by cycle and checks that one-line mutations are caught; `make synth`
# synthesizes it with Yosys and prints cells and area beside the area model.
# Both build in build-rtl/ and install Verilator and Yosys (deps.sh --rtl);
# the normal build and `make test` need neither.
.PHONY: rtl-test synth
rtl-test:
	@sh scripts/rtl.sh test

synth:
	@sh scripts/rtl.sh synth
