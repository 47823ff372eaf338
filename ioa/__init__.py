"""The IOA-ORM domain core: pure, deterministic Python.

Nothing under ``ioa`` imports Django or Pipecat. Clocks and randomness are injected.
The Django apps (authoring, publishing, sessions, marking) and the bot wrap it thinly.
"""
