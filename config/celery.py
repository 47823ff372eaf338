"""The Celery application: bots and marking run on their own queues.

Tasks subclass ``DjangoTask`` so callers can use ``task.delay_on_commit(...)``: work is
enqueued only once the transaction that asked for it has committed.
"""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("viva", task_cls="celery.contrib.django.task:DjangoTask")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.ping")
def ping() -> str:
    """Answers 'pong': used by /healthz to prove a worker consumes the queues."""
    return "pong"
