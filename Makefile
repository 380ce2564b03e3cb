# moat front door: make, make demo, make check. Everything real is in meson.
BUILD ?= build
ASAN_BUILD ?= build-asan

.PHONY: all deps build demo check test format clean bench fuzz

all: build

deps:
	@scripts/deps.sh

build: deps
	@scripts/setup-build.sh $(BUILD)
	@ninja -C $(BUILD) >/dev/null || ninja -C $(BUILD)

demo: build
	@scripts/demo.sh $(BUILD)/moat

# Every suite twice (normal, ASan+UBSan), fuzz corpora, banned functions,
# layering; ends with "N passed, M failed".
check: deps
	@scripts/check.sh

test: build
	meson test -C $(BUILD) --print-errorlogs

bench: build
	@bench/run.sh $(BUILD)

fuzz: deps
	@scripts/fuzz.sh

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) build-fuzz
