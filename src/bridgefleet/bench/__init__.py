"""The plan's benchmark: every acceleration preset trained to the target return, timed and tabled."""
