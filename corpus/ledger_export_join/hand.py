import threading
threading.Thread().join()
