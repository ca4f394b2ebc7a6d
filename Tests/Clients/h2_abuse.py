#!/usr/bin/env python3
"""Sends what a broken or hostile HTTP/2 client sends, over TLS, and prints how the server ended it as JSON:
{"goaway": true, "error": N, "last_stream": N} for a GOAWAY, {"goaway": false, "reset": N} for an RST_STREAM with
error code N, or {"goaway": false} when the connection closed (or went quiet for 10 s) with neither.

  h2_abuse.py --port P --ca Certs/ca.pem --case CASE

Cases (h2spec's numbering where it has one):
  bad-preface         random bytes instead of the connection preface
  invalid-preface     h2spec's own invalid preface, "INVALID CONNECTION PREFACE" (3.5/2)
  broken-preface      a preface that starts as HTTP/2's and then goes wrong
  continuation-flood  HEADERS followed by endless CONTINUATION frames
  data-on-closed      a request answered in full, then DATA on its stream (5.1/11)
  headers-on-closed   a request answered in full, then HEADERS on its stream (5.1/12)
  data-after-reset    a request opened, reset by the client, then DATA on its stream (5.1/8)
  headers-after-reset a request opened, reset by the client, then HEADERS on its stream (5.1/9)
  data-on-half-closed a request ended by the client, then DATA on its stream at once (5.1/5, 6.1/2)
  headers-on-half-closed  the same with HEADERS (5.1/6)
"""
import argparse
import json
import socket
import ssl

from hpack import Encoder
from hyperframe.frame import (ContinuationFrame, DataFrame, Frame, GoAwayFrame, HeadersFrame, RstStreamFrame,
                              SettingsFrame)

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
TOKEN = "ab" * 32


class FrameReader:
    """Reads whole frames off the socket; None when the connection ends or stays silent past the socket timeout."""

    def __init__(self, sock):
        self.sock = sock
        self.buffer = b""

    def next(self):
        while True:
            if len(self.buffer) >= 9:
                frame, length = Frame.parse_frame_header(memoryview(self.buffer[:9]))
                if len(self.buffer) >= 9 + length:
                    frame.parse_body(memoryview(self.buffer[9:9 + length]))
                    self.buffer = self.buffer[9 + length:]
                    return frame
            try:
                chunk = self.sock.recv(65536)
            except (ConnectionResetError, ssl.SSLError, socket.timeout):
                chunk = b""
            if not chunk:
                return None
            self.buffer += chunk


def request_headers(encoder, end_stream):
    frame = HeadersFrame(1, data=encoder.encode([
        (":method", "POST"), (":scheme", "https"), (":path", "/3/device/" + TOKEN), (":authority", "x"),
        ("apns-topic", "com.example.app"),
    ]))
    frame.flags.add("END_HEADERS")
    if end_stream:
        frame.flags.add("END_STREAM")
    return frame


def one_more_frame(case, encoder):
    if case.startswith("data-"):
        return DataFrame(1, data=b"x")
    return request_headers(encoder, end_stream=True)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--case", required=True)
    args = parser.parse_args()

    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    sock = context.wrap_socket(socket.create_connection(("127.0.0.1", args.port), timeout=10), server_hostname="localhost")
    reader = FrameReader(sock)
    encoder = Encoder()
    if args.case == "bad-preface":
        sock.sendall(bytes(range(1, 64)))
    elif args.case == "invalid-preface":
        sock.sendall(b"INVALID CONNECTION PREFACE\r\n\r\n")
    elif args.case == "broken-preface":
        sock.sendall(b"PRI * HTTP/2.0\r\n\r\nXX\r\n\r\n")
    elif args.case == "continuation-flood":
        headers = encoder.encode([(":method", "POST"), (":scheme", "https"), (":path", "/3/device/00"), (":authority", "x")])
        data = PREFACE + SettingsFrame(0).serialize() + HeadersFrame(1, data=headers).serialize()
        for _ in range(32):
            data += ContinuationFrame(1, data=b"\x40\x01a\x01b").serialize()
        sock.sendall(data)
    elif args.case in ("data-on-closed", "headers-on-closed"):
        sock.sendall(PREFACE + SettingsFrame(0).serialize() + request_headers(encoder, end_stream=True).serialize())
        # The stream is closed once the answer's last frame (END_STREAM) has arrived.
        while True:
            frame = reader.next()
            if frame is None:
                print(json.dumps({"goaway": False, "error": "no answer on stream 1"}))
                return 1
            if frame.stream_id == 1 and "END_STREAM" in frame.flags:
                break
        sock.sendall(one_more_frame(args.case, encoder).serialize())
    elif args.case in ("data-on-half-closed", "headers-on-half-closed"):
        # Sent together: the server may have answered (closing the stream) or not when the second frame arrives;
        # either way the answer is STREAM_CLOSED.
        sock.sendall(PREFACE + SettingsFrame(0).serialize() + request_headers(encoder, end_stream=True).serialize()
                     + one_more_frame(args.case, encoder).serialize())
    elif args.case in ("data-after-reset", "headers-after-reset"):
        sock.sendall(PREFACE + SettingsFrame(0).serialize() + request_headers(encoder, end_stream=False).serialize()
                     + RstStreamFrame(1, error_code=0x8).serialize() + one_more_frame(args.case, encoder).serialize())
    else:
        raise SystemExit("unknown case " + args.case)

    while True:
        frame = reader.next()
        if frame is None:
            print(json.dumps({"goaway": False}))
            return 0
        if isinstance(frame, GoAwayFrame):
            print(json.dumps({"goaway": True, "error": frame.error_code, "last_stream": frame.last_stream_id}))
            return 0
        if isinstance(frame, RstStreamFrame):
            print(json.dumps({"goaway": False, "reset": frame.error_code, "stream": frame.stream_id}))
            return 0


if __name__ == "__main__":
    raise SystemExit(main())
