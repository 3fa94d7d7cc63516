"""The Practice screen: sources, the live card, rhythm cues, the metronome."""
