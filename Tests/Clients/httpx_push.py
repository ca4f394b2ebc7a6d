#!/usr/bin/env python3
"""Sends one push to apns-mock with httpx over HTTP/2 (the h2 library) and prints status, headers and body as JSON.

  httpx_push.py URL --ca Certs/ca.pem [--header 'apns-topic: com.example.app' …] [--data '{"aps":{}}']
                [--cert client.pem --key client-key.pem] [--count N]

With --count, sends N pushes on one connection and prints one JSON line each.
"""
import argparse
import json
import ssl
import sys

import httpx


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--ca", required=True)
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--data", default='{"aps":{"alert":"Hello from httpx"}}')
    parser.add_argument("--cert", help="a client certificate (PEM), for certificate authentication")
    parser.add_argument("--key", help="the client certificate's key (PEM)")
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args()
    headers = dict(h.split(": ", 1) for h in args.header)
    context = ssl.create_default_context(cafile=args.ca)
    if args.cert:
        context.load_cert_chain(args.cert, args.key)
    with httpx.Client(http2=True, http1=False, verify=context, timeout=15) as client:
        for _ in range(args.count):
            response = client.post(args.url, content=args.data.encode(), headers=headers)
            print(json.dumps({
                "http_version": response.http_version,
                "status": response.status_code,
                "headers": {k.lower(): v for k, v in response.headers.items()},
                "body": response.text,
            }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
