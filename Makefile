# The two commands a user needs: `make demo` (the main job) and `make test`.
# SANITIZE=1 builds everything with ASan+UBSan into build-asan/.
# VALGRIND=1 runs the main job (every `make demo` command starts with $(RUN))
# under valgrind's memcheck, failing on any error or leak (CI does).
# `make fuzz` builds the libFuzzer targets (clang) into build-fuzz/ and runs
# each for FUZZ_SECONDS (default 60; FUZZ_TARGETS="onnx npy" picks some);
# docs/hardening.md.
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(SANITIZE),1)
BUILD := build-asan
CMAKE_FLAGS += -DENPU_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
else
CMAKE_FLAGS += -DCMAKE_BUILD_TYPE=RelWithDebInfo
endif
EASYNPU := $(BUILD)/easynpu
RUN :=
DEMO_DEPS :=
ifeq ($(VALGRIND),1)
RUN := valgrind --leak-check=full --error-exitcode=1 --errors-for-leak-kinds=definite,indirect,possible -q
DEMO_DEPS := deps-valgrind
endif
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=

.PHONY: all deps deps-valgrind build test demo fuzz clean

all: build

deps:
	@sh scripts/deps.sh

deps-valgrind:
	@sh scripts/deps.sh --valgrind

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build $(DEMO_DEPS)
	$(RUN) $(EASYNPU) run models/kws_cnn.onnx --calib models/kws_cnn/calib --input models/kws_cnn/sample_0.npy

fuzz:
	ENPU_FUZZ_SECONDS=$(FUZZ_SECONDS) sh fuzz/run.sh $(FUZZ_TARGETS)

clean:
	rm -rf build build-asan build-fuzz
