# Every target installs from the hash-pinned locks in requirements/ into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test lint typecheck bench fuzz lock clean

install: $(STAMP)

$(STAMP): requirements/runtime.lock requirements/dev.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --require-hashes --no-deps -r requirements/runtime.lock -r requirements/dev.lock
	$(BIN)/python -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/rulecheck check controls/campaign
	$(BIN)/rulecheck check controls/experiment

test: $(STAMP) lint typecheck
	$(BIN)/python -m pytest -q -p no:cacheprovider

lint: $(STAMP)
	$(BIN)/ruff check engine tests
	$(BIN)/ruff format --check engine tests
	$(BIN)/rulecheck fmt --check rules/
	$(BIN)/rulecheck lint rules/
	$(BIN)/rulecheck fmt --check rules/inspect/
	$(BIN)/rulecheck lint rules/inspect/

typecheck: $(STAMP)
	$(BIN)/mypy

# Regenerates docs/performance.md whole: the machine, issue 12's targets (each figure beside
# a floor measured in the same run; reasons for a missed target from tests/bench/notes.yaml),
# then every section. Expected to take about 15 minutes on a quiet 2-core machine (estimated
# from each section's last figures; keep it under 25) and needs about 1.5 GB free under /tmp.
# `$(BIN)/python tests/bench/run.py --quick --out FILE` runs every section small in minutes.
bench: $(STAMP)
	$(BIN)/python tests/bench/run.py --out docs/performance.md

# Hostile-input fuzzing for FUZZ_SECONDS (default 30 minutes); counts go to docs/reliability.md.
FUZZ_SECONDS ?= 1800
fuzz: $(STAMP)
	$(BIN)/python tests/hostile_fuzz.py --seconds $(FUZZ_SECONDS) --out docs/reliability.md

# Regenerate the locks (needs pip-tools; not part of the normal flow).
lock:
	cd requirements && pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links -o runtime.lock runtime.in
	cd requirements && pip-compile -q --generate-hashes --allow-unsafe --strip-extras --no-emit-index-url --no-emit-find-links -o dev.lock dev.in

clean:
	rm -rf $(VENV) build *.egg-info
