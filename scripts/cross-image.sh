#!/usr/bin/env bash
# The container image that `cross` runs the big-endian tests in, built from
# Debian's own packages (no image registry is needed): a minimal Debian
# root file system (debootstrap) with a host gcc (build scripts and proc
# macros link with `cc`), the s390x and powerpc64 cross gccs and C
# libraries, and qemu-user, imported as an image whose environment names
# the linker and the runner of each target, as cross's own images do.
#
#   bash scripts/cross-image.sh         builds the image when it is missing;
#                                       prints its name on stdout
#   bash scripts/cross-image.sh --name  only prints the name
#
# The name is kiln-cross:<hash of this file>, so any change to the recipe
# builds a new image and an unchanged recipe reuses the one built before.
# Older kiln-cross images are removed when a new one is built. Needs root
# (debootstrap), debootstrap, and a container engine that `docker` (or
# $CROSS_CONTAINER_ENGINE) reaches; progress goes to stderr.
set -euo pipefail
cd "$(dirname "$0")/.."

SUITE=bookworm
MIRROR=http://deb.debian.org/debian
PACKAGES=(
    gcc libc6-dev
    gcc-s390x-linux-gnu libc6-dev-s390x-cross
    gcc-powerpc64-linux-gnu libc6-dev-ppc64-cross
    qemu-user
)
# What cross's images set too: cargo links and runs each target through
# these (they take precedence over .cargo/config.toml).
IMAGE_ENV=(
    "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
    "CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_LINKER=s390x-linux-gnu-gcc"
    "CARGO_TARGET_S390X_UNKNOWN_LINUX_GNU_RUNNER=qemu-s390x -L /usr/s390x-linux-gnu"
    "CARGO_TARGET_POWERPC64_UNKNOWN_LINUX_GNU_LINKER=powerpc64-linux-gnu-gcc"
    "CARGO_TARGET_POWERPC64_UNKNOWN_LINUX_GNU_RUNNER=qemu-ppc64 -L /usr/powerpc64-linux-gnu"
)

ENGINE="${CROSS_CONTAINER_ENGINE:-docker}"
NAME="kiln-cross:$(sha256sum "$0" | cut -c1-12)"

if [ "${1:-}" = --name ]; then
    echo "$NAME"
    exit 0
fi

if "$ENGINE" image inspect "$NAME" >/dev/null 2>&1; then
    echo "$NAME"
    exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
    echo "cross-image: debootstrap needs root; run as root: bash scripts/cross-image.sh" >&2
    exit 1
fi
command -v debootstrap >/dev/null || {
    echo "cross-image: debootstrap is not installed (apt-get install debootstrap)" >&2
    exit 1
}

ROOTFS="$(mktemp -d "${TMPDIR:-/tmp}/kiln-cross-rootfs.XXXXXX")"
trap 'rm -rf "$ROOTFS"' EXIT

echo "cross-image: debootstrap $SUITE with ${PACKAGES[*]}" >&2
include="$(IFS=,; echo "${PACKAGES[*]}")"
if ! debootstrap --variant=minbase --include="$include" "$SUITE" "$ROOTFS" "$MIRROR" >"$ROOTFS.log" 2>&1; then
    tail -30 "$ROOTFS.log" >&2
    [ ! -f "$ROOTFS/debootstrap/debootstrap.log" ] || tail -30 "$ROOTFS/debootstrap/debootstrap.log" >&2
    rm -f "$ROOTFS.log"
    echo "cross-image: debootstrap failed" >&2
    exit 1
fi
rm -f "$ROOTFS.log"
# Not needed to run, and every byte of the image is copied for each
# container when the engine stores it without overlays (vfs): the package
# downloads and lists, documentation, the gcc LTO dump tools, and qemu-user's
# emulators of the other architectures (about 250 MB of 650 MB).
rm -rf "$ROOTFS"/var/cache/apt/archives/*.deb "$ROOTFS"/var/lib/apt/lists/* \
    "$ROOTFS"/usr/share/doc "$ROOTFS"/usr/share/man "$ROOTFS"/usr/share/locale \
    "$ROOTFS"/usr/bin/*lto-dump*
find "$ROOTFS/usr/bin" -name 'qemu-*' ! -name qemu-s390x ! -name qemu-ppc64 -delete

changes=()
for variable in "${IMAGE_ENV[@]}"; do
    # Quoted: a value with spaces would otherwise be read as more pairs.
    changes+=(--change "ENV ${variable%%=*}=\"${variable#*=}\"")
done
echo "cross-image: importing as $NAME" >&2
tar -C "$ROOTFS" --numeric-owner -c . | "$ENGINE" import "${changes[@]}" - "$NAME" >/dev/null

# A changed recipe leaves its older image behind; it is never used again.
"$ENGINE" image ls --format '{{.Repository}}:{{.Tag}}' kiln-cross | while read -r old; do
    [ "$old" = "$NAME" ] || "$ENGINE" image rm "$old" >/dev/null
done

echo "$NAME"
