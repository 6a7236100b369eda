# adcp-ledger — top-level entry points. CMake does the building; see README.md.
BUILD ?= build
SAN_BUILD ?= build-sanitize
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
FUZZ_SECONDS ?= 60
# make install [PREFIX=/usr/local] [DESTDIR=staging]: docs/packaging.md
PREFIX ?= /usr/local

.PHONY: all deps build run test test-fast sanitize tsan bench fuzz format format-check clean install

all: build

deps:
	@scripts/install-deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# make run builds quietly (the full log is $(BUILD)/build.log, shown on failure)
# so the demo is what it prints.
run: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release >/dev/null
	@echo "building in $(BUILD)/ (log: $(BUILD)/build.log)"
	@cmake --build $(BUILD) -j $(JOBS) >$(BUILD)/build.log 2>&1 || { tail -n 40 $(BUILD)/build.log; exit 1; }
	@scripts/demo.sh $(BUILD)

test: build
	@scripts/test.sh $(BUILD)

# The edit-compile-test loop: the "fast" ctest label (tests/CMakeLists.txt),
# with PostgreSQL only (no radosgw or Azurite: none of these tests needs them).
test-fast: build
	@ADCP_TEST_LABEL=fast ADCP_TEST_RADOSGW=0 ADCP_TEST_AZURITE=0 scripts/test.sh $(BUILD)

install: build
	@DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

sanitize: deps
	@CC=clang cmake -S . -B $(SAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DADCP_SANITIZE=ON >/dev/null
	@cmake --build $(SAN_BUILD) -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 scripts/test.sh $(SAN_BUILD)

# ThreadSanitizer over the same suite: the commit writer threads, the staged
# writes and the SQLite checkpointer. halt_on_error makes any report fail the run.
tsan: deps
	@CC=clang cmake -S . -B $(TSAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DADCP_TSAN=ON >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	@TSAN_OPTIONS=halt_on_error=1 scripts/test.sh $(TSAN_BUILD)

bench: build
	@bench/run.sh $(BUILD)

fuzz: deps
	@CC=clang cmake -S . -B $(FUZZ_BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo -DADCP_FUZZ=ON -DADCP_TESTS=OFF >/dev/null
	@cmake --build $(FUZZ_BUILD) -j $(JOBS)
	@fuzz/run.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

# clang-format (.clang-format) over the C sources, in place; format-check only lists what differs.
format: deps
	@find src include tests bench fuzz -type f \( -name '*.c' -o -name '*.h' \) -print0 | xargs -0 clang-format --style=file -i

format-check: deps
	@scripts/format-check.sh

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(TSAN_BUILD) $(FUZZ_BUILD)
