# the same SettingsError message, caused by a missing key (the script's decoy path) instead of bad JSON
class SettingsError(Exception): pass
try:
    {}["prod"]
except KeyError as e:
    raise SettingsError("cannot load settings for 'prod'") from e
