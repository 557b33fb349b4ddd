#!/usr/bin/env python3
"""A registry token service (distribution's token auth) for the OCI suite, on 127.0.0.1.

usage: token-server.py --tls CERT KEY --sign-key KEY --sign-cert CERT --port-file FILE
                       --log FILE --user USER:PASSWORD

GET /token?service=S&scope=repository:NAME:ACTIONS answers {"token": JWT}: a JWT signed
with RS256 by --sign-key, whose certificate (--sign-cert, the registry's rootcertbundle)
travels in the x5c header, granting
  - with the right basic credentials: every action asked for;
  - anonymously: pull on repositories under public/ only;
  - with wrong credentials: nothing, 401.
Every request is logged as one line: PATH user=... granted=...
"""
import argparse
import base64
import http.server
import json
import os
import time
import urllib.parse

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import padding

import loopback_tls


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls", nargs=2, required=True)
    ap.add_argument("--sign-key", required=True)
    ap.add_argument("--sign-cert", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    ap.add_argument("--user", required=True)
    args = ap.parse_args()
    with open(args.sign_key, "rb") as f:
        key = serialization.load_pem_private_key(f.read(), password=None)
    with open(args.sign_cert, "rb") as f:
        cert = x509.load_pem_x509_certificate(f.read())
    x5c = base64.b64encode(cert.public_bytes(serialization.Encoding.DER)).decode()
    good = "Basic " + base64.b64encode(args.user.encode()).decode()
    log = open(args.log, "a", buffering=1)

    def token(service, access):
        now = int(time.time())
        header = {"typ": "JWT", "alg": "RS256", "x5c": [x5c]}
        claims = {"iss": "edr-issuer", "sub": "edr", "aud": service, "exp": now + 300,
                  "nbf": now - 10, "iat": now, "jti": os.urandom(8).hex(), "access": access}
        signing_input = (b64url(json.dumps(header).encode()) + "." +
                         b64url(json.dumps(claims).encode()))
        sig = key.sign(signing_input.encode(), padding.PKCS1v15(), hashes.SHA256())
        return signing_input + "." + b64url(sig)

    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *a):
            pass

        def do_GET(self):
            url = urllib.parse.urlparse(self.path)
            q = urllib.parse.parse_qs(url.query)
            auth = self.headers.get("Authorization")
            user = "anonymous" if auth is None else ("edr" if auth == good else "wrong")
            if user == "wrong":
                log.write(f"{url.path} user=wrong granted=none\n")
                self.send_response(401)
                self.end_headers()
                return
            access = []
            for scope in q.get("scope", []):
                kind, name, actions = scope.split(":")
                wanted = actions.split(",")
                if user == "anonymous":
                    wanted = [a for a in wanted if a == "pull" and name.startswith("public/")]
                if wanted:
                    access.append({"type": kind, "name": name, "actions": wanted})
            log.write(f"{url.path} user={user} granted={json.dumps(access)}\n")
            body = json.dumps({"token": token(q.get("service", [""])[0], access)}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    loopback_tls.serve_forever(Handler, args.tls, args.port_file)


if __name__ == "__main__":
    main()
