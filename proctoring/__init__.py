"""Proctoring: the proctor dashboard over the session record (docs/proctoring.md).

The pages, the REST API, the sitting overview socket, proctor actions, the candidate's connection
(presence) and listening in. It reads and writes sessions through ``sessions`` (the record and its
event store) and never the other way round (docs/architecture.md, "Dependency direction").
"""
