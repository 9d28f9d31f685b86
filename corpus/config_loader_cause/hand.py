import json
class SettingsError(Exception): pass
try:
    json.loads('{"replicas": 6,}')
except ValueError as e:
    raise SettingsError("cannot load settings for 'prod'") from e
