# ts-explore: two set-up commands.
#   make lab   -> .venv, install, Graphviz if missing, JupyterLab on notebooks/ (keeps the terminal; Ctrl-C twice stops it)
#   make test  -> .venv, install, Graphviz/Chromium if missing, the default test tier (what CI runs)
#   TS_EXPLORE_SOAK=1 make test -> the soak tier as well (long property runs, pip-installed Binder, every control pair)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.ts-explore-installed
JOBS   ?= 2

.PHONY: lab test install clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else "ts-explore needs Python >= 3.10; set PYTHON=python3.X")'
	@scripts/system-deps.sh python3-venv
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# torch (the ops, the GEMM and attention launches) only where an NVIDIA GPU answers nvidia-smi: CI and CPU
# machines stay without it
EXTRAS := test,gpu,sweep$(shell nvidia-smi -L >/dev/null 2>&1 && echo ,torch)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	@touch $(STAMP)

install: $(STAMP)
	@scripts/system-deps.sh graphviz

lab: install
	@echo "JupyterLab keeps this terminal while it runs; press Ctrl-C twice (or Ctrl-C, then y) to stop it."
	$(BIN)/jupyter lab $$([ "$$(id -u)" = 0 ] && echo --allow-root) notebooks/

test: install
	@scripts/system-deps.sh chromium --optional
	MPLBACKEND=Agg $(BIN)/python -m pytest -n $(JOBS) --durations=15 --nbmake --nbmake-timeout=300 --doctest-modules \
		ts_explore tests notebooks

clean:
	rm -rf $(VENV) .pytest_cache
