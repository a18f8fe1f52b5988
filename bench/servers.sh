# Helpers of the load benchmarks (bench/throughput.sh, bench/per_request.sh), sourced.

# A port nothing listens on.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits until the server on PORT answers the discovery route (a server under valgrind takes
# minutes to load its seed).
wait_for() { # port
    for _ in $(seq 1 6000); do
        python3 -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:$1/api/v1/', timeout=5)" 2>/dev/null && return
        sleep 0.2
    done
}
