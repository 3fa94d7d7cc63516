"""Pure logic: no Flet, no MNN, no I/O beyond what callers pass in."""
