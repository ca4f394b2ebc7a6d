#!/bin/sh
# An example provider: sends one push to apns-mock over HTTP/2 + TLS with a provider token (JWT, ES256),
# then prints what the mock recorded for that device token. docker-compose.yml runs it in the `provider`
# service; it works outside a container too:
#
#   APNS_URL=https://localhost:2197 ADMIN_URL=http://localhost:8080 CERTS_DIR=Certs scripts/compose/provider-example.sh
#
# It needs curl (with HTTP/2) and apns-mock on PATH (for `apns-mock token`). Exits 0 only when the push was
# answered 200 and the mock recorded it.
#
# Trusting the mock's CA: curl is given the development CA with --cacert. Alternatives for a provider image
# of your own: copy Certs/ca.pem to /usr/local/share/ca-certificates/apns-mock.crt and run
# update-ca-certificates (then no flag is needed), or point your client's trust store at the file
# (Certs/README.md has Python, Node, Java and Swift recipes).
set -eu

APNS_URL=${APNS_URL:-https://apns-mock:2197}
ADMIN_URL=${ADMIN_URL:-http://apns-mock:8080}
CERTS_DIR=${CERTS_DIR:-/certs}
CA_FILE=${CA_FILE:-$CERTS_DIR/ca.pem}
TOPIC=${APNS_TOPIC:-com.example.app}
DEVICE_TOKEN=${DEVICE_TOKEN:-00fc13adff785122b4ad28809a3420982341241421348097878e577c991de8f0}
PAYLOAD=${PAYLOAD:-'{"aps":{"alert":"Hello from the provider container"}}'}

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# A provider token signed with the development key (AuthKey_APNSMOCK01.p8, team TEAM000001).
token=$(apns-mock token --certs-dir "$CERTS_DIR")

echo "provider: POST $APNS_URL/3/device/$DEVICE_TOKEN"
status=$(curl --http2 --silent --show-error --cacert "$CA_FILE" \
    --header "authorization: bearer $token" \
    --header "apns-topic: $TOPIC" \
    --header "apns-push-type: alert" \
    --data "$PAYLOAD" \
    --dump-header "$scratch/headers" --output "$scratch/body" --write-out '%{http_code}' \
    "$APNS_URL/3/device/$DEVICE_TOKEN")
echo "provider: answered HTTP $status"
grep -i '^apns-' "$scratch/headers" | sed 's/^/provider:   /' || true
if [ -s "$scratch/body" ]; then
    echo "provider:   body: $(cat "$scratch/body")"
fi

# The wait endpoint, not the list: behind the cluster profile's balancer the admin API may be another replica's,
# which sees the push once PostgreSQL has told it (milliseconds later).
echo "provider: GET $ADMIN_URL/admin/notifications/wait?token=$DEVICE_TOKEN"
# ADMIN_TOKEN: the mock's --admin-token, when it has one (the compose file gives it one).
recorded=$(curl --silent --show-error --fail -H "Authorization: Bearer ${ADMIN_TOKEN:-}" \
    "$ADMIN_URL/admin/notifications/wait?token=$DEVICE_TOKEN&count=1&timeout=10s")
echo "$recorded"

if [ "$status" != "200" ]; then
    echo "provider: the push was not accepted" >&2
    exit 1
fi
case "$recorded" in
    *"\"deviceToken\":\"$DEVICE_TOKEN\""* | *"\"deviceToken\" : \"$DEVICE_TOKEN\""*) ;;
    *) echo "provider: the mock did not record the push" >&2; exit 1 ;;
esac
echo "provider: done"
