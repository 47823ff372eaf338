"""The REST API frame: error bodies, pagination and the /api/v1/ URL tree."""
