#!/bin/sh
# An "rsh" for MPICH's Hydra whose hosts are network namespaces:
#   netns_rsh.sh HOST COMMAND...   runs COMMAND inside namespace HOST.
host=$1
shift
exec ip netns exec "$host" sh -c "$*"
