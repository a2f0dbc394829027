#!/bin/sh
# An "agent" that closes its stdin, then says a valid hello (protocol 1) and stays a moment: the
# host's next write (the package offer) meets a closed pipe — EPIPE, or a SIGPIPE that kills the
# host if it did not ignore it.
exec 0<&-
printf 'SOD2AGT\n\004\000\000\000\012\002\010\002'
sleep 1
