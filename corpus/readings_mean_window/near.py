# the same message from a plain misuse: the library is handed an empty list, not the script's readings
import statistics
statistics.mean([])
