# The two commands a new user needs: `make run` and `make test`. Everything else is optional.
# Each target installs missing Debian packages first (scripts/install-deps.sh, silent when done).

SAMPLE := resources/models/sample_yolo_tiny.onnx
SAMPLE_RANGES := resources/models/sample_yolo_tiny.ranges.json
JOBS ?= $(shell nproc)
FUZZ_SECONDS ?= 1800
FUZZ_TARGET ?= onnx_import_fuzzer

BENCH_THREADS ?= 2
SOAK_RUNS ?= 100000
SOAK_MODEL ?= moe_tiny
SHARED ?= ../shared

.PHONY: run test bench bench-int8 corpus corpus-check bench-corpus conformance soak screenshots setup configure build asan fuzz format clean help

help:
	@echo "make run    build and open the bundled sample model in the studio (text without a display)"
	@echo "make test   build and run the whole test suite (ctest)"
	@echo "make bench  build and run the benchmarks (tables on stdout, JSON under build/bench/)"
	@echo "make corpus  generate the models of corpus/models.json from PyTorch (random weights) into build/corpus/"
	@echo "make corpus-check  plan and run every corpus model at its bindings and against PyTorch's outputs"
	@echo "make bench-int8  QDQ int8 resnet18 and mobilenet_v3 (quantised from the corpus) against their float models and ONNX Runtime (build/bench/int8.json)"
	@echo "make bench-corpus  the memory-plan benchmark on that corpus (plan vs greedy vs lower bound; build/bench/corpus/)"
	@echo "make conformance  run the 1,072 cases of ONNX's backend test suite (libonnx-testdata); table in build/bench/conformance.json"
	@echo "make soak   the agent runs SOAK_MODEL (moe_tiny) SOAK_RUNS (100000) times with varying bindings and cancels; fails if its RSS grows after warm-up (curve: build/bench/soak.json)"
	@echo "make screenshots  regenerate README's studio screenshots (resources/screenshots) from SHARED (../shared) models"
	@echo "make asan   build and test with AddressSanitizer + UBSan"
	@echo "make fuzz   run FUZZ_TARGET (onnx_import_fuzzer | rdp_fuzzer | package_load_fuzzer | package_run_fuzzer | agent_stream_fuzzer | host_protocol_fuzzer | fused_elementwise_fuzzer | npy_fuzzer) for FUZZ_SECONDS (1800)"
	@echo "make cross-arm64  cross-build the runtime and agent for arm64 Linux (static, build-arm64/; ctest -L cross)"

setup:
	@bash scripts/install-deps.sh

# Reconfigure only when there is no build tree yet; CMake re-runs itself when CMakeLists change.
build/build.ninja: | setup
	@cmake --preset dev >/dev/null

configure: setup build/build.ninja

build: configure
	@cmake --build --preset dev -j $(JOBS)

# The studio on the sample when there is a display; without one, how to get one, and the same
# model's analysis as text. (Its ranges come from the .ranges.json beside it.)
run: build
	@if [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ] && [ "$$QT_QPA_PLATFORM" != offscreen ]; then \
	  ./build/bin/sod2-studio $(SAMPLE); \
	elif [ "$$QT_QPA_PLATFORM" = offscreen ]; then \
	  ./build/bin/sod2-studio --screenshot build/studio.png --view window $(SAMPLE) && \
	  echo "QT_QPA_PLATFORM=offscreen has no window to show: the studio rendered build/studio.png"; \
	else \
	  echo "No display: the studio needs one. Run 'xvfb-run -a make run' for a virtual one, or"; \
	  echo "'QT_QPA_PLATFORM=offscreen make run' to render the studio into build/studio.png."; \
	  echo "Meanwhile, here is the sample model's analysis from the command line:"; echo; \
	  ./build/bin/sod2 inspect $(SAMPLE) --ranges $(SAMPLE_RANGES); \
	fi

test: build
	@ctest --preset dev -j $(JOBS)

# Models the project never tuned on (corpus/README.md): generated, not committed.
corpus:
	@bash scripts/install-corpus-deps.sh
	@/usr/bin/python3 corpus/generate.py build/corpus

