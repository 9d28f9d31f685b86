int("#1d2b3a", 16)
