#!/bin/sh
# The real agent with a 64 KiB file-size limit: a "device" whose disk is full for any package.
ulimit -f 64
exec "${SOD2_REAL_AGENT:?}" "$@"
