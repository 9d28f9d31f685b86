"""Retry profiles lose the session token.

The deploy client builds a base ``ClientSettings`` from the command line, logs in
(which attaches the session token to the settings object), then derives a
"patient" profile for slow endpoints with ``dataclasses.replace``.  Requests made
with the derived profile crash: the token is gone.  Found while moving the
client to dataclasses; the old dict-based settings kept everything.
"""
import argparse
import dataclasses
import hashlib
import json
import logging
import time
from typing import Dict, List, Optional

log = logging.getLogger("deploy.client")


@dataclasses.dataclass
class ClientSettings:
    endpoint: str
    timeout: float = 10.0
    retries: int = 2
    backoff: float = 0.5
    verify_tls: bool = True
    user_agent: str = "deploy-client/3.4"
    headers: Dict[str, str] = dataclasses.field(default_factory=dict)


class AuthError(Exception):
    pass


class FakeIdentityProvider:
    """Stands in for the identity service in this repro: issues a token per user."""

    def __init__(self, users: Dict[str, str]):
        self.users = users
        self.issued: List[str] = []

    def issue(self, user: str, password: str) -> str:
        if self.users.get(user) != password:
            raise AuthError(f"bad credentials for {user!r}")
        digest = hashlib.sha256(f"{user}:{password}".encode()).hexdigest()
        token = "tok-" + digest[:16]
        self.issued.append(token)
        return token


def login(settings: ClientSettings, idp: FakeIdentityProvider, user: str, password: str) -> None:
    """Attach the session token to the settings, as the real client does."""
    settings.token = idp.issue(user, password)
    log.info("logged in as %s", user)


def patient(settings: ClientSettings) -> ClientSettings:
    """A profile for slow endpoints: more time, more retries."""
    return dataclasses.replace(
        settings,
        timeout=settings.timeout * 6,
        retries=settings.retries + 3,
        backoff=settings.backoff * 2,
    )


def request_headers(settings: ClientSettings, body: Optional[dict] = None) -> Dict[str, str]:
    headers = {"User-Agent": settings.user_agent, **settings.headers}
    headers["Authorization"] = "Bearer " + settings.token
    if body is not None:
        headers["Content-Type"] = "application/json"
        headers["Content-Length"] = str(len(json.dumps(body)))
    return headers


def send(settings: ClientSettings, path: str, body: Optional[dict] = None) -> dict:
    """Builds the request as the real client would; nothing leaves the machine."""
    headers = request_headers(settings, body)
    started = time.perf_counter()
    reply = {"path": path, "status": 200, "headers": sorted(headers)}
    log.debug("%s %s in %.1f ms", settings.endpoint, path, 1000 * (time.perf_counter() - started))
    return reply


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--endpoint", default="https://deploy.internal.example")
    parser.add_argument("--user", default="release-bot")
    parser.add_argument("--password", default="hunter2")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)

    idp = FakeIdentityProvider({"release-bot": "hunter2", "ops": "s3cret"})
    settings = ClientSettings(endpoint=args.endpoint, headers={"X-Team": "release"})
    try:
        login(ClientSettings(endpoint=args.endpoint), idp, args.user, "wrong")
    except AuthError as exc:
        log.info("expected failure: %s", exc)
    login(settings, idp, args.user, args.password)

    print(send(settings, "/status")["status"])
    slow = patient(ClientSettings(endpoint=args.endpoint))
    print(slow.timeout, slow.retries)
    print(send(slow, "/artifacts", {"name": "build-1234", "size": 5})["status"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
