#!/usr/bin/env python3
"""Reads apns-mock's live feed (Server-Sent Events) with httpx until COUNT events of type EVENT (notification unless
told) came, then prints every event as JSON: [{"id": "3", "event": "notification", "data": {...}}, {"event":
"skipped", ...}, ...].

  sse_read.py URL --count N [--event delivery] [--last-event-id ID] [--timeout 20]
"""
import argparse
import json
import sys

import httpx


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("url")
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--event", default="notification")
    parser.add_argument("--last-event-id")
    parser.add_argument("--timeout", type=float, default=20)
    args = parser.parse_args()
    headers = {"Last-Event-ID": args.last_event_id} if args.last_event_id else {}
    events, current, notifications = [], {}, 0
    with httpx.stream("GET", args.url, headers=headers, timeout=args.timeout) as response:
        if response.status_code != 200:
            print(json.dumps({"status": response.status_code, "body": response.read().decode()}))
            return 1
        print("connected", file=sys.stderr, flush=True)
        for line in response.iter_lines():
            if line == "":
                if current:
                    events.append(current)
                    if current.get("event") == args.event:
                        notifications += 1
                current = {}
                if notifications >= args.count:
                    break
            elif line.startswith(":"):
                continue
            else:
                field, _, value = line.partition(": ")
                current[field] = json.loads(value) if field == "data" else value
    print(json.dumps(events))
    return 0


if __name__ == "__main__":
    sys.exit(main())
