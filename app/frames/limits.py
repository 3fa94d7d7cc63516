"""How large an input may be, side by side: far above any camera frame or practice video, far below
what would exhaust a phone's memory when decoded. Checked at the boundary that owns each: the
browser's upload (by the size the picker reports, before a byte is sent), then the decoders."""

from __future__ import annotations

MAX_FILE_BYTES = 64 * 1024 * 1024  # an image file
MAX_PIXELS = 50_000_000  # an image, or a video's frame, once decoded
MIN_SIDE = 16  # px: smaller than this is no picture of a trainee
MAX_VIDEO_BYTES = 512 * 1024 * 1024  # a video picked in the app (the CLI reads a file of any size as a stream)
