"""The examiner bot: the only package that imports Pipecat."""
