// Generated from docs/admin-api.yaml by scripts/sync-openapi: edit the YAML file, then run the script.

/// The admin API's OpenAPI 3.1 document, served at `GET /admin/openapi.yaml`.
enum AdminAPIDocument {
    static let yaml = #"""
openapi: 3.1.0
info:
  title: apns-mock admin API
  version: "1.0"
  summary: Read, await and stream what a provider sent to apns-mock; script how it answers.
  description: |
    The admin API of apns-mock (JSON over HTTP/1.1, port 8080 by default). The provider port (HTTP/2 + TLS)
    speaks Apple's provider API and is not described here.

    When the mock runs with `--admin-token`, every route but `/healthz`, `/readyz`, the inspector's page and
    `/admin/login` needs `Authorization: Bearer <token>` (or the inspector's login cookie, or `access_token=<token>`
    in the query, kept for older scripts) and answers `401` without it.

    With `--tenants`, every route acts for one tenant or for all. A token given as `tenant=NAME:SECRET` acts for
    that tenant only: its recordings, scenario, devices, channels, clock and statistics; another tenant's recording
    by ID, or naming another tenant, is `404`. The unscoped token (or none) sees every tenant and acts for the one
    a call names with `tenant=NAME` in its query or the `APNs-Mock-Tenant: NAME` header. Without `--tenants`,
    naming a tenant is `400`. See docs/sharing.md.

