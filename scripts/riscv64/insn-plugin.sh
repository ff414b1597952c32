#!/usr/bin/env bash
# Build qemu's instruction-counting TCG plugin (tests/plugin/insn.c in qemu
# 7.2) from Debian's own qemu source package, for the qemu-user installed
# here: `apt-get source` through a private apt configuration (deb-src of
# this machine's Debian release, signature-checked), only the plugin
# header and insn.c are unpacked, and the .so is built against them.
# Usage: insn-plugin.sh [out.so]   (default: .data/riscv64/libinsn.so)
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$here/.data/riscv64/libinsn.so}
work=$here/.data/riscv64/qemu-src
keyring=/usr/share/keyrings/debian-archive-keyring.gpg

if [ -s "$out" ]; then echo "plugin ready: $out"; exit 0; fi
dpkg -s libglib2.0-dev >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq libglib2.0-dev pkg-config >/dev/null; }
version=$(dpkg-query -W -f '${source:Version}' qemu-user)
. /etc/os-release
mkdir -p "$work"/{lists/partial,cache/archives/partial,etc/preferences.d,etc/apt.conf.d}
: > "$work/status"
cat > "$work/etc/sources.list" <<SRC
deb-src [signed-by=$keyring] http://deb.debian.org/debian $VERSION_CODENAME main
deb-src [signed-by=$keyring] http://deb.debian.org/debian $VERSION_CODENAME-updates main
deb-src [signed-by=$keyring] http://deb.debian.org/debian-security $VERSION_CODENAME-security main
SRC
apt_opts=(
  -o "Dir::State=$work" -o "Dir::State::Lists=$work/lists" -o "Dir::State::status=$work/status"
  -o "Dir::Cache=$work/cache" -o "Dir::Etc::SourceList=$work/etc/sources.list"
  -o "Dir::Etc::SourceParts=-" -o "Dir::Etc::Parts=$work/etc/apt.conf.d" -o "Debug::NoLocking=1"
  -o "APT::Get::AllowUnauthenticated=false"
)
apt-get "${apt_opts[@]}" update -qq
cd "$work"
echo "downloading qemu $version sources (Debian)"
apt-get "${apt_opts[@]}" source --download-only -qq "qemu=$version"
tarball=$(ls qemu_*.orig.tar.* | head -1)
# The header and the plugin only; Debian's patches do not touch them.
tar -xf "$tarball" --wildcards --no-anchored 'include/qemu/qemu-plugin.h' 'tests/plugin/insn.c'
src=$(dirname "$(find . -path '*tests/plugin/insn.c' | head -1)")
inc=$(dirname "$(find . -path '*include/qemu/qemu-plugin.h' | head -1)")
mkdir -p "$(dirname "$out")"
gcc -O2 -shared -fPIC -o "$out" -I"$inc" $(pkg-config --cflags glib-2.0) "$src/insn.c"
echo "plugin ready: $out"
