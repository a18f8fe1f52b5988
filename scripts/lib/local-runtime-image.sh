#!/usr/bin/env bash
# Usage: scripts/lib/local-runtime-image.sh   (prints the image's tag)
#
# The local stand-in for Lambda's `provided.al2023` runtime image, which `sam local` runs each
# function's bootstrap in (`--invoke-image`, with `--skip-pull-image`): AWS's image is pulled
# from a registry, and this one is made here from the files of the machine's own Debian
# packages. A minimal root file system: the C library and libgcc_s the bootstraps link against,
# `/bin/sh` (dash) and coreutils (SAM's emulation image runs `mv` and `chmod` in it), the CA
# bundle, and Lambda's folders (`/var/task`, `/var/runtime`, `/opt`, a writable `/tmp`).
# docs/aws.md, "sam local", says how it differs from AL2023 and why the bootstraps behave as
# on Lambda there.
#
# Tagged by a hash of this recipe and the packages' versions, so it is imported once and made
# again only when either changes.
set -euo pipefail
cd "$(dirname "$0")/../.."

# coreutils' own libraries with it (libselinux1, libacl1, libattr1, libpcre2-8-0, libgmp10).
packages=(libc6 libgcc-s1 dash coreutils libselinux1 libacl1 libattr1 libpcre2-8-0 libgmp10)
versions=$(dpkg-query -W -f '${Package}=${Version}\n' "${packages[@]}")
recipe=$( (cat "$0"; echo "$versions") | sha256sum | cut -c1-12)
tag="live-stream-hosting-api/provided-al2023-local:$recipe"
if docker image inspect "$tag" > /dev/null 2>&1; then
    echo "$tag"
    exit 0
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/runtime-image.XXXXXX")
trap 'rm -rf "$root"' EXIT
# A merged /usr, as Debian 12 and AL2023 both have: /bin, /lib, /lib64 and /sbin link into it.
mkdir -p "$root/usr/bin" "$root/usr/lib" "$root/usr/lib64" "$root/usr/sbin"
for dir in bin lib lib64 sbin; do
    ln -s "usr/$dir" "$root/$dir"
done
# Every file and link the packages installed, at its merged path.
dpkg-query -L "${packages[@]}" | sort -u | while read -r path; do
    # Folders (and the links to folders that a merged /usr makes) come with their files.
    [ -d "$path" ] && continue
    [ -e "$path" ] || [ -L "$path" ] || continue
    case "$path" in
        /bin/* | /lib/* | /lib64/* | /sbin/*) target="$root/usr$path" ;;
        *) target="$root$path" ;;
    esac
    mkdir -p "$(dirname "$target")"
    cp -a --no-dereference "$path" "$target"
done
# The bootstraps' TLS roots (they call AWS over HTTPS in Lambda).
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
    mkdir -p "$root/etc/ssl/certs"
    cp /etc/ssl/certs/ca-certificates.crt "$root/etc/ssl/certs/"
fi
mkdir -p "$root/var/task" "$root/var/runtime" "$root/opt" "$root/tmp" "$root/etc"
chmod 1777 "$root/tmp"
echo "root:x:0:0:root:/root:/bin/sh" > "$root/etc/passwd"
echo "root:x:0:" > "$root/etc/group"

tar -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/bin:/usr/bin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'WORKDIR /var/task' \
    - "$tag" > /dev/null
# Earlier recipes' images are of no further use.
docker images --format '{{.Repository}}:{{.Tag}}' "${tag%%:*}" | grep -vxF "$tag" |
    xargs -r docker rmi > /dev/null 2>&1 || true
echo "$tag"
