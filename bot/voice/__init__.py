"""Voice for the examiner bot (docs/voice.md): offline STT (PocketSphinx) and TTS (eSpeak NG)
as Pipecat services, and the SmallWebRTC peer registry. LiveKit lives in ``bot.livekit``; the
shared plumbing (sample rates, VAD, the voice ``BotIO``) in ``bot.audio``."""
