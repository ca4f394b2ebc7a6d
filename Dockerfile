# syntax=docker/dockerfile:1
#
# apns-mock in a container: the mock APNs provider port (2197, TLS + HTTP/2) and the admin API (8080).
#
#   docker build -t apns-mock .
#   docker run --rm -p 2197:2197 -p 8080:8080 apns-mock
#   docker run --rm -p 2197:2197 -p 8080:8080 -e APNS_MOCK_AUTH=none apns-mock      # any APNS_MOCK_* setting
#   docker run --rm -p 2197:2197 -p 8080:8080 -v "$PWD/Certs:/etc/apns-mock/certs:ro" apns-mock
#
# Everything is configured with APNS_MOCK_* environment variables (see README.md, Configuration).
# docker-compose.yml runs it next to an example provider. Tests/APNsMockServerTests/ContainerFilesTests.swift
# parses this file: it checks that every copied path exists and runs ENTRYPOINT + CMD with this ENV outside a
# container, so keep the instructions simple (one ENV instruction, exec-form ENTRYPOINT and CMD).

# ---- Build stage: the official Swift image on Debian 12, whose libnghttp2 (1.52) the runtime stage installs.
FROM swift:6.2-bookworm AS build
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends libnghttp2-dev libsqlite3-dev pkg-config \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /build
# Dependencies first, from the manifest alone: this layer is rebuilt only when Package.swift (or a local
# Package.resolved, which the repository does not commit) changes, not on every source edit.
COPY Package.swift Package.resolve[d] ./
RUN swift package resolve
COPY Sources ./Sources
# SwiftPM checks every target's folder, test targets included, even when it builds one product.
COPY Tests ./Tests
# --static-swift-stdlib links the Swift runtime, Dispatch and Foundation into the binary, so the runtime
# stage needs no Swift toolchain. Debug info is stripped (163 MB -> 107 MB); the symbols stay, so the crash
# backtracer, which goes along (SWIFT_BACKTRACE below), still names functions.
RUN swift build -c release --static-swift-stdlib --product apns-mock \
    && mkdir -p /staging \
    && cp "$(swift build -c release --static-swift-stdlib --show-bin-path)/apns-mock" /staging/apns-mock \
    && strip --strip-debug /staging/apns-mock \
    && cp /usr/libexec/swift/linux/swift-backtrace-static /staging/swift-backtrace-static

# ---- Runtime stage: Debian 12 slim, the binary, the development credentials, a non-root user.
FROM debian:bookworm-slim
# What the statically linked binary still loads (ldd on it lists libnghttp2, libstdc++, libgcc_s, libm, libc):
#   libnghttp2-14   the HTTP/2 engine (the build stage linked libnghttp2.so.14)
#   libsqlite3-0    the SQLite store (--store sqlite:PATH), through GRDB
#   libstdc++6      the Swift runtime's C++ parts and swift-crypto's BoringSSL (libgcc_s1 comes with it)
#   zlib1g          not linked by the build today (ldd); tiny, already in the base image, and what
#                   swift-nio-extras' HTTP compression would need
#   ca-certificates, curl   the HEALTHCHECK below, and the example provider in docker-compose.yml
# Not needed: libcurl4 (only FoundationNetworking uses it), libxml2 (only FoundationXML), tzdata (logs are UTC).
RUN export DEBIAN_FRONTEND=noninteractive \
    && apt-get update -q \
    && apt-get install -y -q --no-install-recommends \
        libnghttp2-14 \
        libsqlite3-0 \
        libstdc++6 \
        zlib1g \
        ca-certificates \
        curl \
    && rm -rf /var/lib/apt/lists/* \
    && groupadd --system --gid 10001 apns-mock \
    && useradd --system --uid 10001 --gid apns-mock --no-create-home --home-dir /nonexistent \
        --shell /usr/sbin/nologin apns-mock \
    && mkdir -p /etc/apns-mock/certs /etc/apns-mock/scenarios
COPY --from=build /staging/apns-mock /usr/local/bin/apns-mock
COPY --from=build /staging/swift-backtrace-static /usr/local/libexec/swift-backtrace-static
# The development CA, server certificate (valid for the host name apns-mock), client certificates and token
# key; mount your own over /etc/apns-mock/certs (the files must be readable by uid 10001).
COPY Certs/ /etc/apns-mock/certs/
# Scenario files (YAML). Written as a wildcard so the build also works while the folder has no files (Git
# keeps no empty folders): BuildKit copies nothing then. Mount yours over /etc/apns-mock/scenarios.
COPY Scenario[s] /etc/apns-mock/scenarios/
# Readable by the apns-mock user whatever the build machine's umask; owned by root, so not writable by it.
RUN chmod -R a+rX /etc/apns-mock

# Listen on every interface inside the container (the binary's defaults are 127.0.0.1).
# To start with a scenario: APNS_MOCK_SCENARIO=/etc/apns-mock/scenarios/<name>.yaml (the shipped ones, or yours
# mounted over that folder).
ENV APNS_MOCK_HOST=0.0.0.0 \
    APNS_MOCK_ADMIN_HOST=0.0.0.0 \
    APNS_MOCK_CERTS_DIR=/etc/apns-mock/certs \
    SWIFT_BACKTRACE=enable=yes,sanitize=yes,threads=all,images=all,interactive=no,swift-backtrace=/usr/local/libexec/swift-backtrace-static

USER apns-mock:apns-mock
WORKDIR /etc/apns-mock

# 2197: the provider port (APNs serves it too). 443: when started with APNS_MOCK_PORT=443; no capability is
# needed: Docker (20.10+), Podman and containerd 2 let unprivileged processes bind low ports inside the
# container's network namespace (net.ipv4.ip_unprivileged_port_start=0); elsewhere pass
# --sysctl net.ipv4.ip_unprivileged_port_start=0, or simply publish -p 443:2197. 8080: the admin API.
# 2195: broadcast channel management (APNs' development port for it).
EXPOSE 2197 443 8080 2195

# /healthz answers 200 once both ports listen. Through sh so that APNS_MOCK_ADMIN_PORT is followed
# (set the admin port by that variable, not by the flag, or the check will look at the wrong port).
HEALTHCHECK --interval=5s --timeout=3s --start-period=10s --retries=3 \
    CMD ["sh", "-c", "curl -fsS \"http://127.0.0.1:${APNS_MOCK_ADMIN_PORT:-8080}/healthz\" || exit 1"]

# apns-mock runs as PID 1 and handles SIGTERM (docker stop) itself: it stops listening and exits 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["apns-mock"]
CMD ["serve"]
