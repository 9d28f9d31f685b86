import json
json.dumps({"reed-diffuser": 2, 1008: 1}, sort_keys=True)
