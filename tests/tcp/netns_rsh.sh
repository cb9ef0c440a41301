#!/bin/sh
# An "rsh" for MPICH's Hydra whose hosts are network namespaces:
#   netns_rsh.sh HOST COMMAND...   runs COMMAND inside namespace HOST,
# in a UTS namespace of its own whose hostname is HOST: launchers and
# libraries that tell hosts apart by hostname (MPICH's and Open MPI's
# shared-memory detection) must see two hosts, as on real machines.
host=$1
shift
case $host in
  *[!A-Za-z0-9._-]*) echo "netns_rsh.sh: bad host name '$host'" >&2; exit 2 ;;
esac
exec ip netns exec "$host" unshare --uts sh -c "hostname $host && exec sh -c \"\$0\"" "$*"
