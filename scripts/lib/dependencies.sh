# Installs what apns-mock needs on a fresh Debian/Ubuntu machine, only when it is missing.
# Sourced by scripts/run, scripts/test and bench/run.

apns_mock_sudo() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    echo "apns-mock: need root (or sudo) to run: $*" >&2; return 1; fi
}

apns_mock_apt_updated=0
# ensure_apt PACKAGE... : installs the Debian packages that are not installed yet.
ensure_apt() {
  local missing=()
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if ! command -v apt-get >/dev/null 2>&1; then
    echo "apns-mock: please install: ${missing[*]} (no apt-get on this machine)" >&2
    return 1
  fi
  echo "apns-mock: installing ${missing[*]}" >&2
  if [ "$apns_mock_apt_updated" -eq 0 ]; then
    apns_mock_sudo apt-get update -qq >&2
    apns_mock_apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive apns_mock_sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# The build needs libnghttp2 (the HTTP/2 engine), SQLite, and pkg-config to find them.
ensure_build_dependencies() {
  if ! pkg-config --exists libnghttp2 2>/dev/null; then
    ensure_apt libnghttp2-dev pkg-config
  fi
  # The SQLite store (--store sqlite:PATH) is GRDB on the system's SQLite.
  if ! pkg-config --exists sqlite3 2>/dev/null; then
    ensure_apt libsqlite3-dev pkg-config
  fi
}

# ensure_python_module MODULE PIP-SPEC... : installs from PyPI when `import MODULE` fails.
ensure_python_module() {
  local module=$1; shift
  python3 -c "import $module" >/dev/null 2>&1 && return 0
  echo "apns-mock: installing $* from PyPI" >&2
  python3 -m pip install --quiet --disable-pip-version-check "$@" >&2 2>/dev/null \
    || python3 -m pip install --quiet --disable-pip-version-check --break-system-packages "$@" >&2
}

# Everything the test suite needs: the build's dependencies and the test tools.
ensure_test_dependencies() {
  ensure_build_dependencies
  ensure_test_tools
}

# The independent HTTP/2 clients and tools the tests talk to the server with (not needed to build, so
# scripts/test installs them while it builds).
ensure_test_tools() {
  ensure_apt nghttp2-client curl openssl python3 python3-pip docker-compose
  # The inspector's test drives headless Chromium through Debian's chromedriver.
  ensure_apt chromium chromium-driver
  # The PostgreSQL store's tests start a server of their own (initdb in a temporary folder, a free port).
  ensure_apt postgresql
  ensure_python_module aioapns aioapns
  ensure_python_module httpx 'httpx[http2]'
  ensure_python_module h2 h2
  ensure_python_module selenium selenium
  # The admin API's OpenAPI document: checked, and fuzzed with property-based requests.
  ensure_python_module openapi_spec_validator openapi-spec-validator
  ensure_python_module schemathesis schemathesis
}
