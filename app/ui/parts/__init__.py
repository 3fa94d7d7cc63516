"""Components more than one screen shows: widgets, the timeline, the review list, the language switch."""
