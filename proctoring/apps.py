from django.apps import AppConfig

from sessions import presence_port


class ProctoringConfig(AppConfig):
    name = "proctoring"
    verbose_name = "Proctoring"

    def ready(self) -> None:
        from proctoring.presence_tracking import CandidatePresence

        # The session socket counts the candidate's tabs through the port (sessions never
        # imports proctoring).
        presence_port.register(CandidatePresence())
