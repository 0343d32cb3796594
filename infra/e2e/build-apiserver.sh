#!/usr/bin/env bash
# Installs etcd, kubectl and iproute2 (`ip netns`, for the network-namespace e2e), and builds kube-apiserver v1.20.2 from Debian's kubernetes source package,
# once, into the cache (~/.cache/kube-lambda-webhooks/bin). Does nothing when already built.
set -euo pipefail
CACHE="${KLW_CACHE_DIR:-$HOME/.cache/kube-lambda-webhooks}"
BIN="$CACHE/bin/kube-apiserver"
SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive

need_apt=""
command -v etcd >/dev/null || need_apt=1
command -v kubectl >/dev/null || need_apt=1
command -v ip >/dev/null || need_apt=1
if [ -x "$BIN" ] && [ -z "$need_apt" ]; then exit 0; fi

if [ ! -x "$BIN" ] && ! grep -rqs '^Types: deb-src' /etc/apt/sources.list.d/; then
  $SUDO tee /etc/apt/sources.list.d/klw-deb-src.sources >/dev/null <<'SRC'
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
fi
$SUDO apt-get update -qq
pkgs="etcd-server"
command -v kubectl >/dev/null || pkgs="$pkgs kubernetes-client"
command -v ip >/dev/null || pkgs="$pkgs iproute2"
[ -x "$BIN" ] || pkgs="$pkgs dpkg-dev golang-go rsync golang-github-modern-go-reflect2-dev"
$SUDO apt-get install -y -qq $pkgs >/dev/null
[ -x "$BIN" ] && exit 0

echo "building kube-apiserver v1.20.2 from Debian's kubernetes source (about 10 minutes, once)" >&2
work="$CACHE/src"
rm -rf "$work" && mkdir -p "$work" && cd "$work"
apt-get source -qq kubernetes >/dev/null 2>&1
cd "$(find . -maxdepth 1 -type d -name 'kubernetes-*' | head -1)"
# reflect2 v1.0.1 crashes under Go 1.19; Debian's packaged copy works.
rm -rf vendor/github.com/modern-go/reflect2
cp -r /usr/share/gocode/src/github.com/modern-go/reflect2 vendor/github.com/modern-go/reflect2
export GOFLAGS=-mod=vendor GOPROXY=off GOCACHE="$CACHE/go-build"
make WHAT=cmd/kube-apiserver >&2
install -D -m 755 _output/bin/kube-apiserver "$BIN"
cd / && rm -rf "$work"
echo "kube-apiserver built: $BIN" >&2
