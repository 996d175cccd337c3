#!/usr/bin/env bash
# Install Portico into .venv and launch the desktop app. Arguments go to `portico`.
set -euo pipefail
cd "$(dirname "$0")/.."

# The system libraries Qt's X11 platform plugin needs (Debian/Ubuntu names; the same list
# as briefcase.toml's Debian system_runtime_requires and the README). Installed only when
# missing, only with apt-get and as root; otherwise the command to run is printed.
QT_RUNTIME_DEBIAN="libxcb-cursor0 libxcb-icccm4 libxcb-keysyms1 libxcb-image0 libxcb-render-util0 libxcb-shape0 libxcb-randr0 libxcb-xkb1 libxkbcommon-x11-0 libx11-xcb1 libegl1 libgl1 libfontconfig1 libdbus-1-3"
# A font with the chat's symbols (the .deb recommends it; installers/build.py RECOMMENDS).
FONTS_DEBIAN="fonts-symbola"
if [ "$#" -eq 0 ] && [ "$(uname -s)" = Linux ] && command -v dpkg-query >/dev/null 2>&1; then
  missing=""
  for pkg in $QT_RUNTIME_DEBIAN $FONTS_DEBIAN; do
    dpkg-query -W -f '${Status}' "$pkg" 2>/dev/null | grep -q "ok installed" || missing="$missing $pkg"
  done
  if [ -n "$missing" ]; then
    if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "Installing the libraries and the font the desktop app needs:$missing"
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null ||
        { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing >/dev/null; }
    else
      echo "The desktop app needs these system packages:$missing" >&2
      echo "Install them with: sudo apt-get install -y$missing" >&2
    fi
  fi
fi

PYTHON=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PYTHON" -m venv .venv
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e .
exec .venv/bin/portico "$@"
