import dataclasses

@dataclasses.dataclass
class ClientSettings:
    endpoint: str

settings = ClientSettings("h")
settings.token = "t"
dataclasses.replace(settings).token
