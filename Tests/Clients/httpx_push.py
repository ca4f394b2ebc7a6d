#!/usr/bin/env python3
"""Sends one push to apns-mock with httpx over HTTP/2 (the h2 library) and prints status, headers and body as JSON.

  httpx_push.py URL --ca Certs/ca.pem [--header 'apns-topic: com.example.app' …] [--data '{"aps":{}}']
"""
import argparse
import json
import sys

import httpx


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--ca", required=True)
    parser.add_argument("--header", action="append", default=[])
    parser.add_argument("--data", default='{"aps":{"alert":"Hello from httpx"}}')
    args = parser.parse_args()
    headers = dict(h.split(": ", 1) for h in args.header)
    with httpx.Client(http2=True, http1=False, verify=args.ca, timeout=15) as client:
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
