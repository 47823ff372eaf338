from django.apps import AppConfig


class ExamSessionsConfig(AppConfig):
    name = "sessions"
    label = "exam_sessions"
    verbose_name = "Exam sessions"

    def ready(self) -> None:
        from accounts import page_language
        from sessions import sqlite_guard
        from sessions.exam_room import language_for_path

        sqlite_guard.install()

        page_language.register(language_for_path)
