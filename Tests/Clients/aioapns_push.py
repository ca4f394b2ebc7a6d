#!/usr/bin/env python3
"""Sends pushes to apns-mock with aioapns, a real APNs client (Python), and prints one JSON line per result.

aioapns hard-wires Apple's host and port 443, so the test points its protocol class at the mock; everything
else (its HTTP/2 stack, h2, its lack of ALPN, its JWT signing with PyJWT, its certificate loading) is as
in production.

  aioapns_push.py --port P --ca Certs/ca.pem --key Certs/AuthKey_APNSMOCK01.p8 --key-id APNSMOCK01 --team-id TEAM000001 --topic com.example.app --token HEX [--count N]
  aioapns_push.py --port P --ca Certs/ca.pem --cert Certs/client-development.pem --cert-key Certs/client-development-key.pem --token HEX
  aioapns_push.py --port P --ca Certs/ca.pem --bundle Certs/client-development-bundle.pem --token HEX
"""
import argparse
import asyncio
import json
import ssl
import sys
import tempfile
import uuid

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


async def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ca", required=True)
    parser.add_argument("--key")
    parser.add_argument("--key-id")
    parser.add_argument("--team-id")
    parser.add_argument("--cert")
    parser.add_argument("--cert-key")
    parser.add_argument("--bundle", help="one PEM file with the certificate and its key (Certs/client-*-bundle.pem)")
    parser.add_argument("--topic", default="com.example.app")
    parser.add_argument("--token", required=True)
    parser.add_argument("--count", type=int, default=1)
    args = parser.parse_args()

    for protocol in (connection.APNsDevelopmentClientProtocol, connection.APNsProductionClientProtocol):
        protocol.APNS_SERVER = args.host
        protocol.APNS_PORT = args.port

    context = ssl.create_default_context(cafile=args.ca)
    if args.bundle:
        client = APNs(client_cert=args.bundle, topic=args.topic, use_sandbox=True, ssl_context=context,
                      max_connection_attempts=1)
    elif args.cert:
        # aioapns loads one file holding the certificate and its key.
        bundle = tempfile.NamedTemporaryFile("w", suffix=".pem", delete=False)
        bundle.write(open(args.cert).read().rstrip() + "\n" + open(args.cert_key).read())
        bundle.close()
        client = APNs(client_cert=bundle.name, topic=args.topic, use_sandbox=True, ssl_context=context,
                      max_connection_attempts=1)
    else:
        client = APNs(key=open(args.key).read(), key_id=args.key_id, team_id=args.team_id, topic=args.topic,
                      use_sandbox=True, ssl_context=context, max_connection_attempts=1)

    ids = [str(uuid.uuid4()) for _ in range(args.count)]
    requests = [
        NotificationRequest(
            device_token=args.token,
            message={"aps": {"alert": f"Hello from aioapns {index}"}},
            notification_id=notification_id,
            push_type=PushType.ALERT,
        )
        for index, notification_id in enumerate(ids)
    ]
    results = await asyncio.wait_for(
        asyncio.gather(*(client.send_notification(request) for request in requests)), timeout=20
    )
    for result in results:
        print(json.dumps({
            "id": result.notification_id,
            "status": result.status,
            "description": result.description,
            "success": result.is_successful,
        }))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
