# zombiesim — the two commands a user needs are `make demo` and `make test`.
# Everything installs into a local virtualenv (.venv) from the package registries.

SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
CARGO  ?= cargo

.PHONY: demo test test-rust test-debug test-python goldens bench lint fmt build build-dev clean fuzz

$(BIN)/maturin:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet "maturin>=1.16,<2"

# Build the Rust extension in release mode and install the package into the
# virtualenv: `build` with its runtime dependencies only (what `make demo` needs),
# `build-dev` with the `dev` extra too (test tools, ruff, the Ray and Dask engines:
# what `make test` and `make lint` need). pip's lines about what is already
# installed are left out; everything else (and any failure) shows.
MATURIN_DEVELOP = VIRTUAL_ENV=$(abspath $(VENV)) $(BIN)/maturin develop --release --quiet
PIP_QUIET       = { grep -vE '^(Requirement already satisfied|Ignoring [a-z]+: markers|Looking in links)' || true; }

build: $(BIN)/maturin
	$(MATURIN_DEVELOP) 2>&1 | $(PIP_QUIET)

build-dev: $(BIN)/maturin
	$(MATURIN_DEVELOP) --extras dev 2>&1 | $(PIP_QUIET)

demo: build
	$(BIN)/zombiesim demo

test: build-dev test-rust test-python

test-rust:
	$(CARGO) test -p zombiesim --release

# The model check in the test profile, where debug assertions are on (CI runs it too).
test-debug:
	$(CARGO) test -p zombiesim --test model_check

# The Python tests on one worker per core (pytest-xdist), a test file per worker at a
# time so that each file's shared fixtures are built once. PYTEST_WORKERS=0 runs them in
# this process, one after another. Failed, erroring and skipped tests are listed at the end
# (-rfEs), each skip with its reason; under CI=true a skip fails (tests/conftest.py).
PYTEST_WORKERS ?= auto
test-python: build-dev
	$(BIN)/python -m pytest -q -rfEs -n $(PYTEST_WORKERS) --dist loadfile

# Rewrite the golden reports (crates/zombiesim/tests/golden/) from the current code,
# after a deliberate behaviour change only (docs/validation.md, "Golden reports").
goldens:
	ZOMBIESIM_BLESS=1 $(CARGO) test -p zombiesim --release --test integration golden::

# Fuzz every input parser for FUZZ_SECONDS (default 60) each with cargo-fuzz (fuzz/run.sh; not part of `make test`).
FUZZ_SECONDS ?= 60
fuzz:
	FUZZ_SECONDS=$(FUZZ_SECONDS) CARGO=$(CARGO) fuzz/run.sh $(FUZZ_TARGETS)

bench: build-dev
	$(CARGO) build --release -p zombiesim --example run_config --example trace_path
	$(BIN)/python benches/bench.py
	$(BIN)/zombiesim validate --full

lint: build-dev
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --all-targets -- -D warnings
	$(BIN)/ruff check python tests benches traces examples docs/samples.py
	$(BIN)/ruff format --check python tests benches traces examples docs/samples.py

fmt: $(BIN)/maturin
	$(CARGO) fmt --all
	$(BIN)/ruff format python tests benches traces examples docs/samples.py

clean:
	$(CARGO) clean
	rm -rf $(VENV) zombiesim-demo
