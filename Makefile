# The two commands of the quick start: `make run` and `make test`; `make` lists them all.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000
# The stream server's port (GET /events: registry/events/asgi.py).
EVENTS_PORT ?= $(shell echo $$(($(PORT) + 1)))
# The URL the registry is reached at: HOST, or this machine when it listens everywhere.
URL_HOST = $(if $(filter 0.0.0.0 ::,$(HOST)),127.0.0.1,$(HOST))

.PHONY: help run test serve worker webhooks beat lint migrate demo clean bench docs cluster
.DEFAULT_GOAL := help

## List the targets and what each does (the default).
help:
	@echo "make TARGET [HOST=127.0.0.1] [PORT=8000] [WORKERS=2]"
	@awk '/^## /{text = text substr($$0, 4) " "; next} \
	     /^[a-z][a-z-]*:/{if (text) {split($$0, t, ":"); sub(/ $$/, "", text); n++; name[n] = t[1]; \
	       what[n] = text; if (length(t[1]) > width) width = length(t[1])}; text = ""} \
	     !/^## /{text = ""} \
	     END {for (i = 1; i <= n; i++) printf "  %-" width "s %s\n", name[i], what[i]}' $(MAKEFILE_LIST)

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

## Create the PostgreSQL database if missing, and apply the migrations.
migrate: $(VENV)/.runtime
	$(BIN)/python manage.py database_create
	$(BIN)/python manage.py migrate --noinput

## Migrate and load the demo agents (once).
demo: $(VENV)/.runtime
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py database_create
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py migrate --noinput
	DEBUG=$${DEBUG:-1} $(BIN)/python manage.py load_demo

# make run's processes share the checkout's .env (debug mode, the secret key, the URL they
# serve at, the database: registry/devenv.py writes it) and these. /events is answered by
# the stream server on EVENTS_PORT: the web process redirects there.
RUN_ENV = HOST=$(HOST) PORT=$(PORT) EVENTS_PORT=$(EVENTS_PORT) PATH=$(CURDIR)/$(BIN):$$PATH \
	EVENTS_STREAM_URL=$${EVENTS_STREAM_URL:-http://$(URL_HOST):$(EVENTS_PORT)/events}

## Check the port, write .env (once: DEBUG, SECRET_KEY, REGISTRY_BASE_URL, DATABASE_URL,
## read by every manage.py call), set up, load the demo data, print an admin API key, then
## serve on http://HOST:PORT with a job worker, the job scheduler, the queue relay's consumer
## and the demo's queue agent (Procfile; SQLite and the filesystem broker unless DATABASE_URL /
## CELERY_BROKER_URL are set; the queue relay uses QUEUE_RELAY_BROKER_URL, the local
## RabbitMQ). Ctrl-C stops all.
run: $(VENV)/.runtime
	@$(BIN)/python -m registry.devenv $(HOST) $(PORT) $(EVENTS_PORT)
	$(RUN_ENV) $(BIN)/python manage.py database_create
	$(RUN_ENV) $(BIN)/python manage.py migrate --noinput
	$(RUN_ENV) $(BIN)/python manage.py load_demo
	$(RUN_ENV) $(BIN)/honcho start -f Procfile

## Production-style serving (Procfile.serve): gunicorn (WORKERS processes) with static files
## from whitenoise (access log: ACCESS_LOG=path or -, none by default), the event stream
## server (uvicorn) on EVENTS_PORT, where /events redirects, and a webhook worker.
serve: migrate
	$(BIN)/python manage.py collectstatic --noinput --verbosity 0
	HOST=$(HOST) PORT=$(PORT) EVENTS_PORT=$(EVENTS_PORT) PATH=$(CURDIR)/$(BIN):$$PATH \
	  EVENTS_STREAM_URL=$${EVENTS_STREAM_URL:-http://$(URL_HOST):$(EVENTS_PORT)/events} \
	  $(BIN)/honcho start -f Procfile.serve

## A job worker (WORKER_CONCURRENCY processes; CELERY_BROKER_URL: Redis or RabbitMQ): every
## job but the webhooks (make webhooks).
worker: migrate
	$(BIN)/celery -A registry worker -Q celery --loglevel=INFO --concurrency=$${WORKER_CONCURRENCY:-2}

## A webhook worker: the handshakes and deliveries (WEBHOOK_QUEUE, webhooks), apart from the
## other jobs; WEBHOOK_WORKER_CONCURRENCY threads (default 4). make serve runs one.
webhooks: migrate
	$(BIN)/celery -A registry worker -Q $${WEBHOOK_QUEUE:-webhooks} -n webhooks@%h \
	  --pool=threads --concurrency=$${WEBHOOK_WORKER_CONCURRENCY:-4} --loglevel=INFO

## The job scheduler: run exactly one.
beat:
	$(BIN)/celery -A registry beat --loglevel=INFO

# The browser tests (tests/web/test_browser.py) drive this chromium (CHROMIUM=/path to choose).
CHROMIUM ?= $(shell command -v chromium || command -v chromium-browser || command -v google-chrome)

## Set up and run the whole suite (SQLite unless DATABASE_URL is set). The browser tests run
## when a chromium is installed and are skipped, with a note, when not.
test: $(VENV)/.dev
	$(BIN)/python manage.py makemigrations --check --dry-run --settings=tests.settings
	$(BIN)/ruff check .
	@if [ -z "$(CHROMIUM)" ]; then echo "NOTE: no chromium found: the browser tests" \
	  "(tests/web/test_browser.py) are SKIPPED. apt-get install chromium to run them."; fi
	@bash .ci/pytest $(PYTEST_ARGS)

## Check style (ruff check and ruff format --check).
lint: $(VENV)/.dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

.PHONY: screenshots
## The README's screenshots (docs/screenshots/), taken by the browser tests.
screenshots: $(VENV)/.dev
	SCREENSHOTS_DIR=docs/screenshots $(BIN)/python -m pytest -q tests/web/test_browser.py \
	  -k screenshots

## Build the documentation site (mkdocs.yml, docs/) into site/, which the registry serves at
## /docs/; --strict: a broken link or a missing page fails the build.
docs: $(VENV)/.dev
	$(BIN)/mkdocs build --strict --site-dir site

## Several nodes on a primary and its streaming replica, on this machine (bench/cluster.py;
## docs/operations/scale.md): PostgreSQL 15's own pair in temporary folders, two registry
## nodes, one job scheduler leading, each a queue relay consumer on the local RabbitMQ
## (CLUSTER_ARGS=--no-relay without one), a round-robin front on PORT. Ctrl-C stops it all.
cluster: $(VENV)/.runtime
	$(BIN)/python -m bench.cluster --port $(PORT) $(CLUSTER_ARGS)

## The benchmark (bench/README.md): BENCH_ARGS="--agents 20000" for a shorter run.
bench: $(VENV)/.dev
	$(BIN)/python -m bench $(BENCH_ARGS)

## Remove the virtualenv, the SQLite database, .env, collected static files, the job files and
## the built documentation.
clean:
	rm -rf $(VENV) db.sqlite3 staticfiles .pytest_cache var .env site .cache
