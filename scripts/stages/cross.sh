# The `cross` stage of scripts/test.sh: kiln-nostd's tests and doc tests on
# s390x and powerpc64 through `cross`, the way a user with a container
# engine runs them (docs/targets.md), and the swap-mutant check through it
# too. Sourced by test.sh, which runs stage_cross from the repository root
# in a subshell with `set -e`.
#
# Everything runs offline once installed: the image is built here from
# Debian's packages (scripts/cross-image.sh) and chosen through cross's
# CROSS_TARGET_<TARGET>_IMAGE variables, and the containers have no network.
# With no container engine running, the stage starts its own Docker daemon
# (Debian's docker.io) with its storage in $KILN_CROSS_HOME, which keeps the
# image between runs, and stops it when the stage ends; under CI it also
# removes that storage then.

CROSS_VERSION=0.2.5
CROSS_TARGETS=(s390x-unknown-linux-gnu powerpc64-unknown-linux-gnu)
KILN_CROSS_HOME="${KILN_CROSS_HOME:-/var/lib/kiln-cross}"
CROSS_RUN_DIR=/run/kiln-cross

# docker.io (the daemon, and a client when none is installed), debootstrap
# (the image), rust-src, and cross at its pinned version. As root it installs what is
# missing; otherwise it prints the commands and fails.
cross_install() {
    local commands=() packages=()
    if ! cross_engine_answers && ! command -v dockerd >/dev/null; then packages+=(docker.io); fi
    command -v debootstrap >/dev/null || packages+=(debootstrap)
    if [ ${#packages[@]} -gt 0 ]; then
        commands+=("apt-get update" "apt-get install -y --no-install-recommends ${packages[*]}")
    fi
    # cross adds rust-src to the toolchain when it is missing; added here it
    # is one of the stage's installs rather than a surprise download.
    if ! rustup component list --installed | grep -q '^rust-src'; then
        commands+=("rustup component add rust-src")
    fi
    if ! cargo install --list | grep -qx "cross v$CROSS_VERSION:"; then
        commands+=("cargo install cross --version $CROSS_VERSION --locked --force")
    fi
    [ ${#commands[@]} -gt 0 ] || return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "stage cross: missing tools. Run as root (or fix by hand):" >&2
        printf '    %s\n' "${commands[@]}" >&2
        return 1
    fi
    local command
    for command in "${commands[@]}"; do
        echo "cross: $command"
        DEBIAN_FRONTEND=noninteractive $command
    done
}

cross_engine_answers() {
    "${CROSS_CONTAINER_ENGINE:-docker}" version >/dev/null 2>&1
}

# overlay2 when the kernel can mount overlays on the storage's file system:
# a container then costs no copy of the image. vfs works everywhere, but
# copies the whole image (about 400 MB) for each container.
cross_storage_driver() {
    local probe
    probe="$(mktemp -d "$KILN_CROSS_HOME/probe.XXXXXX")"
    mkdir "$probe/lower" "$probe/upper" "$probe/work" "$probe/merged"
    if mount -t overlay overlay \
        -o "lowerdir=$probe/lower,upperdir=$probe/upper,workdir=$probe/work" \
        "$probe/merged" 2>/dev/null; then
        umount "$probe/merged"
        echo overlay2
    else
        echo vfs
    fi
    rm -rf "$probe"
}

# Uses the engine that already answers (a user's Docker or Podman);
# otherwise starts dockerd on a socket of its own and sets CROSS_DAEMON_PID.
cross_engine_start() {
    CROSS_DAEMON_PID=
    if cross_engine_answers; then
        echo "cross: using the running container engine ($("${CROSS_CONTAINER_ENGINE:-docker}" version --format '{{.Server.Version}}' 2>/dev/null || echo unknown version))"
        return 0
    fi
    if [ "$(id -u)" -ne 0 ]; then
        echo "stage cross: no container engine answers, and starting dockerd needs root" >&2
        return 1
    fi
    mkdir -p "$KILN_CROSS_HOME" "$CROSS_RUN_DIR"
    # A daemon left by an interrupted run of this stage holds the storage.
    if [ -f "$CROSS_RUN_DIR/dockerd.pid" ] && kill -0 "$(cat "$CROSS_RUN_DIR/dockerd.pid")" 2>/dev/null; then
        kill "$(cat "$CROSS_RUN_DIR/dockerd.pid")"
        sleep 3
    fi
    local driver
    driver="${KILN_CROSS_STORAGE_DRIVER:-$(cross_storage_driver)}"
    echo "cross: starting dockerd (storage $driver in $KILN_CROSS_HOME/docker)"
    dockerd --iptables=false --ip6tables=false --bridge=none --storage-driver="$driver" \
        --data-root "$KILN_CROSS_HOME/docker" --exec-root "$CROSS_RUN_DIR/exec" \
        --pidfile "$CROSS_RUN_DIR/dockerd.pid" -H "unix://$CROSS_RUN_DIR/docker.sock" \
        >"$CROSS_RUN_DIR/dockerd.log" 2>&1 &
    CROSS_DAEMON_PID=$!
    export DOCKER_HOST="unix://$CROSS_RUN_DIR/docker.sock"
    local waited=0
    until cross_engine_answers; do
        # A client of another Docker release may refuse this daemon's API
        # version; docker.io's own client speaks it.
        if [ -x /usr/bin/docker ] && /usr/bin/docker version >/dev/null 2>&1; then
            export CROSS_CONTAINER_ENGINE=/usr/bin/docker
            break
        fi
        if ! kill -0 "$CROSS_DAEMON_PID" 2>/dev/null || [ "$waited" -ge 60 ]; then
            tail -20 "$CROSS_RUN_DIR/dockerd.log" >&2
            echo "stage cross: dockerd did not answer on $DOCKER_HOST within $waited s" >&2
            return 1
        fi
        sleep 1
        waited=$((waited + 1))
    done
}

# Stops the daemon this stage started; under CI, removes the storage (the
# image and anything a stopped container left) with it.
cross_engine_stop() {
    if [ -n "${CROSS_DAEMON_PID:-}" ] && kill -0 "$CROSS_DAEMON_PID" 2>/dev/null; then
        kill "$CROSS_DAEMON_PID"
        local waited=0
        while kill -0 "$CROSS_DAEMON_PID" 2>/dev/null && [ "$waited" -lt 30 ]; do
            sleep 1
            waited=$((waited + 1))
        done
        echo "cross: dockerd stopped"
    fi
    if [ "${CI:-}" = true ]; then
        if [ -n "${CROSS_DAEMON_PID:-}" ]; then
            echo "cross: removing the engine storage ($(du -sh "$KILN_CROSS_HOME" 2>/dev/null | cut -f1))"
            cross_storage_unmount
            rm -rf "$KILN_CROSS_HOME"
        elif [ -n "${CROSS_IMAGE:-}" ]; then
            "${CROSS_CONTAINER_ENGINE:-docker}" image rm "$CROSS_IMAGE" >/dev/null || true
        fi
    fi
}

# dockerd mounts its data root on itself when the file system it is on is
# not a shared mount (inside a container, say), and can leave that mount,
# which makes the storage's removal fail on a busy directory. Unmounts
# whatever is still mounted below $KILN_CROSS_HOME, deepest first.
cross_storage_unmount() {
    local mounted
    mounted="$(awk -v home="$KILN_CROSS_HOME/" 'index($5, home) == 1 { print $5 }' /proc/self/mountinfo | sort -r)"
    [ -z "$mounted" ] || echo "cross: unmounting what dockerd left mounted: $mounted"
    local point
    for point in $mounted; do
        umount "$point" || umount -l "$point"
    done
}

# cross 0.2.5 reads `rustup toolchain list` expecting "NAME (default)" and
# takes today's "NAME (active, default)" for a missing toolchain, which it
# then tries to download. A toolchain named by its version is listed bare,
# so the stage names it so, linking the active one under that name when
# rustup has it only as a channel (stable).
cross_toolchain() {
    local version host toolchains
    version="$(rustc --version | cut -d' ' -f2)"
    host="$(rustc -vV | sed -n 's/^host: //p')"
    if ! rustup toolchain list | cut -d' ' -f1 | grep -qx "$version-$host"; then
        toolchains="${RUSTUP_HOME:-$HOME/.rustup}/toolchains"
        ln -s "$(rustc --print sysroot)" "$toolchains/$version-$host"
        echo "cross: linked the active toolchain as $version-$host" >&2
    fi
    echo "$version"
}

stage --until fuzz cross "kiln-nostd tests and doc tests on s390x and powerpc64 through cross in a Debian-built image, and the swap mutants"
stage_cross() {
    local start=$SECONDS
    cross_install
    local install_s=$((SECONDS - start))

    trap cross_engine_stop EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    start=$SECONDS
    cross_engine_start
    local engine_s=$((SECONDS - start))

    start=$SECONDS
    local image_state=cached
    local engine="${CROSS_CONTAINER_ENGINE:-docker}"
    CROSS_IMAGE="$(bash scripts/cross-image.sh --name)"
    "$engine" image inspect "$CROSS_IMAGE" >/dev/null 2>&1 || image_state=built
    CROSS_IMAGE="$(bash scripts/cross-image.sh)"
    local image_s=$((SECONDS - start)) image_mb
    image_mb=$(($("$engine" image inspect -f '{{.Size}}' "$CROSS_IMAGE") / 1000000))
    echo "cross: image $CROSS_IMAGE $image_state in $image_s s, $image_mb MB"

    local toolchain target variable
    toolchain="$(cross_toolchain)"
    for target in "${CROSS_TARGETS[@]}"; do
        variable="CROSS_TARGET_$(tr 'a-z-' 'A-Z_' <<<"$target")_IMAGE"
        export "$variable=$CROSS_IMAGE"
    done
    export CROSS_CONTAINER_OPTS=--network=none
    # Its own build directory: cross builds with the workspace at /project,
    # so nothing of a build on the host could be reused, and sharing
    # target/ would make each side rebuild the other's host artifacts.
    export CARGO_TARGET_DIR="$ROOT/target/cross"
    # The containers have no network: every crate must be in the cache.
    cargo fetch --locked -q

    local times=()
    for target in "${CROSS_TARGETS[@]}"; do
        start=$SECONDS
        cross "+$toolchain" test -p kiln-nostd --target "$target" --features derive,std
        times+=("${target%%-*} $((SECONDS - start)) s")
    done
    start=$SECONDS
    # The mutants run the tests written for byte order and the golden cases
    # through every path: the whole suite takes minutes per run under
    # emulation, mostly in tests of other things (the check still fails if
    # these two let a mutant through).
    SWAP_MUTANT_CARGO="cross +$toolchain" SWAP_MUTANT_TESTS="--test byte_order --test golden" \
        bash scripts/check-swap-mutant.sh "${CROSS_TARGETS[0]}"
    times+=("swap mutants $((SECONDS - start)) s")
    # What CI removes when the stage ends (prune_after, cross_engine_stop).
    local disk="target/cross $(du -sh "$CARGO_TARGET_DIR" | cut -f1)"
    [ -z "$CROSS_DAEMON_PID" ] || disk+=", engine storage $(du -sh "$KILN_CROSS_HOME" | cut -f1)"

    local figures
    figures="install $install_s s, engine $engine_s s, image $image_s s ($image_state, $image_mb MB), tests: $(IFS=,; echo "${times[*]}" | sed 's/,/, /g'); disk: $disk"
    echo "cross: $figures"
    note "$figures"
}
