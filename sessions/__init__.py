"""Exam sessions: sittings, the event store, the exam room and the proctor dashboard.

App label ``exam_sessions`` (``sessions`` is taken by django.contrib.sessions).
"""
