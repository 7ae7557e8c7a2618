# The two commands a newcomer runs: `make run` and `make test`. Both create .venv as needed.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
EXAMPLE := examples/memory

.PHONY: run test test-quick check install bench eval eval-locomo eval-dates eval-pairs docs clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Re-install when the package metadata changes; the stamp files record what was installed.
$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-check: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[check]'
	touch $@ $(VENV)/.installed

install: $(VENV)/.installed

## make run: install memdir and run its main job on a copy of the bundled example folder, whose
## MEMORY.md was written by hand and lists two of its five memories, as folders people have do.
# A copy, so that every run shows the same regeneration and the checkout stays as it was.
RUN_COPY := build/example-memory
run: $(VENV)/.installed
	@rm -rf $(RUN_COPY) && mkdir -p $(dir $(RUN_COPY)) && cp -R $(EXAMPLE) $(RUN_COPY)
	@echo "\$$ cp -R $(EXAMPLE) $(RUN_COPY)"
	@echo; echo "\$$ memdir --dir $(RUN_COPY) index"
	@$(BIN)/memdir --dir $(RUN_COPY) index
	@echo; echo "\$$ memdir --dir $(RUN_COPY) list"
	@$(BIN)/memdir --dir $(RUN_COPY) list
	@echo; echo "\$$ memdir --dir $(RUN_COPY) lint"
	@$(BIN)/memdir --dir $(RUN_COPY) lint
	@echo; echo "\$$ memdir --dir $(RUN_COPY) recall \"we are about to ship the mobile release\""
	@$(BIN)/memdir --dir $(RUN_COPY) recall "we are about to ship the mobile release"
	@echo; echo "\$$ cat $(RUN_COPY)/MEMORY.md"
	@cat $(RUN_COPY)/MEMORY.md

## make test: install the test dependencies and run every test, on every core (pytest-xdist).
# pytest exits 5 when it collected no test: that is a broken suite, not a pass.
# Every test is safe in parallel: each worker is a process with its own temporary folders, working
# directory and environment; a module-scoped fixture is built once per worker. What is costly to build
# (the sdist and wheel, pre-commit's hook environment) is built once for all workers into .cache/ under
# a digest of the source tree, and reused by later runs until a file changes; they install memdir's
# build backend and dependencies offline, from a wheelhouse made once per dependency set in
# ~/.cache/memdir-tests/ (remove its wheelhouse/ to pick up new releases). TEST_WORKERS=0: serial.
# --dist worksteal: a worker that runs out of tests takes half of what another has left, so the two
# finish together.
# PYTHONDONTWRITEBYTECODE= (empty): Python keeps its bytecode in __pycache__/ (ignored by git) as it
# does by default, even where the environment turns that off; else every `python -m memdir` a test
# starts compiles memdir again, and every worker rewrites every test module (13% of the run's CPU).
TEST_WORKERS ?= auto
TEST_DIST := --dist worksteal
PYTEST := PYTHONDONTWRITEBYTECODE= $(BIN)/python -m pytest -n $(TEST_WORKERS) $(TEST_DIST)
test: $(VENV)/.installed-test
	@$(PYTEST) $(PYTEST_ARGS); code=$$?; \
	if [ $$code -eq 5 ]; then echo "make test: pytest ran no tests" >&2; fi; \
	exit $$code

## make test-quick: every test but those marked slow (subprocesses, wheels, crash runs).
test-quick: $(VENV)/.installed-test
	@$(PYTEST) -m "not slow" $(PYTEST_ARGS); code=$$?; \
	if [ $$code -eq 5 ]; then echo "make test-quick: pytest ran no tests" >&2; fi; \
	exit $$code

## make check: the checks that keep the code as it is, at the versions pinned in pyproject.toml.
check: $(VENV)/.installed-check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## make bench: the benchmark suite; writes BENCHMARKS.md (a few minutes; run it on a quiet machine).
bench: $(VENV)/.installed
	$(BIN)/python scripts/bench.py

eval-dates: $(VENV)/.installed
	$(BIN)/python scripts/eval_dates.py

## make eval: recall@5, precision@5 and false injection of `memdir recall` on the labelled dev queries,
## beside a plain BM25 baseline (needs ../shared/eval/dev/recall/; says so and exits 0 without it), the
## same by cross-validation (two halves), LoCoMo (make eval-locomo), then the realistic no-answer
## protocol on the real folders and generated ones of 500 and 5,000 memories. Each beside recall as it
## was before issue 31, in the same run.
eval: $(VENV)/.installed
	$(BIN)/python scripts/eval_recall.py --no-timings
	$(BIN)/python scripts/eval_recall.py --cv
	$(BIN)/python scripts/eval_locomo.py
	$(BIN)/python scripts/eval_noanswer.py --sizes 500,5000

## make eval-locomo: recall@5, silent share and cross-folder false injection on the LoCoMo conversations
## of ../shared/eval/locomo-dev/ (200 questions, fixed seed), beside plain BM25 on the same sample.
eval-locomo: $(VENV)/.installed
	$(BIN)/python scripts/eval_locomo.py

## make eval-pairs: near-duplicate and contradiction detection on the labelled dev pairs, then the same
## by cross-validation (tuned on one half, reported on the other, both ways).
eval-pairs: $(VENV)/.installed
	$(BIN)/python scripts/eval_pairs.py
	$(BIN)/python scripts/eval_pairs.py --cv

docs: $(VENV)/.installed
	$(BIN)/python scripts/gen_docs.py

clean:
	rm -rf $(VENV) build dist .pytest_cache .mypy_cache .ruff_cache .cache memdir.egg-info
