# the same message from a plain misuse: hex digits read without giving int() their base
int("#1d2b3a")
