from django.apps import AppConfig


class ProctoringConfig(AppConfig):
    name = "proctoring"
    verbose_name = "Proctoring"

    def ready(self) -> None:
        from proctoring.presence_tracking import CandidatePresence
        from sessions import presence_port

        # The session socket counts the candidate's tabs through the port (sessions never
        # imports proctoring).
        presence_port.register(CandidatePresence())
