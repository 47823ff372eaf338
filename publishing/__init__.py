"""Publishing: the publication gate (validate + compile + store) and immutable versions."""
