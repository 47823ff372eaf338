"""Authoring: draft assessment packages and the studio where authors edit them."""
