# The two commands of the quick start: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test serve lint migrate demo clean bench

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit("Python 3.11 or newer is needed (found %s)" % sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.runtime: requirements.txt | $(BIN)/python
	$(BIN)/pip install --quiet -r requirements.txt
	@touch $@

$(VENV)/.dev: requirements.txt requirements-dev.txt $(VENV)/.runtime
	$(BIN)/pip install --quiet -r requirements-dev.txt
	@touch $@

migrate: $(VENV)/.runtime
	$(BIN)/python manage.py migrate --noinput

demo: migrate
	$(BIN)/python manage.py load_demo

## Set up, load the demo data, print an admin API key and serve on http://$(HOST):$(PORT) (SQLite unless DATABASE_URL is set).
run: demo
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py runserver $(HOST):$(PORT)

## Production-style serving: gunicorn with static files from whitenoise.
serve: migrate
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	$(BIN)/gunicorn registry.wsgi --bind $(HOST):$(PORT) --workers $${WORKERS:-2} --access-logfile -

## Set up and run the whole suite (SQLite unless DATABASE_URL is set).
test: $(VENV)/.dev
	$(BIN)/python manage.py makemigrations --check --dry-run
	$(BIN)/ruff check .
	@bash .ci/pytest $(PYTEST_ARGS)

lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

## The benchmark (bench/README.md): BENCH_ARGS="--agents 20000" for a shorter run.
bench: $(VENV)/.dev
	$(BIN)/python -m bench $(BENCH_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache
