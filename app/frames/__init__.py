"""Frame sources and image intake (decode, validate, orient, resize)."""
