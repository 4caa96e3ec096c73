# The two commands at the top of README.md. Both work on a fresh machine: they create .venv, install the
# project with every extra (versions pinned by constraints.txt), then do their job. Re-running skips the install
# while pyproject.toml and constraints.txt are unchanged.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml constraints.txt | cksum | cut -d' ' -f1)

.PHONY: run test check test-fast durations install clean-venv screenshots

# Every version comes from constraints.txt (exact pins), so an install next month gets the same packages.
$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet -c constraints.txt --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e ".[all]"
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

install: $(STAMP)

## Command 1: set up, run the default benchmark on the embedded data, build the site.
run: $(STAMP)
	$(BIN)/python -m benchmarks

## The suite runs on JOBS pytest-xdist workers, a whole module to a worker (--dist loadscope), so a module-scoped
## fixture (a benchmark run, the browser) is made once; tests/_shared.py makes what several modules read once per run.
## (--dist loadgroup would do the same for marked tests, but with pytest 9.2 pytest-xdist 3.8 cannot rename the
## tests it groups and hands them out one by one.) PYTEST_ARGS adds options (.ci/run: --durations=20).
## pytest's exit 5 (no test collected) is not a failure of the suite; make would turn it into 2, so it is mapped here.
JOBS ?= 2
PYTEST_ARGS ?=
PYTEST = $(BIN)/python -m pytest -q -n $(JOBS) --dist loadscope $(PYTEST_ARGS)
NO_TESTS_IS_OK = rc=$$?; if [ $$rc -eq 5 ]; then echo "pytest collected no tests (exit 5)"; exit 0; fi; exit $$rc

## Command 2: set up, check lint, formatting and types, and run the full test suite.
## Tests marked `timing` assert a wall-clock target (a page's load event): they run after the parallel suite, alone
## on the machine, since beside another worker a load can miss its target with the page unchanged.
test: $(STAMP) check
	$(PYTEST) -m "not timing"; $(NO_TESTS_IS_OK)
	$(BIN)/python -m pytest -q -m timing $(PYTEST_ARGS); $(NO_TESTS_IS_OK)

## Lint (ruff), formatting (ruff format --check) and types (mypy on tycheon/, settings in pyproject.toml).
check: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

## The fast subset (under a minute on 2 cores: 53 s, 1,340 tests, with Python's bytecode cache; about 10 s more where
## PYTHONDONTWRITEBYTECODE is set, as pytest then rewrites every test module's asserts again): no whole-harness runs,
## no browser, no adversarial probes, no test that tests/durations.json records at FAST_LIMIT seconds or more, and
## hypothesis' "fast" profile (tests/conftest.py).
FAST = -m "not slow and not browser" --ignore=tests/adversarial
FAST_LIMIT ?= 0.2
test-fast: $(STAMP)
	HYPOTHESIS_PROFILE=fast $(PYTEST) $(FAST) --fast-limit $(FAST_LIMIT); $(NO_TESTS_IS_OK)

## Re-measure the fast subset's tests into tests/durations.json (what test-fast selects by); commit the file.
durations: $(STAMP)
	HYPOTHESIS_PROFILE=fast $(PYTEST) $(FAST) --record-durations tests/durations.json; $(NO_TESTS_IS_OK)

## Screenshots of home, a leaderboard, the glossary and the submit page at 1400 and 390 px, from the
## committed results, into build/screenshots/ (needs Debian's chromium: apt-get install chromium).
screenshots: $(STAMP)
	$(BIN)/python -m benchmarks.render
	cd site && NO_MKDOCS_2_WARNING=1 ../$(BIN)/mkdocs build --strict --quiet -f mkdocs.yml
	$(BIN)/python -m benchmarks.render.screenshots --html site/site --out build/screenshots

clean-venv:
	rm -rf $(VENV)
