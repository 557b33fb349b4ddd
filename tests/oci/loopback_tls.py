"""What the OCI suite's Python servers (token-server.py, upload-proxy.py) share: one started
as `python3 tests/oci/NAME.py ...` imports it from beside itself."""
import http.server
import os
import ssl


def serve_forever(handler, tls, port_file):
    """Serve HANDLER (a BaseHTTPRequestHandler class) over TLS, TLS being (CERT, KEY), on a
    free port of 127.0.0.1, written to PORT_FILE once it listens: through a rename, so that
    registry.bash's wait_port_file never reads half a number."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(*tls)
    server.socket = ctx.wrap_socket(server.socket, server_side=True)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(port_file + ".tmp", port_file)
    server.serve_forever()
