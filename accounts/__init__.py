"""Accounts: the user model, roles, staff sign-in and candidate invitation links."""
