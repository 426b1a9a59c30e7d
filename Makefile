# The two commands a user needs: `make demo` (the main job) and `make test`.
# SANITIZE=1 builds everything with ASan+UBSan into build-asan/.
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

.PHONY: all deps build test demo clean

all: build

deps:
	@sh scripts/deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) $(CMAKE_FLAGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

demo: build
	$(EASYNPU) inspect models/kws_cnn.onnx
	$(EASYNPU) run-float models/kws_cnn.onnx --input models/kws_cnn/sample_0.npy --output $(BUILD)/kws_cnn_out.npy

clean:
	rm -rf build build-asan
