"""Session persistence: an append-only, fsynced event log and its exports."""
