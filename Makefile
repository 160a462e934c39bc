# Two commands do everything on a fresh machine with Python 3.11 and pip:
#   make demo   set up .venv and run the main job on built-in data
#   make test   set up .venv and run every test (plus ruff and mypy)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    ?= out

.PHONY: demo test lint bench clean browser

$(BIN)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[learn,report]'
	touch $@

$(BIN)/.installed-dev: pyproject.toml $(BIN)/.installed-run
	$(BIN)/python -m pip install --quiet -e '.[learn,report,dev]'
	touch $@

# the browser test drives Debian's headless Chromium (no browser download)
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }

# writes out/teams-record.json + .html and out/credit/ (report.json, report.md, report.html)
demo: $(BIN)/.installed-run
	$(BIN)/foreseen teams analyze --out $(OUT)/teams-record.json
	$(BIN)/foreseen credit demo --out $(OUT)/credit

test: $(BIN)/.installed-dev browser
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/mypy
	$(BIN)/pytest -q

bench: $(BIN)/.installed-dev
	$(BIN)/python benchmarks/teams.py

clean:
	rm -rf $(VENV) $(OUT)
