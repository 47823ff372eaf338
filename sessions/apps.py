from django.apps import AppConfig


class ExamSessionsConfig(AppConfig):
    name = "sessions"
    label = "exam_sessions"
    verbose_name = "Exam sessions"

    def ready(self) -> None:
        from accounts import page_language
        from sessions import outbox, sqlite_guard, tasks
        from sessions.exam_room import language_for_path

        sqlite_guard.install()
        outbox.set_kick(tasks.hand_over)

        page_language.register(language_for_path)
