"""Flet UI: renders state and forwards user intent; no analysis logic lives here."""
