#!/usr/bin/env bash
# scripts/fresh-machine.sh: check, on demand, that the README's set-up works on a fresh
# Debian 12 that has only Go, git and curl. Not run by CI: it takes 12 minutes on an idle
# 2-core machine, 30 on a busy one (package installs, cold builds, the whole test suite).
#
#   scripts/fresh-machine.sh 2>&1 | tee /tmp/fresh-machine.out      (as root)
#
# What it does:
#   1. debootstrap --variant=minbase --include=git,curl,ca-certificates bookworm into a
#      temporary folder (WORK, default /var/tmp/fresh-machine.XXXXXX), from the Debian
#      mirror the host's apt sources name (or MIRROR, SECURITY_MIRROR); copies the
#      host's Go (go env GOROOT, to /usr/local/go), a clone of this repository's HEAD
#      (committed work only) to /work/main and ../shared beside it to /work/shared.
#   2. Runs that root in new network, mount, PID and UTS namespaces (unshare + chroot):
#      its network has only a loopback of its own, so nothing of the host's Postgres,
#      Redis or stripe-mock is visible, and the default ports are free in it. Package
#      registries stay reachable through a small HTTP proxy (built here from the Go
#      source below): it listens on a unix socket inside the root, on the host side,
#      and lets through only the Debian mirrors and the hosts of GOPROXY and GOSUMDB;
#      inside, a bridge listens on 127.0.0.1:3128 and forwards to that socket. apt is
#      configured to use it (as on a machine behind a proxy) and Go and curl get
#      http_proxy/https_proxy (loopback excluded). The host's GOPROXY, GOFLAGS, GOSUMDB,
#      GONOSUMDB, GOPRIVATE, GONOPROXY and GOTOOLCHAIN are passed in; an HTTP(S)_PROXY of
#      the host's is used by the host-side proxy for its own connections; and the CA
#      certificates the host trusts beyond Debian's (a TLS-inspecting egress's) are
#      added to the root's, as on any machine of that network.
#      (No host-network fallback: where unshare --net is not allowed, this script stops
#      and says so.)
#   3. Inside, as root, from /work/main, each step printed with its result and time:
#      the tools absent at the start; `scripts/dev.sh` in the background until it is
#      ready; the walkthrough (scripts/walkthrough.sh: the ```sh block after
#      "<!-- walkthrough -->" in docs/walkthrough.md, run with bash -e, its output held against the
#      file's samples); the checks that
#      stopping it stopped the server and its stripe-mock; `scripts/test.sh`; and which
#      packages apt installed (no exim4, cron or sysstat).
#   4. Everything started inside dies with the PID namespace; WORK is removed unless
#      KEEP=1 (or when a step failed: then it is kept for a look, and the path printed).
#
# Settings: WORK, KEEP=1, MIRROR, SECURITY_MIRROR, SUITE [bookworm], TESTS=0 (all but
#   scripts/test.sh: about 5 minutes),
#   STEP_TIMEOUT_TEST [3600] and STEP_TIMEOUT_DEV [1800] seconds.
# Exit status: 0 when every step passed.
set -euo pipefail

