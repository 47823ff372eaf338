"""Project configuration: settings, URL and protocol routing, Celery app, system checks."""

from config.celery import app as celery_app

__all__ = ["celery_app"]
