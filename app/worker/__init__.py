"""Inference workers: the analyzer behind a message interface, in a child process
(desktop) or a thread (iOS, where child processes are not allowed)."""
