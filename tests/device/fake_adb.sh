#!/bin/sh
# A stand-in for adb, for tests: the subset of adb's command line sod2 uses, with "devices" that
# are folders under $FAKE_ADB_ROOT. $FAKE_ADB_ROOT/devices lists one "SERIAL STATE [MODEL]" per
# line; /data/... on a device is $FAKE_ADB_ROOT/SERIAL/data/...; `shell` runs the command here
# (the real agent, in the device's folder). Every call is appended to $FAKE_ADB_ROOT/log.
root="${FAKE_ADB_ROOT:?FAKE_ADB_ROOT is not set}"
echo "$*" >> "$root/log"
serial=""
if [ "$1" = "-s" ]; then serial="$2"; shift 2; fi

if [ "$1" = "devices" ]; then
  echo "List of devices attached"
  if [ -f "$root/devices" ]; then
    while read -r s st m; do
      [ -z "$s" ] && continue
      if [ -n "$m" ]; then
        printf '%s\t%s usb:1-1 product:fake model:%s device:fake transport_id:1\n' "$s" "$st" "$m"
      else
        printf '%s\t%s\n' "$s" "$st"
      fi
    done < "$root/devices"
  fi
  echo
  exit 0
fi

if [ -z "$serial" ]; then
  echo "adb: error: sod2 must always pass -s SERIAL" >&2
  exit 1
fi
if ! grep -q "^$serial device" "$root/devices" 2>/dev/null; then
  echo "adb: device '$serial' not found" >&2
  exit 1
fi
dev="$root/$serial"
mkdir -p "$dev/data/local/tmp"

case "$1" in
  push)
    dst="$dev$3"
    if ! cp "$2" "$dst" 2>/dev/null; then
      echo "adb: error: failed to copy '$2' to '$3'" >&2
      exit 1
    fi
    echo "$2: 1 file pushed, 0 skipped."
    ;;
  shell)
    shift
    [ "$1" = "-T" ] && shift
    # Device paths to the device's folder; everything else as given.
    n=$#
    for a in "$@"; do
      case "$a" in /data/*) a="$dev$a" ;; esac
      set -- "$@" "$a"
    done
    shift "$n"
    exec "$@"
    ;;
  *)
    echo "fake adb: unsupported command: $*" >&2
    exit 1
    ;;
esac
