"""Headless commands of `python -m app`, one module each."""
