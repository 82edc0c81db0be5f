#!/usr/bin/env bash
# make e2e: the docs site in a real browser. Installs Debian's chromium when
# no Chromium is found (needs root, as CI has), builds the site, serves it on
# a loopback port and drives headless Chromium through it (e2e/). A
# phone-width screenshot of a chapter, and one of each figure, is kept in
# $E2E_ARTIFACTS (default .labkit/e2e).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -z "${CHROME:-}" ] && ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1 && ! command -v google-chrome >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq chromium >/dev/null
fi
export E2E_ARTIFACTS="${E2E_ARTIFACTS:-$PWD/.labkit/e2e}"
# The browser test is a module of its own (e2e/go.mod), so that chromedp
# stays out of the kit students download.
cd e2e
go test -tags e2e -count=1 -v .
