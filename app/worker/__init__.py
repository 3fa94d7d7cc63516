"""Inference workers: the analyzer behind a message interface, in a child process
or a thread; which one where is decided in one place, `hosts.default_host_kind`."""
