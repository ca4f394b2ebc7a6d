#!/usr/bin/env python3
"""Sends one push over HTTP/2 with the h2 library and prints, in arrival order, one JSON line per event the
server's frames caused, until the server closes the connection:
  {"event": "headers", "stream": 1, "status": 400} / {"event": "data", "stream": 1, "data": "...", "end": true}
  {"event": "goaway", "error": 0, "last_stream": 1, "debug": "..."} / {"event": "closed"}

  h2_frames.py --port P --ca Certs/ca.pem --token HEX --topic com.example.app
"""
import argparse
import json
import socket
import ssl
import sys

import h2.config
import h2.connection
import h2.events


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--topic", default="com.example.app")
    parser.add_argument("--timeout", type=float, default=10)
    args = parser.parse_args()

    context = ssl.create_default_context(cafile=args.ca)
    context.set_alpn_protocols(["h2"])
    raw = socket.create_connection((args.host, args.port), timeout=args.timeout)
    sock = context.wrap_socket(raw, server_hostname="localhost")
    connection = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=True, header_encoding="utf-8"))
    connection.initiate_connection()
    body = b'{"aps":{"alert":"Hello"}}'
    stream = connection.get_next_available_stream_id()
    connection.send_headers(stream, [
        (":method", "POST"), (":scheme", "https"), (":authority", "localhost"),
        (":path", "/3/device/" + args.token), ("apns-topic", args.topic), ("content-length", str(len(body))),
    ])
    connection.send_data(stream, body, end_stream=True)
    sock.sendall(connection.data_to_send())

    def emit(**fields):
        print(json.dumps(fields), flush=True)

    while True:
        try:
            data = sock.recv(65536)
        except (ConnectionResetError, ssl.SSLError) as error:
            emit(event="reset", error=str(error))
            return 0
        if not data:
            emit(event="closed")
            return 0
        try:
            events = connection.receive_data(data)
        except h2.exceptions.ProtocolError as error:
            emit(event="protocol-error", error=str(error))
            return 1
        for event in events:
            if isinstance(event, h2.events.ResponseReceived):
                emit(event="headers", stream=event.stream_id, status=int(dict(event.headers)[":status"]),
                     end=event.stream_ended is not None)
            elif isinstance(event, h2.events.DataReceived):
                emit(event="data", stream=event.stream_id, data=event.data.decode("utf-8", "replace"),
                     end=event.stream_ended is not None)
                connection.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
            elif isinstance(event, h2.events.ConnectionTerminated):
                emit(event="goaway", error=int(event.error_code), last_stream=event.last_stream_id,
                     debug=(event.additional_data or b"").decode("utf-8", "replace"))
        pending = connection.data_to_send()
        if pending:
            try:
                sock.sendall(pending)
            except OSError:
                pass


if __name__ == "__main__":
    sys.exit(main())
