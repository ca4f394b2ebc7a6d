"""The admin API against its OpenAPI document (docs/admin-api.yaml).

1. The document is valid OpenAPI 3.1 (openapi-spec-validator).
2. Answers to a scripted session (recordings present: list, one by apns-id, wait, wait timing out, preview, stats,
   scenario accepted and refused, devices, channels) validate against the document's schemas (jsonschema).
3. schemathesis generates requests for every operation but the two that wait on purpose (the live feed never ends;
   a wait may be asked for minutes) and checks: no 5xx, statuses, content types and bodies as documented.

Usage: admin_api_contract.py DOCUMENT ADMIN_URL SECONDS
Prints `contract ok: N answers validated` last; exits 1 with what failed.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

import jsonschema
import yaml
from openapi_spec_validator import validate

document_path, base_url, seconds = sys.argv[1], sys.argv[2].rstrip("/"), int(sys.argv[3])
with open(document_path, encoding="utf-8") as handle:
    document = yaml.safe_load(handle)
validate(document)

validated = 0


def call(method, path, body=None, content_type="application/json"):
    request = urllib.request.Request(base_url + path, method=method, data=body)
    if body is not None:
        request.add_header("Content-Type", content_type)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.headers.get("Content-Type", ""), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type", ""), error.read()


def check(method, path, expected_status, body=None, content_type="application/json"):
    """Calls, then validates the answer against the document's schema for that operation and status."""
    global validated
    status, answer_type, answer = call(method, path, body, content_type)
    if status != expected_status:
        sys.exit(f"{method} {path}: expected {expected_status}, got {status}: {answer[:300]!r}")
    template = path.split("?")[0]
    operation = None
    for documented, item in document["paths"].items():
        parts, given = documented.split("/"), template.split("/")
        if len(parts) == len(given) and all(p == g or p.startswith("{") for p, g in zip(parts, given)):
            operation = item.get(method.lower())
            if operation:
                break
    if operation is None:
        sys.exit(f"{method} {template} is not in the document")
    response = operation["responses"].get(str(status))
    if response is None:
        sys.exit(f"{method} {template} answered {status}, which the document does not list")
    if "$ref" in response:
        response = document["components"]["responses"][response["$ref"].split("/")[-1]]
    media = response.get("content", {})
    if "application/json" in media:
        if not answer_type.startswith("application/json"):
            sys.exit(f"{method} {path}: content type {answer_type}, documented application/json")
        schema = dict(media["application/json"]["schema"])
        schema["components"] = document["components"]
        try:
            jsonschema.validate(json.loads(answer), schema, cls=jsonschema.Draft202012Validator)
        except jsonschema.ValidationError as error:
            sys.exit(f"{method} {path} ({status}) does not match its schema: {error.message} at {list(error.absolute_path)}")
    validated += 1
    return json.loads(answer) if answer_type.startswith("application/json") else answer


# A session with recordings in it (the caller pushed some before).
listed = check("GET", "/admin/notifications?limit=5", 200)
if not listed["notifications"]:
    sys.exit("expected recordings to be present before the contract check")
