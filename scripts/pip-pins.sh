# install_pip_pins LABEL PIN...: installs the PyPI packages PIN
# (name==version) that are missing or at another version, with --no-deps
# (see the callers for why), and says which; as another user than root it
# prints the pip command instead and fails. The install's seconds go to
# the file $KILN_NOTE_FILE when it is set. Sourced by
# scripts/oracles.sh and scripts/convert-fixtures.sh.

install_pip_pins() {
    local label="$1" missing=() pin name want have
    shift
    for pin in "$@"; do
        name="${pin%%==*}"
        want="${pin#*==}"
        have="$(python3 -c 'import importlib.metadata as m, sys; print(m.version(sys.argv[1]))' "$name" 2>/dev/null || true)"
        [ "$have" = "$want" ] || missing+=("$pin")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        echo "$label: pinned PyPI packages present ($*)"
        return 0
    fi
    local command=(python3 -m pip install --no-deps --disable-pip-version-check "${missing[@]}")
    if [ "$(id -u)" -ne 0 ]; then
        echo "$label: missing ${missing[*]}; run as root:" >&2
        echo "    ${command[*]}" >&2
        return 1
    fi
    echo "$label: ${command[*]}"
    local start=$SECONDS
    "${command[@]}"
    # Under scripts/test.sh the install's seconds go into the stage's
    # summary lines, beside setup.sh's steps.
    [ -z "${KILN_NOTE_FILE:-}" ] || echo "install: pip ${missing[*]} in $((SECONDS - start)) s" >>"$KILN_NOTE_FILE"
}
