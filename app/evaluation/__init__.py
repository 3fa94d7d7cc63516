"""Testers' mode: labels, matching answers to them, the report and score cut, the plot."""