# All of it in one block: bash reads a script as it runs, so an edit to this file
# during a run would otherwise change the lines still to come.
{

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
SUITE=${SUITE:-bookworm}
T0=$SECONDS

log() { printf '[fresh-machine %s +%ss] %s\n' "$(date -u +%T)" "$((SECONDS - T0))" "$*"; }
die() { log "ERROR: $*"; exit 1; }

[[ $(id -u) -eq 0 ]] || die "run as root (debootstrap, chroot and unshare need it)"
export PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null || die "go not found"
command -v git >/dev/null || die "git not found"
command -v unshare >/dev/null || die "unshare (util-linux) not found"
command -v ip >/dev/null || die "ip (iproute2) not found"
if ! unshare --net --mount --pid --fork true 2>/dev/null; then
	die "this host does not allow new network/mount/PID namespaces (unshare --net --mount --pid); the check needs them to hide the host's Postgres and Redis"
fi
if ! command -v debootstrap >/dev/null; then
	log "installing debootstrap on the host (apt-get install --no-install-recommends)"
	DEBIAN_FRONTEND=noninteractive apt-get -qq update >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get -qq install -y --no-install-recommends debootstrap >/dev/null
fi

# The host's Debian mirrors: the URIs of the stanzas (or deb lines) for SUITE and
# SUITE-security.
host_mirror() { # suite
	local f
	for f in /etc/apt/sources.list.d/*.sources; do
		[[ -f $f ]] || continue
		awk -v s="$1" '/^URIs:/ { u = $2 } /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == s) { print u; exit } }' "$f"
	done
	{ cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } |
		awk -v s="$1" '$1 == "deb" { i = 2; if ($2 ~ /^\[/) while ($i !~ /\]$/) i++; if ($2 ~ /^\[/) i++; if ($(i + 1) == s) print $i }'
}
MIRROR=${MIRROR:-$(host_mirror "$SUITE" | sed -n 1p)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${SECURITY_MIRROR:-$(host_mirror "$SUITE-security" | sed -n 1p)}
SECURITY_MIRROR=${SECURITY_MIRROR:-http://deb.debian.org/debian-security}
url_host() { local h=${1#*://}; h=${h%%/*}; h=${h##*@}; printf '%s\n' "${h%:*}"; }

GOROOT_HOST=$(go env GOROOT)
declare -A GOVARS
for v in GOPROXY GOFLAGS GOSUMDB GONOSUMDB GOPRIVATE GONOPROXY GOTOOLCHAIN; do
	GOVARS[$v]=$(go env "$v")
done
allow=("$(url_host "$MIRROR")" "$(url_host "$SECURITY_MIRROR")")
IFS=',|' read -r -a proxies <<<"${GOVARS[GOPROXY]}"
for p in "${proxies[@]}"; do
	[[ $p == direct || $p == off || -z $p ]] || allow+=("$(url_host "$p")")
done
sumdb=${GOVARS[GOSUMDB]}
if [[ -n $sumdb && $sumdb != off ]]; then
	if [[ $sumdb == *' '* ]]; then allow+=("$(url_host "${sumdb#* }")"); else allow+=("${sumdb%%+*}"); fi
fi
ALLOW=$(printf '%s\n' "${allow[@]}" | sort -u | paste -sd, -)

WORK=${WORK:-$(mktemp -d /var/tmp/fresh-machine.XXXXXX)}
R=$WORK/root
mkdir -p "$WORK"
proxy_pid=
ok=0
cleanup() {
	[[ -z $proxy_pid ]] || kill "$proxy_pid" 2>/dev/null || true
	if ((ok)) && [[ ${KEEP:-0} != 1 ]]; then
		if findmnt -rn -o TARGET | grep -q "^$WORK/"; then
			log "something is still mounted under $WORK: not removing it"
		else
			rm -rf "$WORK"
		fi
	else
		log "kept $WORK (the root is $R)"
	fi
}
trap cleanup EXIT

log "host: $(. /etc/os-release && echo "$PRETTY_NAME"), $(nproc) cores, $(go version | cut -d' ' -f3-)"
log "repository $REPO at $(git -C "$REPO" rev-parse --short HEAD) ($(git -C "$REPO" log -1 --format=%s | cut -c1-70))"
log "mirror $MIRROR, security $SECURITY_MIRROR; registries let through: $ALLOW"
log "work folder $WORK"

# --- 1. the root ---------------------------------------------------------------
s=$SECONDS
log "step debootstrap: --variant=minbase --include=git,curl,ca-certificates $SUITE (log $WORK/debootstrap.log)"
if ! debootstrap --variant=minbase --include=git,curl,ca-certificates "$SUITE" "$R" "$MIRROR" >"$WORK/debootstrap.log" 2>&1; then
	tail -n 20 "$WORK/debootstrap.log"
	die "debootstrap failed"
fi
log "step debootstrap: ok ($((SECONDS - s))s, $(du -sh "$R" | cut -f1))"

s=$SECONDS
cat >"$R/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb $SECURITY_MIRROR $SUITE-security main
EOF
printf 'Acquire::http::Proxy "http://127.0.0.1:3128";\nAcquire::https::Proxy "http://127.0.0.1:3128";\n' \
	>"$R/etc/apt/apt.conf.d/90fresh-machine-proxy"
printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$R/etc/hosts"
echo fresh-bookworm >"$R/etc/hostname"
mkdir -p "$R/usr/local" "$R/work" "$R/opt/fresh-machine"
cp -a "$GOROOT_HOST" "$R/usr/local/go"
git clone -q --no-hardlinks "$REPO" "$R/work/main"
if [[ -d $REPO/../shared ]]; then cp -a "$REPO/../shared" "$R/work/shared"; fi
# CA certificates the host trusts beyond Debian's (on a network whose egress inspects
# TLS, its CA): a machine on this network has them too, or no HTTPS registry answers.
mkdir -p "$R/usr/local/share/ca-certificates"
awk -v dir="$R/usr/local/share/ca-certificates" '
	/BEGIN CERTIFICATE/ { body = ""; pem = ""; incert = 1 }
	incert { pem = pem $0 "\n"; if ($0 !~ /CERTIFICATE/) body = body $0 }
	/END CERTIFICATE/ {
		incert = 0
		if (FILENAME == ARGV[1]) { have[body] = 1; next }
		if (!(body in have)) { n++; f = dir "/host-extra-" n ".crt"; printf "%s", pem > f; close(f) }
	}' "$R/etc/ssl/certs/ca-certificates.crt" /etc/ssl/certs/ca-certificates.crt
extra_cas=$(find "$R/usr/local/share/ca-certificates" -name 'host-extra-*.crt' | wc -l)
if ((extra_cas > 0)); then
	chroot "$R" update-ca-certificates >/dev/null 2>&1 || die "update-ca-certificates failed in the root"
fi
log "step copy: Go ($GOROOT_HOST), the repository (clone of $(git -C "$R/work/main" rev-parse --short HEAD)), shared/, $extra_cas CA certificate(s) the host trusts beyond Debian's: ok ($((SECONDS - s))s)"

# --- 2. the proxy ----------------------------------------------------------------
s=$SECONDS
mkdir -p "$WORK/proxy"
cat >"$WORK/proxy/go.mod" <<'EOF'
module freshmachine/proxy

go 1.22
EOF
cat >"$WORK/proxy/main.go" <<'EOF'
// fm-proxy: the network of scripts/fresh-machine.sh's isolated root.
//
//	fm-proxy serve  -unix SOCK -allow HOST,HOST...  (host side) an HTTP proxy on a unix
//	                socket: CONNECT and plain-HTTP requests to the allowed hosts only
//	fm-proxy bridge -listen 127.0.0.1:3128 -unix SOCK  (inside the namespace) TCP to
//	                the unix socket, byte for byte
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		log.Fatal("usage: fm-proxy serve|bridge ...")
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	sock := fs.String("unix", "", "unix socket")
	allow := fs.String("allow", "", "comma-separated host names")
	listen := fs.String("listen", "127.0.0.1:3128", "bridge: TCP address")
	_ = fs.Parse(os.Args[2:])
	switch os.Args[1] {
	case "serve":
		serve(*sock, strings.Split(*allow, ","))
	case "bridge":
		bridge(*listen, *sock)
	default:
		log.Fatalf("unknown mode %q", os.Args[1])
	}
}

func serve(sock string, allow []string) {
	_ = os.Remove(sock)
	ln, err := net.Listen("unix", sock)
	if err != nil {
		log.Fatal(err)
	}
	allowed := func(hostport string) bool {
		h := hostport
		if hh, _, err := net.SplitHostPort(hostport); err == nil {
			h = hh
		}
		for _, a := range allow {
			if a != "" && strings.EqualFold(h, a) {
				return true
			}
		}
		return false
	}
	// The host's own HTTP(S)_PROXY, if it has one, carries this proxy's connections.
	tr := &http.Transport{Proxy: http.ProxyFromEnvironment, MaxIdleConnsPerHost: 8, IdleConnTimeout: 30 * time.Second}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed(r.Host) {
			log.Printf("refused %s %s", r.Method, r.Host)
			http.Error(w, "fm-proxy: host not allowed: "+r.Host, http.StatusForbidden)
			return
		}
		if r.Method == http.MethodConnect {
			up, err := dialUpstream(r.Host)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadGateway)
				return
			}
			hj, ok := w.(http.Hijacker)
			if !ok {
				up.Close()
				return
			}
			c, buf, err := hj.Hijack()
			if err != nil {
				up.Close()
				return
			}
			fmt.Fprint(c, "HTTP/1.1 200 Connection established\r\n\r\n")
			if n := buf.Reader.Buffered(); n > 0 {
				b, _ := buf.Reader.Peek(n)
				_, _ = up.Write(b)
			}
			splice(c, up)
			return
		}
		if r.URL.Scheme != "http" {
			http.Error(w, "fm-proxy: absolute http:// URL or CONNECT expected", http.StatusBadRequest)
			return
		}
		r.RequestURI = ""
		r.Header.Del("Proxy-Connection")
		res, err := tr.RoundTrip(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, v := range res.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(res.StatusCode)
		_, _ = io.Copy(w, res.Body)
	})
	log.Printf("fm-proxy: serving on %s for %v", sock, allow)
	log.Fatal((&http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second}).Serve(ln))
}

// dialUpstream connects to hostport, through the host's HTTPS_PROXY when it has one.
func dialUpstream(hostport string) (net.Conn, error) {
	pu, err := http.ProxyFromEnvironment(&http.Request{URL: &url.URL{Scheme: "https", Host: hostport}})
	if err != nil || pu == nil {
		return net.DialTimeout("tcp", hostport, 30*time.Second)
	}
	addr := pu.Host
	if pu.Port() == "" {
		addr = net.JoinHostPort(pu.Hostname(), "80")
	}
	c, err := net.DialTimeout("tcp", addr, 30*time.Second)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", hostport, hostport)
	br := bufio.NewReader(c)
	res, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil || res.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s refused CONNECT %s: %v %v", addr, hostport, err, res)
	}
	if br.Buffered() > 0 { // nothing is expected before the client speaks
		c.Close()
		return nil, fmt.Errorf("upstream proxy %s sent data early", addr)
	}
	return c, nil
}

func bridge(listen, sock string) {
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		log.Fatal(err)
	}
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go func() {
			up, err := net.Dial("unix", sock)
			if err != nil {
				log.Print(err)
				c.Close()
				return
			}
			splice(c, up)
		}()
	}
}

// splice copies both ways and closes both ends when either side is done.
func splice(a, b net.Conn) {
	done := make(chan struct{}, 2)
	cp := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		}
		done <- struct{}{}
	}
	go cp(a, b)
	go cp(b, a)
	<-done
	<-done
	a.Close()
	b.Close()
}
EOF
(cd "$WORK/proxy" && CGO_ENABLED=0 GOFLAGS= GOTOOLCHAIN=local go build -o "$R/opt/fresh-machine/fm-proxy" .)
"$R/opt/fresh-machine/fm-proxy" serve -unix "$R/opt/fresh-machine/proxy.sock" -allow "$ALLOW" >"$WORK/proxy.log" 2>&1 &
proxy_pid=$!
for _ in $(seq 50); do [[ -S $R/opt/fresh-machine/proxy.sock ]] && break; sleep 0.1; done
[[ -S $R/opt/fresh-machine/proxy.sock ]] || die "the proxy did not start: $(cat "$WORK/proxy.log")"
log "step proxy: ok ($((SECONDS - s))s; its log: $WORK/proxy.log)"

# --- 3. the steps inside ---------------------------------------------------------------
cat >"$R/opt/fresh-machine/inside.sh" <<'INSIDE'
#!/bin/bash
# Runs inside the fresh root, as root, from /work/main.
set -uo pipefail
cd /work/main
T0=$SECONDS
results=()
log() { printf '[fresh-machine inside %s] %s\n' "$(date -u +%T)" "$*"; }
# step NAME CMD...: run CMD, print its result and time, remember them.
step() {
	local name=$1 s=$SECONDS rc
	shift
	log "step $name: start"
	if "$@"; then rc=0; else rc=$?; fi
	local r="ok"
	((rc == 0)) || r="FAILED (exit $rc)"
	log "step $name: $r ($((SECONDS - s))s)"
	results+=("$(printf '%-34s %-18s %5ss' "$name" "$r" "$((SECONDS - s))")")
	return $rc
}

absent_tools() {
	echo "$(go version)"
	echo "$(git --version)"
	echo "$(curl --version | head -n 1)"
	local c
	for c in gcc cc psql pg_ctlcluster redis-server chromium jq stripe-mock; do
		if p=$(command -v "$c"); then echo "$c: present at $p"; else echo "$c: absent"; fi
	done
	# /proc/net/tcp{,6}: state 0A is LISTEN; the namespace starts with none.
	echo "TCP sockets listening in this network namespace: $(cat /proc/net/tcp /proc/net/tcp6 2>/dev/null | awk '$4 == "0A"' | wc -l) (1 is the proxy bridge on 127.0.0.1:3128)"
	if (exec 3<>/dev/tcp/127.0.0.1/5432) 2>/dev/null; then echo "something answers on 127.0.0.1:5432"; return 1; fi
	if (exec 3<>/dev/tcp/127.0.0.1/6379) 2>/dev/null; then echo "something answers on 127.0.0.1:6379"; return 1; fi
	echo "nothing answers on 127.0.0.1:5432 (Postgres) or 127.0.0.1:6379 (Redis)"
}

# No procps in a minimal Debian: read /proc. running PID: alive and not a zombie.
running() { [[ -r /proc/$1/stat ]] && [[ $(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null) != Z ]]; }
# procs NAME: the live processes whose command name is NAME, as "pid name".
procs() {
	local d
	for d in /proc/[0-9]*; do
		[[ $(cat "$d/comm" 2>/dev/null) == "$1" ]] && running "${d#/proc/}" && echo "${d#/proc/} $1"
	done
	return 0
}

dev_pid=
start_dev() {
	rm -f tmp/dev.env
	scripts/dev.sh >/tmp/dev.log 2>&1 &
	dev_pid=$!
	local seen=0 deadline=$((SECONDS + ${STEP_TIMEOUT_DEV:-1800})) n
	while :; do
		# dev.sh's and services.sh's own lines (the server's are JSON).
		n=$(wc -l </tmp/dev.log)
		if ((n > seen)); then
			sed -n "$((seen + 1)),${n}p" /tmp/dev.log | grep -v '^{' | sed 's/^/    | /'
			seen=$n
		fi
		[[ -f tmp/dev.env ]] && break
		if ! kill -0 "$dev_pid" 2>/dev/null; then
			echo "dev.sh exited before the server was ready; its log:"
			tail -n 40 /tmp/dev.log
			return 1
		fi
		if ((SECONDS > deadline)); then
			echo "dev.sh not ready after ${STEP_TIMEOUT_DEV:-1800}s"
			return 1
		fi
		sleep 1
	done
	sleep 0.5
	sed -n "$((seen + 1)),\$p" /tmp/dev.log | grep -v '^{' | sed 's/^/    | /'
	return 0
}

# The walkthrough's block, run and its output checked by the script a reader runs: the
# walkthrough has one copy, in docs/walkthrough.md.
walkthrough() {
	timeout 600 scripts/walkthrough.sh
}

dev_stopped() {
	local rc=0 st
	for _ in $(seq 60); do running "$dev_pid" || break; sleep 0.5; done
	if running "$dev_pid"; then
		echo "dev.sh (pid $dev_pid) still runs after the walkthrough's stop step"
		rc=1
	else
		wait "$dev_pid"
		st=$?
		echo "dev.sh exited with status $st"
		((st == 0)) || rc=1
	fi
	echo "dev.sh's last lines:"
	grep -v '^{' /tmp/dev.log | tail -n 4 | sed 's/^/    | /'
	local p
	for p in server stripe-mock; do
		if procs "$p" | grep -q .; then
			echo "a $p process is still running: $(procs "$p")"
			rc=1
		else
			echo "no $p process left"
		fi
	done
	if [[ -e tmp/dev.env ]]; then echo "tmp/dev.env still there"; rc=1; else echo "tmp/dev.env removed"; fi
	return $rc
}

run_tests() {
	timeout "${STEP_TIMEOUT_TEST:-3600}" scripts/test.sh
}

packages() {
	echo "installed by the scripts (apt log: artifacts/apt.log):"
	grep '^=== ' artifacts/apt.log 2>/dev/null | sed 's/^/    /'
	local rc=0 p
	for p in exim4 exim4-base cron sysstat; do
		if dpkg -s "$p" >/dev/null 2>&1; then echo "$p is installed (it should not be)"; rc=1; fi
	done
	((rc)) || echo "no exim4, cron or sysstat"
	echo "$(dpkg -l | grep -c '^ii') packages in all"
	return $rc
}

failed=0
step "tools at the start" absent_tools || failed=1
if step "scripts/dev.sh (until ready)" start_dev; then
	step "walkthrough" walkthrough || failed=1
	step "dev.sh stopped, nothing left" dev_stopped || failed=1
else
	failed=1
	[[ -z $dev_pid ]] || kill "$dev_pid" 2>/dev/null
fi
if [[ ${TESTS:-1} != 0 ]]; then
	step "scripts/test.sh" run_tests || failed=1
else
	log "scripts/test.sh not run (TESTS=0)"
fi
step "packages" packages || failed=1

log "summary ($((SECONDS - T0))s inside)"
for r in "${results[@]}"; do echo "  $r"; done
exit $failed
INSIDE
chmod +x "$R/opt/fresh-machine/inside.sh"

goenv=()
for v in "${!GOVARS[@]}"; do goenv+=("$v=${GOVARS[$v]}"); done
px=http://127.0.0.1:3128
noproxy=localhost,127.0.0.1,::1

# Inside the new namespaces: mounts private to them, a loopback of their own, the bridge
# to the host-side proxy, then the steps in the chroot with a clean environment.
s=$SECONDS
log "step run inside (new net/mount/pid/uts namespaces, chroot $R)"
set +e
unshare --net --mount --pid --uts --fork --propagation private bash -euo pipefail -c '
	R=$1; shift
	hostname fresh-bookworm
	ip link set lo up
	mount -t proc proc "$R/proc"
	mount -t sysfs sysfs "$R/sys"
	mount -t devpts -o newinstance,ptmxmode=0666 devpts "$R/dev/pts"
	mount -t tmpfs -o mode=1777 tmpfs "$R/dev/shm"
	mount -t tmpfs -o mode=1777 tmpfs "$R/tmp"
	mount -t tmpfs tmpfs "$R/run"
	chroot "$R" /opt/fresh-machine/fm-proxy bridge -listen 127.0.0.1:3128 -unix /opt/fresh-machine/proxy.sock \
		>"$R/opt/fresh-machine/bridge.log" 2>&1 &
	exec chroot "$R" /usr/bin/env -i "$@" /opt/fresh-machine/inside.sh
' fresh "$R" \
	HOME=/root LANG=C.UTF-8 TERM=dumb USER=root LOGNAME=root SHELL=/bin/bash \
	PATH=/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	http_proxy=$px https_proxy=$px HTTP_PROXY=$px HTTPS_PROXY=$px no_proxy=$noproxy NO_PROXY=$noproxy \
	STEP_TIMEOUT_TEST="${STEP_TIMEOUT_TEST:-3600}" STEP_TIMEOUT_DEV="${STEP_TIMEOUT_DEV:-1800}" TESTS="${TESTS:-1}" \
	"${goenv[@]}"
rc=$?
set -e
result=ok
((rc == 0)) || result="FAILED (exit $rc)"
log "step run inside: $result ($((SECONDS - s))s)"
log "total $((SECONDS - T0))s"
((rc == 0)) && ok=1
exit "$rc"
}
