#!/usr/bin/env bash
# Download Debian trixie's riscv64 `nodejs` (and everything it depends on)
# with a private, signature-checked apt configuration, and unpack the
# packages into a folder, without installing anything on this machine.
# qemu-riscv64 -L <folder> <folder>/usr/bin/node then runs real riscv64
# Node.js.   Usage: rootfs.sh [folder]   (default: .data/riscv64/root)
# DEB_ARCH=arm64 does the same for arm64 (qemu-aarch64; default .data/arm64/root).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
arch=${DEB_ARCH:-riscv64}
case $arch in riscv64) qemu=qemu-riscv64 ;; arm64) qemu=qemu-aarch64 ;; *) echo "unsupported DEB_ARCH $arch"; exit 2 ;; esac
root=${1:-$here/.data/$arch/root}
work=$here/.data/$arch/apt
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [ -x "$root/usr/bin/node" ]; then echo "$arch root ready: $root"; exit 0; fi
[ -r "$keyring" ] || { echo "missing $keyring (apt-get install debian-archive-keyring)"; exit 1; }

mkdir -p "$work"/{lists/partial,cache/archives/partial,etc/preferences.d,etc/apt.conf.d} "$root"
: > "$work/status"
cat > "$work/etc/sources.list" <<SRC
deb [arch=$arch signed-by=$keyring] http://deb.debian.org/debian trixie main
SRC
apt_opts=(
  -o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
  -o "Dir::State=$work" -o "Dir::State::Lists=$work/lists" -o "Dir::State::status=$work/status"
  -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/etc/sources.list"
  -o "Dir::Etc::SourceParts=-" -o "Dir::Etc::Preferences=$work/etc/preferences"
  -o "Dir::Etc::PreferencesParts=$work/etc/preferences.d"
  -o "Dir::Etc::Parts=$work/etc/apt.conf.d" -o "Debug::NoLocking=1"
  -o "APT::Get::AllowUnauthenticated=false" -o "APT::Install-Recommends=false"
)
echo "apt update (trixie, $arch)"
apt-get "${apt_opts[@]}" update -qq
echo "downloading nodejs and its dependencies"
apt-get "${apt_opts[@]}" install -y -qq --download-only nodejs >/dev/null
for deb in "$work"/cache/archives/*.deb; do dpkg-deb -x "$deb" "$root"; done
# trixie has a merged /usr; the loader is looked up at /lib/ld-linux-... under -L.
[ -e "$root/lib" ] || ln -s usr/lib "$root/lib"
$qemu -L "$root" "$root/usr/bin/node" -e 'console.log("node", process.version, process.arch)'
echo "$arch root ready: $root ($(ls "$work"/cache/archives/*.deb | wc -l) packages)"
