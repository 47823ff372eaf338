# The two commands a newcomer needs: `make run` and `make test`. See README.md.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000
export VIVA_PUBLIC_URL ?= http://$(HOST):$(PORT)

.PHONY: run test install lint format typecheck services-run worker migrate seed schema-docs messages clean frontend frontend-test

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

## make test: the whole suite (the browser's unit tests, then pytest); uses Postgres/Redis when
## set or reachable on localhost. PYTEST_WORKERS parallel processes (pytest-xdist, a test file per
## process at a time; 0 runs in this process, for a debugger). Tests marked `alone` (the chaos
## run) then run by themselves (ALONE_ARGS: their own pytest arguments; ALONE=0 skips them).
PYTEST_WORKERS ?= 3
ALONE ?= 1
ALONE_ARGS ?=
test: install frontend-test
	@exports=$$(bin/detect-services) || exit 1; eval "$$exports"; \
	if [ "$(PYTEST_WORKERS)" = "0" ]; then parallel=""; \
	else parallel="-n $(PYTEST_WORKERS) --dist loadfile"; fi; \
	$(PY) -m pytest $$parallel -m "not alone" $(PYTEST_ARGS) || exit $$?; \
	if [ "$(ALONE)" = "1" ]; then $(PY) -m pytest -m alone $(ALONE_ARGS); fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/lint-imports

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

typecheck: install
	$(VENV)/bin/mypy ioa config web accounts authoring publishing sessions proctoring bot marking lti webhooks

## make services-run: web (daphne) + Celery worker against Postgres and Redis.
services-run: install
	@: $${DATABASE_URL:?set DATABASE_URL, e.g. postgres://postgres@127.0.0.1:5432/viva} \
	   $${REDIS_URL:?set REDIS_URL, e.g. redis://127.0.0.1:6379/0}
	$(PY) manage.py migrate --noinput
	$(PY) manage.py seed_demo
	$(VENV)/bin/celery -A config worker -Q default,bots,marking --pool=threads --concurrency=4 --loglevel=INFO & \
	worker=$$!; $(PY) manage.py relay_outbox --loop 5 & \
	relay=$$!; trap "kill $$worker $$relay" EXIT; \
	$(VENV)/bin/daphne -b $(HOST) -p $(PORT) config.asgi:application

worker: install
	$(VENV)/bin/celery -A config worker -Q default,bots,marking --pool=threads --concurrency=4 --loglevel=INFO

schema-docs: install
	$(PY) -m ioa.schema.export
	$(PY) -m ioa.validation.catalogue

## make messages: refresh locale/*/LC_MESSAGES/*.po from the sources (needs GNU gettext's
## xgettext), then compile the committed .mo files with polib (pure Python). docs/i18n.md.
messages: install
	$(PY) manage.py makemessages --all --no-obsolete --ignore=.venv --ignore=var --ignore=tests \
	  --ignore=frontend --ignore=bench
	$(PY) manage.py makemessages -d djangojs --all --no-obsolete --ignore=.venv --ignore=var \
	  --ignore=static/vendor --ignore=tests --ignore=frontend --ignore=bench
	$(PY) -m config.messages

clean:
	rm -rf $(VENV) var/*.sqlite3* var/staticfiles

## make frontend-test: `node --test` over frontend/test/events (the exam room's and proctor page's
## event handling, static/js/events/; plain Node, no npm). With frontend/node_modules installed
## (make frontend), over all of frontend/test.
frontend-test:
	@command -v node >/dev/null || { echo "make frontend-test: needs Node.js 20 or later (node)"; exit 1; }
	@if [ -d frontend/node_modules ]; then node --test frontend/test/; else node --test frontend/test/events/ frontend/test/studio/; fi

## make frontend: rebuild the vendored editor bundle (static/vendor/) and axe-core for the browser
## tests from frontend/ (needs npm; the outputs are committed, so `make run` does not).
frontend:
	cd frontend && npm ci && npm run build
