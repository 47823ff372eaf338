from django.apps import AppConfig


class ExamSessionsConfig(AppConfig):
    name = "sessions"
    label = "exam_sessions"
    verbose_name = "Exam sessions"