apns_id = next(n["response"]["apnsId"] for n in listed["notifications"] if n["response"] and n["response"].get("apnsId"))
check("GET", "/admin/notifications/" + apns_id, 200)
check("GET", "/admin/notifications/not-an-id", 404)
check("GET", "/admin/notifications?status=abc", 400)
check("GET", "/admin/notifications?order=newest&limit=1", 200)
check("GET", "/admin/notifications/wait?count=1&timeout=1s", 200)
check("GET", "/admin/notifications/wait?count=100000&timeout=50ms", 408)
check("GET", "/admin/notifications/wait?timeout=forever", 400)
check("GET", "/admin/preview", 200)
check("GET", "/admin/preview?grouping=sideways", 400)
check("GET", "/admin/stats", 200)
check("GET", "/admin/scenario", 200)
check("PUT", "/admin/scenario", 200, b"name: contract\nrules:\n  - name: slow\n    match: {topic: com.example.other}\n    delay: 1ms\n", "application/yaml")
check("PUT", "/admin/scenario", 400, b"name: broken\nrules:\n  - match: {tokenPrefx: ab}\n", "application/yaml")
check("POST", "/admin/scenario/reset", 200)
check("GET", "/admin/devices", 200)
check("POST", "/admin/devices", 201, b'{"token":"aabbcc","topic":"com.example.app"}', "application/json")
check("POST", "/admin/devices", 400, b'{"token":"aabbcc"}', "application/json")
check("POST", "/admin/devices/aabbcc/unregister", 200, b'{"timestamp":"-2d"}')
check("POST", "/admin/devices/ffff/unregister", 404, b"{}")
check("DELETE", "/admin/devices/aabbcc", 200)
check("DELETE", "/admin/devices/aabbcc", 404)
check("GET", "/admin/channels", 200)
channel = check("POST", "/admin/channels", 201, b'{"bundleId":"com.example.app","messageStoragePolicy":1}')
check("GET", "/admin/channels?environment=staging", 400)
check("DELETE", "/admin/channels/" + urllib.request.quote(channel["id"], safe=""), 200)
check("DELETE", "/admin/channels", 200)
check("DELETE", "/admin/scenario", 200)
check("GET", "/healthz", 200)
check("GET", "/readyz", 200)
check("GET", "/metrics", 200)
check("GET", "/admin/openapi.yaml", 200)

# Property-based requests for every other operation. An admin answer takes milliseconds; the bound is for a test
# machine running hundreds of other tests and their tools at once, where 10 s was once reached. A server that
# never answers still fails the run.
REQUEST_TIMEOUT = 30

# In a scratch directory: schemathesis keeps a cache in its working directory.
scratch = tempfile.mkdtemp(prefix="apns-mock-schemathesis-")
fuzz = subprocess.run(
    [
        "schemathesis", "run", os.path.abspath(document_path), "--url", base_url,
        "--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance",
        "--exclude-operation-id", "streamNotifications",
        "--exclude-operation-id", "waitForNotifications",
        "--max-time", str(seconds), "--request-timeout", str(REQUEST_TIMEOUT),
        "--workers", "1", "--suppress-health-check", "all",
        "--phases", "examples,coverage,fuzzing",
    ],
    capture_output=True,
    text=True,
    cwd=scratch,
)


def findings(output):
    """schemathesis's FAILURES and ERRORS sections as one line: each operation with its first two lines
    (the check or error and its detail), then the seed that reproduces the run."""
    found, operation, detail, section = [], None, [], False
    for line in output.splitlines():
        if re.match(r"^=+ (FAILURES|ERRORS) =+$", line):
            section = True
        elif re.match(r"^=+ SUMMARY =+$", line) or line.startswith("Need more help"):
            section = False
        elif section and (heading := re.match(r"^_+ (.+?) _+$", line)):
            if operation:
                found.append(f"{operation}: {' / '.join(detail[:2])}")
            operation, detail = heading.group(1), []
        elif section and operation and line.strip() and not line.startswith(("Reproduce", "    curl")):
            detail.append(line.strip())
    if operation:
        found.append(f"{operation}: {' / '.join(detail[:2])}")
    seed = re.search(r"^Seed: (\d+)", output, re.MULTILINE)
    return "; ".join(found or ["no FAILURES or ERRORS section"]) + (f" (--seed {seed.group(1)})" if seed else "")


if fuzz.returncode != 0:
    # The summary first: a test report often keeps only an output's first line.
    summary = f"schemathesis found problems (exit {fuzz.returncode}): {findings(fuzz.stdout)}"
    print(summary)
    print(fuzz.stdout[-6000:])
    print(fuzz.stderr[-3000:], file=sys.stderr)
    sys.exit(summary)
print(fuzz.stdout[-6000:])
print(f"contract ok: {validated} answers validated")
