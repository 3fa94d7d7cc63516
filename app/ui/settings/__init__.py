"""The Settings screen: preferences and the profile editor."""
