"""Keyframe: an on-device VLM coach. Images are analysed locally and never leave the device."""
