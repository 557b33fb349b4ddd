#!/usr/bin/env python3
"""A TLS proxy on 127.0.0.1 in front of a registry, refusing what a test asks it to refuse.

usage: upload-proxy.py --tls CERT KEY --ca CA --target HOST:PORT --mode-file FILE
                       --port-file FILE --log FILE

Every request is forwarded to https://TARGET (verified against CA) with its own Host
header, so the registry's Location headers name the proxy; the answer comes back as is,
unless the first word of --mode-file (read per request) says otherwise:
  pass           forward everything
  no-monolithic  a PUT with a body on an upload URL (/blobs/uploads/...) answers the
                 status in the file's second word (400, 405, 501...): a registry that
                 takes an upload only in PATCHes
  denied         a POST starting an upload answers 403 DENIED
  unknown        a POST starting an upload answers 404 NAME_UNKNOWN
  too-large      a PUT or PATCH with a body answers 413
  elsewhere URL  a POST starting an upload is forwarded, and the Location of its answer
                 moved to URL's origin (https://HOST:PORT): a registry handing uploads to
                 storage elsewhere, or one that wants the client's credentials sent there
Every request is logged as one line: METHOD PATH STATUS BODY-BYTES, then " auth=SCHEME"
when it carried an Authorization header.
"""
import argparse
import http.client
import http.server
import json
import ssl

import loopback_tls

HOP_BY_HOP = {"connection", "keep-alive", "expect", "transfer-encoding", "te", "upgrade",
              "proxy-connection"}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls", nargs=2, required=True)
    ap.add_argument("--ca", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--mode-file", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", required=True)
    args = ap.parse_args()
    log = open(args.log, "a", buffering=1)
    client_tls = ssl.create_default_context(cafile=args.ca)
    host, port = args.target.rsplit(":", 1)

    def mode_words():
        words = open(args.mode_file).read().split()
        return words if words else ["pass"]

    def moved(location, origin):
        """LOCATION (relative, or absolute on the registry) on ORIGIN instead."""
        if location.startswith("/"):
            return origin + location
        rest = location.split("://", 1)[-1]
        return origin + ("/" + rest.split("/", 1)[1] if "/" in rest else "/")

    def refusal(method, path, length):
        words = mode_words()
        mode = words[0]
        upload = "/blobs/uploads/" in path
        if mode == "no-monolithic" and method == "PUT" and upload and length > 0:
            return int(words[1]), "UNSUPPORTED", "monolithic uploads are not supported"
        if mode == "denied" and method == "POST" and upload:
            return 403, "DENIED", "requested access to the resource is denied"
        if mode == "unknown" and method == "POST" and upload:
            return 404, "NAME_UNKNOWN", "repository name not known to registry"
        if mode == "too-large" and method in ("PUT", "PATCH") and length > 0:
            return 413, "SIZE_INVALID", "request entity too large"
        return None

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *a):
            pass

        def handle_one(self):
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length > 0 else b""
            refused = refusal(self.command, self.path, length)
            if refused is not None:
                status, code, message = refused
                out = json.dumps({"errors": [{"code": code, "message": message}]}).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(out)))
                self.send_header("Connection", "close")
                self.end_headers()
                self.wfile.write(out)
                self.close_connection = True
                log.write(f"{self.command} {self.path} {status} {length} refused\n")
                return
            conn = http.client.HTTPSConnection(host, int(port), context=client_tls, timeout=60)
            conn.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
            for k, v in self.headers.items():
                if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                    conn.putheader(k, v)
            conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body)
            r = conn.getresponse()
            data = r.read()
            self.send_response(r.status)
            words = mode_words()
            elsewhere = (words[0] == "elsewhere" and self.command == "POST"
                         and "/blobs/uploads/" in self.path)
            for k, v in r.getheaders():
                if k.lower() not in HOP_BY_HOP and k.lower() != "content-length":
                    if elsewhere and k.lower() == "location":
                        v = moved(v, words[1])
                    self.send_header(k, v)
            # A HEAD's answer keeps the length of what a GET would send.
            self.send_header("Content-Length", r.getheader("Content-Length", "0")
                             if self.command == "HEAD" else str(len(data)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(data)
            conn.close()
            auth = self.headers.get("Authorization")
            scheme = f" auth={auth.split()[0]}" if auth else ""
            log.write(f"{self.command} {self.path} {r.status} {length}{scheme}\n")

        do_GET = do_HEAD = do_POST = do_PUT = do_PATCH = do_DELETE = handle_one

    loopback_tls.serve_forever(Handler, args.tls, args.port_file)


if __name__ == "__main__":
    main()
