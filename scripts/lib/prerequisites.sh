# Sourced by the test scripts. `need COMMAND DEBIAN_PACKAGE WHAT_FOR` makes sure COMMAND exists:
# when missing, installs Debian's package where apt-get can be used (as root or through
# password-less sudo), and otherwise stops with what is missing and how to install it.
need() {
    local command=$1 package=$2 purpose=$3 sudo_=""
    command -v "$command" > /dev/null && return 0
    [ "$(id -u)" = 0 ] || sudo_="sudo -n"
    if command -v apt-get > /dev/null && { [ -z "$sudo_" ] || sudo -n true 2> /dev/null; }; then
        echo "installing Debian's $package (once), for $purpose" >&2
        $sudo_ apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo_ apt-get install -y -qq "$package" > /dev/null
        command -v "$command" > /dev/null && return 0
    fi
    echo "missing: \`$command\`, needed for $purpose." >&2
    echo "  install it, e.g. \`sudo apt-get install $package\` (Debian, Ubuntu) or \`brew install $package\` (macOS)," >&2
    echo "  then run the command again (README, \"Develop\", lists every prerequisite)." >&2
    return 1
}
