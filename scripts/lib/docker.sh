# Sourced: `ensure_docker LOG` makes a Docker engine answer for `sam local`. Installs Debian's
# docker.io where `dockerd` is missing (as root, or through sudo), and starts `dockerd` where
# no engine answers, its output to LOG; `stop_docker` stops the engine only if this shell
# started it. `docker_unavailable` holds why, when the engine cannot be had (then
# `ensure_docker` returns 1 and starts nothing).

docker_started_pid=
docker_unavailable=

docker_answers() { docker info > /dev/null 2>&1; }

ensure_docker() {
    local log=$1
    if command -v docker > /dev/null && docker_answers; then
        return 0
    fi
    if ! command -v dockerd > /dev/null || ! command -v docker > /dev/null; then
        local sudo=
        [ "$(id -u)" = 0 ] || sudo=sudo
        if command -v apt-get > /dev/null; then
            echo "installing Docker from Debian's packages (docker.io)"
            DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq docker.io > "$log" 2>&1 ||
                { docker_unavailable="apt-get install docker.io failed (see $log)"; return 1; }
        else
            docker_unavailable="no dockerd, and no apt-get to install Debian's docker.io"
            return 1
        fi
    fi
    if [ "$(id -u)" != 0 ]; then
        docker_unavailable="no Docker engine answers, and only root starts dockerd here"
        return 1
    fi
    echo "starting dockerd (log: $log)"
    dockerd > "$log" 2>&1 &
    docker_started_pid=$!
    for _ in $(seq 1 100); do
        docker_answers && return 0
        kill -0 "$docker_started_pid" 2> /dev/null || break
        sleep 0.2
    done
    docker_unavailable="dockerd did not start (see $log)"
    stop_docker
    return 1
}

stop_docker() {
    if [ -n "$docker_started_pid" ]; then
        kill "$docker_started_pid" 2> /dev/null || true
        wait "$docker_started_pid" 2> /dev/null || true
        docker_started_pid=
    fi
}

# The host's address on Docker's default bridge: what a container reaches the host's
# emulators at (`host.docker.internal`, mapped to Docker's `host-gateway`).
docker_bridge_gateway() {
    local gateway bridge
    gateway=$(docker network inspect bridge -f '{{(index .IPAM.Config 0).Gateway}}' 2> /dev/null || true)
    # Docker leaves the default bridge's gateway out of its IPAM settings: the bridge
    # interface's own address is the gateway.
    if [ -z "$gateway" ]; then
        bridge=$(docker network inspect bridge -f '{{index .Options "com.docker.network.bridge.name"}}')
        gateway=$(ip -4 -o addr show dev "${bridge:-docker0}" | awk '{print $4}' | cut -d/ -f1 | head -n 1)
    fi
    [ -n "$gateway" ] || { echo "no address on Docker's bridge" >&2; return 1; }
    echo "$gateway"
}
