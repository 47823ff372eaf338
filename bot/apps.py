from django.apps import AppConfig


class BotConfig(AppConfig):
    name = "bot"
    verbose_name = "Examiner bot"

    def ready(self) -> None:
        from bot import checks, erasure  # noqa: F401  (checks registers the system checks)
        from bot.examiner_pricing import SettingsPricing
        from bot.session_port import SessionExaminerBot
        from publishing import examiner_port
        from sessions import bot_port

        bot_port.register(SessionExaminerBot())  # sessions starts and asks the bot through it
        examiner_port.register(SettingsPricing())  # the studio's cost estimate asks through it
        erasure.connect()  # sessions.signals.personal_data_erased: the lease's last error
