"""The Testers screen: scoring a labelled folder of images."""
