# The two commands a newcomer needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
export VIVA_PUBLIC_URL ?= http://$(HOST):$(PORT)

.PHONY: run test install lint format typecheck services-run worker migrate seed schema-docs clean frontend

$(STAMP): requirements/base.txt requirements/bot.txt requirements/dev.txt
	@python=$$(bin/find-python) || exit 1; \
	if [ ! -x $(PY) ]; then echo "Creating $(VENV) with $$python"; $$python -m venv $(VENV) || exit 1; fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements/dev.txt
	@touch $(STAMP)

install: $(STAMP)

migrate: install
	$(PY) manage.py migrate --noinput

seed: migrate
	$(PY) manage.py seed_demo

## make run: embedded default (SQLite, in-memory channel layer, inline bots, offline examiner).
run: seed
	@echo "Serving on http://$(HOST):$(PORT)/ (Ctrl-C to stop)"
	$(PY) manage.py runserver $(HOST):$(PORT)

## make test: the whole suite; uses Postgres/Redis when set or reachable on localhost.
test: install
	@exports=$$(bin/detect-services) || exit 1; eval "$$exports"; \
	$(PY) -m pytest $(PYTEST_ARGS)

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install
	$(VENV)/bin/mypy ioa

## make services-run: web (daphne) + Celery worker against Postgres and Redis.
services-run: install
	@: $${DATABASE_URL:?set DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/viva} \
	   $${REDIS_URL:?set REDIS_URL, e.g. redis://127.0.0.1:6379/0}
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	$(VENV)/bin/celery -A config worker -Q default,bots,marking --loglevel=INFO & \
	worker=$$!; trap "kill $$worker" EXIT; \
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) config.asgi:application

worker: install
	$(VENV)/bin/celery -A config worker -Q default,bots,marking --loglevel=INFO

schema-docs: install
	$(PY) -m ioa.schema.export
	$(PY) -m ioa.validation.catalogue

clean:
	rm -rf $(VENV) var/*.sqlite3* var/staticfiles

## make frontend: rebuild the vendored editor bundle (static/vendor/) and axe-core for the browser
## tests from frontend/ (needs npm; the outputs are committed, so `make run` does not).
frontend:
	cd frontend && npm ci && npm run build
