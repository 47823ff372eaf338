"""The REST API's shared pieces: the error body, the bounded JSON parser, pagination and the
schema class that documents every refusal."""
