"""Exam sessions: the session record (sittings, sessions), its event store and the exam room.

The proctor dashboard over it is the ``proctoring`` app, above this one.

App label ``exam_sessions`` (``sessions`` is taken by django.contrib.sessions).
"""
