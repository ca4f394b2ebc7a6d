#!/usr/bin/env python3
"""Sends what a broken or hostile HTTP/2 client sends, over TLS, and prints the GOAWAY the server answers with as
JSON ({"goaway": true, "error": N, "last_stream": N}), or {"goaway": false} when the connection closed without one.

  h2_abuse.py --port P --ca Certs/ca.pem --case bad-preface|continuation-flood
"""
import argparse
import json
import socket
import ssl

from hpack import Encoder
from hyperframe.frame import ContinuationFrame, Frame, GoAwayFrame, HeadersFrame, SettingsFrame

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--case", required=True)
    args = parser.parse_args()

    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", args.port), timeout=10), server_hostname="localhost")
    if args.case == "bad-preface":
        sock.sendall(bytes(range(1, 64)))
    elif args.case == "continuation-flood":
        headers = Encoder().encode([(":method", "POST"), (":scheme", "https"), (":path", "/3/device/00"), (":authority", "x")])
        data = PREFACE + SettingsFrame(0).serialize() + HeadersFrame(1, data=headers).serialize()
        for _ in range(32):
            data += ContinuationFrame(1, data=b"\x40\x01a\x01b").serialize()
        sock.sendall(data)
    else:
        raise SystemExit("unknown case " + args.case)

    buffer = b""
    while True:
        try:
            chunk = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError):
            chunk = b""
        if chunk:
            buffer += chunk
        while len(buffer) >= 9:
            frame, length = Frame.parse_frame_header(memoryview(buffer[:9]))
            if len(buffer) < 9 + length:
                break
            frame.parse_body(memoryview(buffer[9:9 + length]))
            buffer = buffer[9 + length:]
            if isinstance(frame, GoAwayFrame):
                print(json.dumps({"goaway": True, "error": frame.error_code, "last_stream": frame.last_stream_id}))
                return 0
        if not chunk:
            print(json.dumps({"goaway": False}))
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
