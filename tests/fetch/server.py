#!/usr/bin/env python3
"""A small static web server for the fetch tests, on 127.0.0.1 only.

usage: server.py [--tls CERT KEY] [--log FILE] [--port-file FILE] [--mode KEY=VALUE]... DIRECTORY

Binds 127.0.0.1 on a free port and prints the port (and writes it to --port-file).
Serves DIRECTORY with a strong ETag and Last-Modified, single byte ranges (Range: bytes=N-
or N-M) and If-Range (a validator that does not match gets the whole file with 200).
Every request is logged as one line: METHOD PATH range=... if-range=... status=N sent=N
(and auth=SCHEME when it carried an Authorization header),
written before the body is sent (sent= is then what the response will carry, so a client
that has read everything can rely on the line being there), except for @slow and @endless,
logged with what was actually sent when they end.

Hostile behaviours are chosen by path segments starting with '@' (anywhere in the path;
they are removed before the file is looked up), e.g. /@drop=1000/@norange/t.tar.gz, or
for every request by --mode (rate=N: where the client builds the paths, as a registry
client does):
  @drop=N          send the headers of the whole body, then close after N body bytes
                   (only for requests without Range, so a resumed request completes)
  @norange         ignore Range and If-Range: always 200 with the whole file
  @slow            send the headers, then one body byte per second (slow loris)
  @rate=N          send the body at about N bytes per second (to watch or interrupt it)
  @stall           accept the request and never answer
  @endless         200 without Content-Length and a body that never ends
  @oversize=N      the file followed by N extra bytes (Content-Length says so)
  @redirect=URL    302 to URL (percent-encoded: '@redirect=file%3A%2F%2F%2Fetc%2Fpasswd')
  @status=CODE     answer CODE with a short body
and only by --mode:
  basic=USER:PASS  401 with a Basic challenge unless the request carries these credentials
  redirect-base=URL[,SUBSTRING]  302 to URL + the request's path (after the credentials
                   check, as a registry sending its blobs to storage elsewhere), only for
                   paths containing SUBSTRING when one is given
"""
import argparse
import base64
import email.utils
import hashlib
import http.server
import os
import socketserver
import ssl
import sys
import threading
import time
import urllib.parse

