"""The same check as the seed's verify.ts, in Python with PyJWT: a shop's
backend verifying the admission token offline with the room's secret.

As a program it reads {"secret", "slug", "tokens": {name: token}} on stdin
and prints {name: qnr or null}, for deploy/edge/verify_test.go.
"""
import json
import sys

import jwt


def verify(token: str, secret: str, slug: str) -> dict:
    """Returns the token's claims, or raises jwt.InvalidTokenError when it
    is not a valid admission token of the room slug."""
    return jwt.decode(
        token,
        secret,
        algorithms=["HS256"],  # pinned: none and RS256 are refused
        issuer="aditus-queue",
        audience=slug,
        options={"require": ["exp", "iss", "aud"]},
    )


def main() -> None:
    data = json.load(sys.stdin)
    out = {}
    for name, token in data["tokens"].items():
        try:
            out[name] = verify(token, data["secret"], data["slug"])["qnr"]
        except jwt.InvalidTokenError:
            out[name] = None
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
