"""The live pipeline: frames -> keyframe sampler -> worker -> session events."""