LOG_LOCK = threading.Lock()


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "edr-test-server/1"
    protocol_version = "HTTP/1.0"

    def log_message(self, fmt, *args):  # quiet: our own log line is enough
        pass

    def log_line(self, status, sent):
        auth = self.headers.get("Authorization")
        line = "%s %s range=%s if-range=%s status=%d sent=%d%s\n" % (
            self.command, self.path, self.headers.get("Range", "-"),
            (self.headers.get("If-Range", "-") or "-").replace(" ", "_"), status, sent,
            " auth=" + auth.split(" ")[0] if auth else "")
        with LOG_LOCK:
            with open(self.server.log_path, "a") as f:
                f.write(line)

    def do_HEAD(self):
        self.handle_get(head=True)

    def do_GET(self):
        self.handle_get(head=False)

    def handle_get(self, head):
        modes = dict(self.server.modes)
        parts = []
        for part in urllib.parse.urlsplit(self.path).path.split("/")[1:]:
            if part.startswith("@"):
                key, _, value = part[1:].partition("=")
                modes[key] = urllib.parse.unquote(value)
            else:
                parts.append(part)
        rel = "/".join(parts)
        try:
            self.serve(rel, modes, head)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def send_simple(self, status, body=b"", headers=()):
        self.log_line(status, len(body))
        self.send_response(status)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def serve(self, rel, modes, head):
        if "basic" in modes:
            want = "Basic " + base64.b64encode(modes["basic"].encode()).decode()
            if self.headers.get("Authorization") != want:
                return self.send_simple(401, b"authentication required\n",
                                        [("WWW-Authenticate", 'Basic realm="edr-test"')])
        if "redirect-base" in modes:
            base, _, match = modes["redirect-base"].partition(",")
            if match in self.path:
                return self.send_simple(302, b"moved\n", [("Location", base + self.path)])
        if "status" in modes:
            code = int(modes["status"])
            return self.send_simple(code, b"error %d\n" % code)
        if "redirect" in modes:
            return self.send_simple(302, b"moved\n", [("Location", modes["redirect"])])
        if "stall" in modes:
            self.log_line(0, 0)
            time.sleep(3600)
            return
        path = os.path.realpath(os.path.join(self.server.root, rel))
        if not path.startswith(self.server.root + os.sep) or not os.path.isfile(path):
            return self.send_simple(404, b"not found\n")
        with open(path, "rb") as f:
            data = f.read()
        st = os.stat(path)
        etag = '"%s"' % hashlib.sha256(b"%d-%d-%d" % (st.st_ino, st.st_size, st.st_mtime_ns)).hexdigest()[:24]
        last_modified = email.utils.formatdate(st.st_mtime, usegmt=True)

        start, end = 0, len(data) - 1
        status = 200
        rng = self.headers.get("Range")
        if rng and "norange" not in modes:
            if_range = self.headers.get("If-Range")
            if if_range is None or if_range in (etag, last_modified):
                spec = rng.strip()
                if not spec.startswith("bytes=") or "," in spec:
                    return self.send_simple(416, b"bad range\n")
                first, _, last = spec[6:].partition("-")
                start = int(first)
                end = int(last) if last else len(data) - 1
                if start >= len(data):
                    return self.send_simple(416, b"range not satisfiable\n",
                                            [("Content-Range", "bytes */%d" % len(data))])
                end = min(end, len(data) - 1)
                status = 206
        body = data[start:end + 1]
        extra = int(modes.get("oversize", "0"))

        self.send_response(status)
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", last_modified)
        self.send_header("Accept-Ranges", "bytes")
        if status == 206:
            self.send_header("Content-Range", "bytes %d-%d/%d" % (start, end, len(data)))
        if "endless" not in modes:
            self.send_header("Content-Length", str(len(body) + extra))
        self.end_headers()
        if head:
            return self.log_line(status, 0)

        sent = 0
        if "endless" in modes:
            chunk = b"\0" * 65536
            try:
                while True:
                    self.wfile.write(chunk)
                    sent += len(chunk)
            finally:
                self.log_line(status, sent)
        if "slow" in modes:
            try:
                for b in body:
                    self.wfile.write(bytes([b]))
                    self.wfile.flush()
                    sent += 1
                    time.sleep(1)
            finally:
                self.log_line(status, sent)
            return
        if "rate" in modes:
            self.log_line(status, len(body))
            step = max(1, int(modes["rate"]) // 10)
            for i in range(0, len(body), step):
                self.wfile.write(body[i:i + step])
                self.wfile.flush()
                time.sleep(0.1)
            return
        if "drop" in modes and rng is None:
            n = int(modes["drop"])
            self.log_line(status, min(n, len(body)))
            self.wfile.write(body[:n])
            self.wfile.flush()
            self.close_connection = True
            # A hard close: the client sees the connection end before Content-Length.
            self.connection.shutdown(2)
            return
        self.log_line(status, len(body) + extra)
        self.wfile.write(body)
        if extra:
            self.wfile.write(b"X" * extra)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--log", default=os.devnull)
    ap.add_argument("--port-file")
    ap.add_argument("--mode", action="append", default=[])
    ap.add_argument("directory")
    args = ap.parse_args()

    httpd = Server(("127.0.0.1", 0), Handler)
    httpd.root = os.path.realpath(args.directory)
    httpd.log_path = args.log
    httpd.modes = dict(m.partition("=")[::2] for m in args.mode)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        httpd.socket = ctx.wrap_socket(httpd.socket, server_side=True)
    port = httpd.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print(port, flush=True)
    httpd.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