corpus-check: build corpus
	@/usr/bin/python3 corpus/check.py build/bin/sod2 build/corpus

# The corpus against ONNX Runtime at batch 1 and 8 with the roofline and 1->2 thread scaling
# (tests/bench/ort_compare.js; about 25 minutes on 2 cores), after the memory-plan tables.
bench-corpus: build corpus
	@./build/bin/plan_bench build/corpus build/bench/corpus
	@scripts/install-bench-deps.sh
	@NODE_PATH=$$(../shared/bench/install-ort.sh | tail -1) \
	  node tests/bench/ort_compare.js build/bin/sod2 build/corpus build/bench/corpus \
	  --ort-bench ../shared/bench/ort_bench.js --threads $(BENCH_THREADS) --runs 10 \
	  --batches 1,8 --scaling $(if $(BENCH_ONLY),--only $(BENCH_ONLY))

bench: build
	@./build/bin/rdp_bench ../shared/models build/bench
	@./build/bin/plan_bench ../shared/models build/bench
	@./build/bin/studio_open_bench 10000 build/bench
	@./build/bin/studio_open_bench 50000 build/bench
	@./build/bin/family_bench ../shared/models build/bench
	@./build/bin/elementwise_fusion_bench build/bench
	@./build/bin/vulkan_bench ../shared/models build/bench $(BENCH_THREADS)
	@scripts/install-bench-deps.sh
	@NODE_PATH=$$(../shared/bench/install-ort.sh | tail -1) \
	  node tests/bench/ort_compare.js build/bin/sod2 ../shared/models build/bench \
	  --threads $(BENCH_THREADS) --runs 20 --scaling
	@$(MAKE) --no-print-directory bench-int8

# int8: the corpus's conv nets quantised to QDQ, against their float models and ONNX Runtime.
bench-int8: build corpus
	@scripts/install-bench-deps.sh
	@/usr/bin/python3 tests/bench/int8_bench.py build/bin/sod2 build/corpus build/bench \
	  --threads $(BENCH_THREADS)

# Not part of `make test` (about 2 minutes on 2 cores): every case of ONNX's backend test suite
# (libonnx-testdata) through the runtime; the table is build/bench/conformance.{json,txt}.
conformance: build
	@bash scripts/conformance.sh build/bin/sod2 /usr/share/libonnx-testdata/data build/bench

# Not part of `make test`: 100,000 runs take a while (SOAK_RUNS=2000 for a quick look).
soak: configure
	@cmake --build --preset dev -j $(JOBS) --target agent_soak sod2 sod2-agent
	@bash scripts/soak.sh $(SOAK_RUNS) $(SOAK_MODEL)

# README's screenshots, rendered offscreen from the shared models and the bundled sample (about
# 30 s; the profile, history and variants pictures carry this machine's latencies).
screenshots: build
	@bash scripts/make-screenshots.sh $(SHARED) resources/screenshots

asan: setup
	@cmake --preset asan >/dev/null
	@cmake --build --preset asan -j $(JOBS)
	@ctest --preset asan -j $(JOBS)

fuzz: setup
	@cmake --preset fuzz >/dev/null
	@cmake --build --preset fuzz -j $(JOBS)
	@bash scripts/run-fuzzer.sh $(FUZZ_TARGET) $(FUZZ_SECONDS)

# The runtime for arm64 Linux with Debian's cross compiler: static run_package and sod2-agent in
# build-arm64/bin (runtime/README.md, "Building for arm64"); `ctest -L cross` in the host build
# runs them under qemu-aarch64. The agent is copied to build/bin/agents/aarch64/, where the adb
# transport looks for an arm64 phone's agent.
.PHONY: cross-arm64
cross-arm64:
	@bash scripts/install-cross-deps.sh
	@cmake --preset arm64-linux >/dev/null
	@cmake --build --preset arm64-linux -j $(JOBS) --target run_package sod2-agent
	@# Where `sod2 profile --device adb` finds the agent for an arm64 phone.
	@install -D -m 755 build-arm64/bin/sod2-agent build/bin/agents/aarch64/sod2-agent

format:
	@git ls-files '*.h' '*.cpp' | xargs clang-format -i

clean:
	@rm -rf build build-release build-asan build-fuzz