    Every query parameter is checked: an unknown name, a value that does not parse or a filter given twice is
    `400 {"error", "parameter"}`, so a typo never silently matches everything. Filters also accept the
    recordings' camelCase spellings (`deviceToken`, `pushType`, `apnsId`, …).
  license:
    name: Apache-2.0
servers:
  - url: http://127.0.0.1:8080
security:
  - {}
  - adminToken: []
  - loginCookie: []
  - accessToken: []
paths:
  /healthz:
    get:
      operationId: health
      summary: Liveness; 200 once every port listens.
      security: [{}]
      responses:
        "200":
          description: Listening.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Status" }
        "503":
          description: Still starting.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Status" }
  /readyz:
    get:
      operationId: readiness
      summary: Readiness; 200 once certificates, keys and the scenario are loaded and the ports listen.
      security: [{}]
      responses:
        "200":
          description: Ready.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Status" }
        "503":
          description: Still starting.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Status" }
  /metrics:
    get:
      operationId: metrics
      summary: Prometheus text exposition.
      responses:
        "200":
          description: The metrics.
          content:
            text/plain:
              schema: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /:
    get:
      operationId: inspectorRoot
      summary: The inspector page (HTML).
      responses:
        "200":
          description: The page.
          content:
            text/html:
              schema: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /inspector:
    get:
      operationId: inspector
      summary: The inspector page (HTML).
      responses:
        "200":
          description: The page.
          content:
            text/html:
              schema: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/openapi.yaml:
    get:
      operationId: openAPIDocument
      summary: This document.
      responses:
        "200":
          description: The OpenAPI document.
          content:
            application/yaml:
              schema: { type: object, description: "This document (YAML)." }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/notifications:
    get:
      operationId: listNotifications
      summary: One page of the recordings that match the filters.
      parameters:
        - $ref: "#/components/parameters/token"
        - $ref: "#/components/parameters/topic"
        - $ref: "#/components/parameters/pushType"
        - $ref: "#/components/parameters/status"
        - $ref: "#/components/parameters/reason"
        - $ref: "#/components/parameters/apnsId"
        - $ref: "#/components/parameters/auth"
        - $ref: "#/components/parameters/keyId"
        - $ref: "#/components/parameters/teamId"
        - $ref: "#/components/parameters/rule"
        - $ref: "#/components/parameters/connection"
        - $ref: "#/components/parameters/abandoned"
        - $ref: "#/components/parameters/header"
        - $ref: "#/components/parameters/payload"
        - $ref: "#/components/parameters/since"
        - $ref: "#/components/parameters/kind"
        - $ref: "#/components/parameters/channelId"
        - $ref: "#/components/parameters/bundleId"
        - $ref: "#/components/parameters/warning"
        - $ref: "#/components/parameters/warnings"
        - $ref: "#/components/parameters/delivery"
        - $ref: "#/components/parameters/limit"
        - $ref: "#/components/parameters/order"
        - $ref: "#/components/parameters/after"
        - $ref: "#/components/parameters/before"
      responses:
        "200":
          description: The page; `next` says where the following one starts (`null` on the last).
          content:
            application/json:
              schema: { $ref: "#/components/schemas/NotificationPage" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    delete:
      operationId: clearNotifications
      summary: Forgets every recording and the recorder's counts.
      responses:
        "200":
          description: Cleared.
          content:
            application/json:
              schema:
                type: object
                required: [cleared]
                properties:
                  cleared: { type: boolean, const: true }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/notifications/wait:
    get:
      operationId: waitForNotifications
      summary: Returns as soon as `count` recordings match, or 408 with what matched when `timeout` passes.
      parameters:
        - name: count
          in: query
          description: How many to wait for (default 1).
          schema: { type: integer, minimum: 1 }
        - name: timeout
          in: query
          description: How long to wait at most, such as `5s`, `500ms` or `2m` (default 5s, at most 10m).
          schema: { type: string, examples: ["5s"] }
        - $ref: "#/components/parameters/token"
        - $ref: "#/components/parameters/topic"
        - $ref: "#/components/parameters/pushType"
        - $ref: "#/components/parameters/status"
        - $ref: "#/components/parameters/reason"
        - $ref: "#/components/parameters/apnsId"
        - $ref: "#/components/parameters/auth"
        - $ref: "#/components/parameters/rule"
        - $ref: "#/components/parameters/header"
        - $ref: "#/components/parameters/payload"
        - $ref: "#/components/parameters/since"
        - $ref: "#/components/parameters/kind"
        - $ref: "#/components/parameters/warning"
        - $ref: "#/components/parameters/limit"
        - $ref: "#/components/parameters/order"
        - $ref: "#/components/parameters/after"
      responses:
        "200":
          description: Enough recordings matched (the first `count`, unless `limit` says otherwise).
          content:
            application/json:
              schema: { $ref: "#/components/schemas/WaitResult" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "408":
          description: The timeout passed first; `notifications` has what did match.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/WaitResult" }
  /admin/notifications/stream:
    get:
      operationId: streamNotifications
      summary: "The recordings as they are made, as Server-Sent Events (`event: notification`, `event: delivery`, `event: skipped`)."
      description: |
        `id:` is the recording's sequence; `data:` its JSON on one line. `event: delivery` is a simulated
        device's delivery data point (a Delivery log as it was then, after its push's recording; no `id:`). A
        reader that falls behind gets `event: skipped` with `{"skipped": N}` (and `"deliveriesSkipped": M` for
        data points). `Last-Event-ID` (or `after=`) first replays what the store holds after that sequence. A
        comment line every 15 s keeps idle connections open.
      parameters:
        - $ref: "#/components/parameters/token"
        - $ref: "#/components/parameters/topic"
        - $ref: "#/components/parameters/status"
        - $ref: "#/components/parameters/kind"
        - $ref: "#/components/parameters/after"
        - name: Last-Event-ID
          in: header
          schema: { type: string, pattern: "^[0-9]+$" }
      responses:
        "200":
          description: The event stream (does not end by itself).
          content:
            text/event-stream:
              schema: { type: string }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/notifications/{apnsID}:
    get:
      operationId: notificationByAPNsID
      summary: The latest recording with this `apns-id` (case-insensitive).
      parameters:
        - name: apnsID
          in: path
          required: true
          schema: { type: string }
      responses:
        "200":
          description: The recording.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Recording" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/preview:
    get:
      operationId: preview
      summary: What the devices would show, built from a page of the newest matching recordings (500 unless `limit` says otherwise, at most 5,000; `before` for the next page).
      parameters:
        - name: grouping
          in: query
          schema: { type: string, enum: [automatic, app, "off"] }
        - name: hide-previews
          in: query
          schema: { type: boolean }
        - $ref: "#/components/parameters/token"
        - $ref: "#/components/parameters/topic"
        - $ref: "#/components/parameters/since"
        - $ref: "#/components/parameters/delivery"
        - $ref: "#/components/parameters/limit"
        - $ref: "#/components/parameters/before"
      responses:
        "200":
          description: Notification Center, per app, with Live Activities, silent pushes and what was not delivered.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Preview" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/stats:
    get:
      operationId: statistics
      summary: Counts of what was received and answered, the recorder's and each sink's state.
      responses:
        "200":
          description: The counts.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Statistics" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/reset:
    post:
      operationId: reset
      summary: "Back to the start state: no scenario, no devices, no channels, no recordings."
      responses:
        "200":
          description: Reset.
          content:
            application/json:
              schema:
                type: object
                required: [reset]
                properties:
                  reset: { type: boolean, const: true }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/scenario:
    get:
      operationId: getScenario
      summary: The scenario in force, its seed, start and per-rule hits.
      responses:
        "200":
          description: The scenario's state.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ScenarioState" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    put:
      operationId: setScenario
      summary: Replaces the scenario with the posted YAML or JSON, validated first.
      requestBody:
        required: true
        content:
          application/yaml:
            schema: { type: string }
            example: |
              name: one-unregistered-device
              rules:
                - name: gone
                  match: { token: "aa11" }
                  respond: { status: 410, reason: Unregistered }
      responses:
        "200":
          description: In force on every connection.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ScenarioState" }
        "400":
          description: Not valid; the previous scenario stays in force.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ScenarioRejected" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    delete:
      operationId: clearScenario
      summary: No scenario; the scenario's devices go with it.
      responses:
        "200":
          description: The (empty) scenario's state.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ScenarioState" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/scenario/reset:
    post:
      operationId: resetScenario
      summary: Counters, `times`, sequences, random draws and the clock back to the start.
      responses:
        "200":
          description: The scenario's state.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/ScenarioState" }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/devices:
    get:
      operationId: listDevices
      summary: The device registry.
      responses:
        "200":
          description: The devices.
          content:
            application/json:
              schema:
                type: object
                required: [devices]
                properties:
                  devices:
                    type: array
                    items: { $ref: "#/components/schemas/Device" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    post:
      operationId: registerDevice
      summary: Adds a device (replacing one with the same token).
      requestBody:
        required: true
        content:
          application/json:
            schema: { $ref: "#/components/schemas/DeviceInput" }
      responses:
        "201":
          description: Added.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Device" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/devices/{token}/unregister:
    post:
      operationId: unregisterDevice
      summary: From `timestamp` (default now) on, pushes to the device get 410 Unregistered with that timestamp.
      parameters:
        - name: token
          in: path
          required: true
          schema: { type: string }
      requestBody:
        required: false
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              properties:
                timestamp:
                  description: Milliseconds since the epoch, or a time as scenario files write it (`-2d`, `now`, an ISO 8601 date).
                  oneOf:
                    - { type: integer }
                    - { type: string }
      responses:
        "200":
          description: The device, now unregistered.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Device" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/devices/{token}:
    delete:
      operationId: removeDevice
      summary: Takes a device out of the registry.
      parameters:
        - name: token
          in: path
          required: true
          schema: { type: string }
      responses:
        "200":
          description: Removed.
          content:
            application/json:
              schema:
                type: object
                required: [removed]
                properties:
                  removed: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/devices/{token}/state:
    put:
      operationId: setDeviceState
      summary: Changes a simulated device's state now, on the mock's clock; `appRemoved` also unregisters it (410 from now on).
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [state]
              properties:
                state: { $ref: "#/components/schemas/DeviceState" }
      responses:
        "200":
          description: The device in its new state.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Device" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "409":
          description: The app was removed from this device; a removed app stays removed.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Error" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/devices/{token}/subscriptions:
    post:
      operationId: subscribeDevice
      summary: "The device's Live Activities subscribe to a broadcast channel; a message the channel keeps (storage policy 1, at most 8 hours old) reaches it now."
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [channel]
              properties:
                channel: { type: string, minLength: 1, description: The channel id (apns-channel-id). }
      responses:
        "200":
          description: The device with its subscriptions.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Device" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/devices/{token}/subscriptions/{channel}:
    delete:
      operationId: unsubscribeDevice
      summary: The device's Live Activities leave a broadcast channel.
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
        - { name: channel, in: path, required: true, schema: { type: string } }
      responses:
        "200":
          description: The device with its subscriptions.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Device" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/devices/{token}/received:
    get:
      operationId: deviceReceived
      summary: What reached the device, in delivery order, and its Notification Center built from it.
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
        - { name: hidePreviews, in: query, required: false, schema: { type: boolean } }
      responses:
        "200":
          description: The deliveries and the preview.
          content:
            application/json:
              schema:
                type: object
                required: [token, received, preview]
                properties:
                  token: { type: string }
                  received: { type: array, items: { $ref: "#/components/schemas/Delivery" } }
                  preview: { $ref: "#/components/schemas/Preview" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/devices/{token}/received/wait:
    get:
      operationId: waitForDelivery
      summary: Answers once `count` pushes have reached the device (also before the call); 408 after `timeout`.
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
        - { name: count, in: query, required: false, schema: { type: integer, minimum: 1, default: 1 } }
        - { name: timeout, in: query, required: false, description: "A duration (5s, 500ms, 2m; at most 10m).", schema: { type: string, default: 5s } }
      responses:
        "200":
          description: Enough pushes reached the device.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/DeliveryWait" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
        "408":
          description: Timed out; what was received and stored by then.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/DeliveryWait" }
  /admin/devices/{token}/stored:
    get:
      operationId: deviceStored
      summary: What is stored for the device now, oldest first.
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
      responses:
        "200":
          description: The stored pushes.
          content:
            application/json:
              schema:
                type: object
                required: [token, stored]
                properties:
                  token: { type: string }
                  stored: { type: array, items: { $ref: "#/components/schemas/Delivery" } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/devices/{token}/deliveries:
    get:
      operationId: deviceDeliveries
      summary: Every delivery log the device keeps (the newest 1,000 finished ones, then the stored ones).
      parameters:
        - { name: token, in: path, required: true, schema: { type: string } }
      responses:
        "200":
          description: The logs.
          content:
            application/json:
              schema:
                type: object
                required: [token, deliveries]
                properties:
                  token: { type: string }
                  deliveries: { type: array, items: { $ref: "#/components/schemas/Delivery" } }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/delivery:
    get:
      operationId: lookUpDelivery
      summary: "The Push Notifications Console's look-up: one push's delivery log, by `apns-unique-id` or `apns-id`."
      parameters:
        - { name: apns-unique-id, in: query, required: false, schema: { type: string } }
        - { name: apns-id, in: query, required: false, schema: { type: string } }
        - { name: apnsUniqueId, in: query, required: false, description: The same as apns-unique-id., schema: { type: string } }
        - { name: apnsId, in: query, required: false, description: The same as apns-id., schema: { type: string } }
      responses:
        "200":
          description: The log.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Delivery" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
  /admin/login:
    post:
      operationId: login
      summary: "The inspector's login: checks the admin token once and keeps it in a cookie (HttpOnly, SameSite=Strict), so no URL holds it."
      security: [{}]
      requestBody:
        required: false
        content:
          application/x-www-form-urlencoded:
            schema:
              type: object
              properties:
                token: { type: string }
          application/json:
            schema:
              type: object
              properties:
                token: { type: string }
      responses:
        "303":
          description: Logged in (or no token is needed); back to the inspector, with the cookie set.
        "400": { $ref: "#/components/responses/BadInput" }
        "401":
          description: Wrong admin token.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Error" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/logout:
    post:
      operationId: logout
      summary: Clears the inspector's login cookie.
      security: [{}]
      responses:
        "303":
          description: Logged out; back to the inspector.
  /admin/clock:
    get:
      operationId: getClock
      summary: The mock's clock, which the simulated devices, storage expiry and scenario times read.
      responses:
        "200":
          description: The clock.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Clock" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    post:
      operationId: moveClock
      summary: Moves the mock's clock forward (never back); what fell due in between happens at its time.
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              minProperties: 1
              maxProperties: 1
              properties:
                advance:
                  description: A duration (`31d`, `2h`) or milliseconds.
                  oneOf: [{ type: string }, { type: integer, minimum: 0 }]
                to:
                  description: A time (milliseconds, ISO 8601, `+2h`) not before the clock's.
                  oneOf: [{ type: string }, { type: integer, minimum: 0 }]
      responses:
        "200":
          description: The clock after the move.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Clock" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "413": { $ref: "#/components/responses/TooLarge" }
  /admin/channels:
    get:
      operationId: listChannels
      summary: Broadcast channels.
      parameters:
        - name: bundle-id
          in: query
          schema: { type: string }
        - name: environment
          in: query
          schema: { type: string, enum: [development, production] }
      responses:
        "200":
          description: The channels.
          content:
            application/json:
              schema:
                type: object
                required: [channels]
                properties:
                  channels:
                    type: array
                    items: { $ref: "#/components/schemas/Channel" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
    post:
      operationId: createChannel
      summary: Makes a channel, with a chosen id when given (to seed a test).
      requestBody:
        required: true
        content:
          application/json:
            schema:
              type: object
              additionalProperties: false
              required: [bundleId]
              properties:
                bundleId: { type: string, minLength: 1 }
                messageStoragePolicy: { type: integer, enum: [0, 1] }
                environment: { type: string, enum: [development, production] }
                id: { type: string, description: "Standard base64, e.g. dHN0LXNyY2gtY2hubA==" }
      responses:
        "201":
          description: Made.
          content:
            application/json:
              schema: { $ref: "#/components/schemas/Channel" }
        "400": { $ref: "#/components/responses/BadInput" }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "409": { $ref: "#/components/responses/BadInput" }
        "413": { $ref: "#/components/responses/TooLarge" }
    delete:
      operationId: clearChannels
      summary: Deletes every channel.
      responses:
        "200":
          description: Deleted.
          content:
            application/json:
              schema:
                type: object
                required: [cleared]
                properties:
                  cleared: { type: boolean, const: true }
        "401": { $ref: "#/components/responses/Unauthorized" }
  /admin/channels/{id}:
    delete:
      operationId: deleteChannel
      summary: Deletes one channel.
      parameters:
        - name: id
          in: path
          required: true
          schema: { type: string }
      responses:
        "200":
          description: Deleted.
          content:
            application/json:
              schema:
                type: object
                required: [deleted]
                properties:
                  deleted: { type: string }
        "401": { $ref: "#/components/responses/Unauthorized" }
        "404": { $ref: "#/components/responses/NotFound" }
components:
  securitySchemes:
    adminToken:
      type: http
      scheme: bearer
      description: The mock's `--admin-token`.
    accessToken:
      type: apiKey
      in: query
      name: access_token
      description: "The admin token in the query (RFC 6750 §2.3), kept for older scripts: a URL ends up in logs and history, so prefer the header; the inspector uses a login cookie."
    loginCookie:
      type: apiKey
      in: cookie
      name: apns_mock_admin
      description: "Set by POST /admin/login (HttpOnly, SameSite=Strict): the inspector's session."
  parameters:
    token:
      name: token
      in: query
      description: The device token in the path.
      schema: { type: string }
    topic:
      name: topic
      in: query
      description: "`apns-topic`, case-insensitive."
      schema: { type: string }
    pushType:
      name: push-type
      in: query
      schema: { $ref: "#/components/schemas/PushType" }
    status:
      name: status
      in: query
      description: The answer's HTTP status.
      schema: { type: integer, minimum: 100, maximum: 599 }
    reason:
      name: reason
      in: query
      description: The answer's APNs reason.
      schema: { type: string, examples: [Unregistered, BadDeviceToken] }
    apnsId:
      name: apns-id
      in: query
      schema: { type: string }
    auth:
      name: auth
      in: query
      schema: { type: string, enum: [token, certificate, none, missing] }
    keyId:
      name: key-id
      in: query
      schema: { type: string }
    teamId:
      name: team-id
      in: query
      schema: { type: string }
    rule:
      name: rule
      in: query
      description: The scenario rule that decided the answer (`default` when none did).
      schema: { type: string }
    connection:
      name: connection
      in: query
      schema: { type: integer, minimum: 0 }
    delivery:
      name: delivery
      in: query
      description: "Only pushes to simulated devices whose delivery log is in this state now, or family (lists and previews only)."
      schema:
        type: string
        enum: [stored, delivered, discarded, received, deliveredFromStorage, storedOffline, storedPower, discardedUnregistered, discardedUnregisteredFromStorage, discardedExpired, discardedDisabled, discardedDisabledFromStorage, discardedCoalesced]
    abandoned:
      name: abandoned
      in: query
      description: "`true`: only requests never answered; `false`: only answered ones."
      schema: { type: boolean }
    header:
      name: header
      in: query
      description: "`name:value`; repeatable, all must match."
      style: form
      explode: true
      schema:
        type: array
        items: { type: string, pattern: "^[^:]+:.*$" }
    payload:
      name: payload
      in: query
      description: "`$.json.path:value`; repeatable, all must match."
      style: form
      explode: true
      schema:
        type: array
        items: { type: string, examples: ["$.aps.alert.title:Hello"] }
    since:
      name: since
      in: query
      description: Milliseconds since the epoch, an ISO 8601 time, `now`, or relative to now (`-30s`).
      schema: { type: string }
    kind:
      name: kind
      in: query
      schema: { $ref: "#/components/schemas/Kind" }
    channelId:
      name: channel-id
      in: query
      schema: { type: string }
    bundleId:
      name: bundle-id
      in: query
      schema: { type: string }
    warning:
      name: warning
      in: query
      description: Recordings with this payload warning code.
      schema: { type: string }
    warnings:
      name: warnings
      in: query
      schema: { type: string, enum: [any, none] }
    limit:
      name: limit
      in: query
      description: At most this many (default 100 for lists, `count` for waits).
      schema: { type: integer, minimum: 0 }
    order:
      name: order
      in: query
      schema: { type: string, enum: [oldest, newest] }
    after:
      name: after
      in: query
      description: Only recordings with a greater sequence.
      schema: { type: integer, minimum: 0 }
    before:
      name: before
      in: query
      description: Only recordings with a smaller sequence.
      schema: { type: integer, minimum: 0 }
  responses:
    BadInput:
      description: A parameter or body field is wrong; `parameter` names it.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    NotFound:
      description: No such thing.
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    Unauthorized:
      description: The mock runs with `--admin-token` and the request did not carry it.
      headers:
        WWW-Authenticate:
          schema: { type: string, const: Bearer }
      content:
        application/json:
          schema: { $ref: "#/components/schemas/Error" }
    TooLarge:
      description: The body is over the route's limit.
  schemas:
    Status:
      type: object
      required: [status]
      properties:
        status: { type: string, enum: [ok, ready, starting] }
        certificates: { type: string }
    Error:
      type: object
      required: [error]
      properties:
        error: { type: string }
        parameter: { type: string }
    PushType:
      type: string
      enum: [alert, background, location, voip, complication, fileprovider, mdm, liveactivity, pushtotalk, widgets, controls]
    Kind:
      type: string
      enum: [push, broadcast, channel-create, channel-read, channel-delete, channel-list]
    NullableString:
      type: [string, "null"]
    Header:
      type: object
      required: [name, value]
      properties:
        name: { type: string }
        value: { type: string }
    Authentication:
      type: object
      required: [method]
      properties:
        method: { type: string, enum: [token, certificate, none, missing] }
        keyId: { type: string }
        teamId: { type: string }
        issuedAt: { type: [integer, "null"] }
        signatureVerified: { type: boolean }
        error: { type: string }
        subject: { type: string }
        topics: { type: array, items: { type: string } }
    Warning:
      type: object
      required: [code, path, message]
      properties:
        code: { type: string }
        path: { type: string }
        message: { type: string }
    Response:
      type: object
      required: [status, reason]
      properties:
        status: { type: integer }
        reason: { $ref: "#/components/schemas/NullableString" }
        apnsId: { $ref: "#/components/schemas/NullableString" }
        requestId: { $ref: "#/components/schemas/NullableString" }
        apnsUniqueId: { $ref: "#/components/schemas/NullableString" }
        timestamp: { type: integer, description: "With 410 Unregistered: milliseconds since the epoch." }
    Recording:
      type: object
      description: One request and the answer it got (the record file's lines have the same form).
      required: [sequence, receivedAt, receivedAtMillis, connectionId, streamId, kind, method, path, headers, payloadSize, warnings, response]
      properties:
        sequence: { type: integer, minimum: 1 }
        receivedAt: { type: string, format: date-time }
        receivedAtMillis: { type: integer }
        connectionId: { type: integer }
        streamId: { type: integer }
        kind: { $ref: "#/components/schemas/Kind" }
        bundleId: { type: string }
        channelId: { type: string }
        tenant: { type: string, description: "The tenant it was decided for; only with --tenants." }
        method: { type: string }
        path: { type: string }
        authority: { $ref: "#/components/schemas/NullableString" }
        deviceToken: { $ref: "#/components/schemas/NullableString" }
        topic: { $ref: "#/components/schemas/NullableString" }
        pushType: { $ref: "#/components/schemas/NullableString" }
        headers: { type: array, items: { $ref: "#/components/schemas/Header" } }
        payloadSize: { type: integer, minimum: 0 }
        payloadTruncated: { type: boolean }
        payloadText: { type: string }
        payload: { description: The body when it is a JSON object, else null. }
        authentication:
          oneOf:
            - { $ref: "#/components/schemas/Authentication" }
            - { type: "null" }
        scenarioRule: { $ref: "#/components/schemas/NullableString" }
        faults: { type: array, items: { type: string } }
        warnings: { type: array, items: { $ref: "#/components/schemas/Warning" } }
        response:
          oneOf:
            - { $ref: "#/components/schemas/Response" }
            - { type: "null" }
        abandoned: { type: string, description: "Why there was no answer (with response null)." }
    NotificationPage:
      type: object
      required: [notifications, total, next]
      properties:
        notifications: { type: array, items: { $ref: "#/components/schemas/Recording" } }
        total: { type: integer, minimum: 0, description: All that match, not only this page. }
        next:
          oneOf:
            - type: object
              properties:
                after: { type: integer }
                before: { type: integer }
            - { type: "null" }
    WaitResult:
      type: object
      required: [notifications, total]
      properties:
        notifications: { type: array, items: { $ref: "#/components/schemas/Recording" } }
        total: { type: integer, minimum: 0 }
        error: { type: string }
    Statistics:
      type: object
      required: [received, byStatus, byReason, byKind, byWarning, abandoned, recorder, connections, sinks, adminAccess]
      properties:
        adminAccess:
          type: object
          required: [host, loopback, token]
          properties:
            host: { type: string }
            loopback: { type: boolean }
            token: { type: boolean }
            warning: { type: string, description: Set when the admin API listens beyond loopback without --admin-token. }
        received: { type: integer }
        byStatus: { type: object, additionalProperties: { type: integer } }
        byReason: { type: object, additionalProperties: { type: integer } }
        byKind: { type: object, additionalProperties: { type: integer } }
        byWarning: { type: object, additionalProperties: { type: integer } }
        abandoned: { type: integer }
        tenant: { type: [string, "null"], description: "With --tenants: the tenant counted (its recordings kept now); null: every tenant." }
        tenants:
          type: object
          description: Only with --tenants.
          required: [mode, limit]
          properties:
            mode: { type: string, enum: [by-team, by-topic, by-host] }
            limit: { type: integer, description: Tenants kept apart; past it, new ones share `overflow`. }
            names: { type: array, items: { type: string }, description: The tenants met; not shown to a tenant's token. }
        recorder:
          type: object
          required: [stored, capacity, evicted, expired, retention]
          properties:
            stored: { type: integer }
            capacity: { type: integer }
            evicted: { type: integer }
            expired: { type: integer, description: Of evicted, those dropped for their age (--retention). }
            retention: { type: [string, "null"], description: "How long a recording is kept (7d); null: as long as capacity allows." }
        connections:
          type: object
          required: [open, accepted]
          properties:
            open: { type: integer }
            accepted: { type: integer }
        sinks:
          type: array
          items:
            type: object
            required: [name, policy, capacity, queued, peakQueued, written, skipped, backPressurePauses]
            properties:
              name: { type: string }
              policy: { type: string, enum: [back-pressure, skip-ahead] }
              capacity: { type: integer }
              queued: { type: integer }
              peakQueued: { type: integer }
              written: { type: integer }
              skipped: { type: integer }
              backPressurePauses: { type: integer }
              lastError: { type: string }
        cluster:
          description: >-
            With `--store postgres://…`: this replica's name and how many recordings it has read from the other
            replicas; null otherwise.
          type: [object, "null"]
          required: [replica, receivedFromReplicas]
          properties:
            replica: { type: string }
            receivedFromReplicas: { type: integer }
    ScenarioState:
      type: object
      required: [scenario, seed, startedAt, requests, rules, devices, version]
      properties:
        version:
          description: >-
            Goes up by one with each scenario put in force (PUT, DELETE, reset). Replicas sharing a PostgreSQL store
            agree on it: a PUT on one replica shows here on every replica, with the same version, once applied there.
          type: integer
        scenario:
          type: object
          description: The scenario as loaded, in the form PUT accepts.
          required: [name]
          properties:
            name: { type: string }
        seed: { type: [integer, string] }
        startedAt: { type: integer }
        requests: { type: integer }
        rules:
          type: array
          items:
            type: object
            required: [index, name, hits, exhausted]
            properties:
              index: { type: integer }
              name: { type: string }
              hits: { type: integer }
              exhausted: { type: boolean }
              nextStep: { type: integer }
        devices: { type: array, items: { $ref: "#/components/schemas/Device" } }
        source:
          description: The text the scenario was loaded from (a file, a PUT body), comments and all; null for none.
          type: [string, "null"]
    ScenarioRejected:
      type: object
      required: [error, problems, details]
      properties:
        error: { type: string }
        problems:
          type: array
          description: "Each as `source:line:column: field: message`."
          items: { type: string }
        details:
          type: array
          items:
            type: object
            required: [source, line, column, field, message]
            properties:
              source: { type: string }
              line: { type: [integer, "null"] }
              column: { type: [integer, "null"] }
              field: { $ref: "#/components/schemas/NullableString" }
              message: { type: string }
    Device:
      type: object
      required: [token, topic, environment, state]
      properties:
        token: { type: string }
        topic: { type: string }
        environment: { type: string, enum: [development, production] }
        state: { $ref: "#/components/schemas/DeviceState" }
        name: { type: string }
        unregisteredAt: { type: integer, description: Milliseconds since the epoch. }
        subscriptions: { type: array, items: { type: string }, description: The broadcast channels its Live Activities subscribe to. }
    DeviceInput:
      type: object
      additionalProperties: false
      required: [token, topic]
      properties:
        token: { type: string, pattern: "^[0-9a-fA-F]+$" }
        topic: { type: string, minLength: 1 }
        environment: { type: string, enum: [development, production, sandbox] }
        state: { $ref: "#/components/schemas/DeviceState" }
        name: { type: string }
        unregisteredAt: { type: integer }
    DeviceState:
      type: string
      enum: [online, offline, lowPower, notificationsDisabled, appRemoved]
    DeliveryState:
      type: string
      description: "The Push Notifications Console's states; `console` gives the Console's words."
      enum: [received, delivered, deliveredFromStorage, storedOffline, storedPower, discardedUnregistered, discardedUnregisteredFromStorage, discardedExpired, discardedDisabled, discardedDisabledFromStorage, discardedCoalesced]
    Delivery:
      type: object
      required: [token, pushType, priority, state, console, receivedAt, events]
      properties:
        token: { type: string }
        topic: { type: string }
        apnsId: { type: string }
        apnsUniqueId: { type: string }
        pushType: { type: string }
        priority: { type: integer }
        collapseId: { type: string }
        channelId: { type: string, description: The broadcast channel it came through. }
        expiration: { type: integer, description: "apns-expiration as sent (seconds since the epoch; 0: tried once)." }
        expiresAt: { type: integer, description: "When storage gives up on it, on the mock's clock (milliseconds)." }
        state: { $ref: "#/components/schemas/DeliveryState" }
        console: { type: string, examples: ["Stored – Device Offline"] }
        receivedAt: { type: integer, description: "On the mock's clock, in milliseconds since the epoch." }
        deliveredAt: { type: integer }
        sequence: { type: integer, description: The recording's sequence. }
        simulated: { type: boolean, description: "false: a push to a token the mock does not simulate, delivered as it arrived." }
        events:
          type: array
          items:
            type: object
            required: [state, console, at, time]
            properties:
              state: { $ref: "#/components/schemas/DeliveryState" }
              console: { type: string }
              at: { type: integer }
              time: { type: string, format: date-time }
    DeliveryWait:
      type: object
      required: [token, received, stored]
      properties:
        token: { type: string }
        received: { type: array, items: { $ref: "#/components/schemas/Delivery" } }
        stored: { type: array, items: { $ref: "#/components/schemas/Delivery" } }
        error: { type: string }
    Clock:
      type: object
      required: [now, time, offset, offsetMilliseconds]
      properties:
        now: { type: integer, description: Milliseconds since the epoch. }
        time: { type: string, format: date-time }
        offset: { type: string, description: "How far ahead of the wall clock, as a duration (31d)." }
        offsetMilliseconds: { type: integer, minimum: 0, maximum: 3153600000000 }
    Channel:
      type: object
      required: [id, bundleId, environment, messageStoragePolicy, createdAt]
      properties:
        id: { type: string }
        bundleId: { type: string }
        environment: { type: string, enum: [development, production] }
        messageStoragePolicy: { type: integer, enum: [0, 1] }
        createdAt: { type: string, format: date-time }
    Preview:
      type: object
      required: [apps, liveActivities, silent, notDelivered]
      properties:
        total: { type: integer, description: "GET /admin/preview: the recordings matching the filters, on every page." }
        next:
          description: "GET /admin/preview: where the next (older) page starts; null on the last."
          oneOf:
            - type: object
              required: [before]
              properties:
                before: { type: integer }
            - { type: "null" }
        apps:
          type: array
          items:
            type: object
            required: [bundleId, badge, stacks]
            properties:
              bundleId: { type: string }
              badge: { type: [integer, "null"] }
              stacks: { type: array, items: { type: object } }
        liveActivities: { type: array, items: { type: object } }
        silent: { type: array, items: { type: object } }
        notDelivered: { type: array, items: { type: object } }

"""#
}
