import math
math.isclose(41.5, 41.5, rtol=1e-9)
