"""Task profiles and checklists: what the model is asked and which answers are allowed (pure)."""
