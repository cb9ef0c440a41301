#!/bin/sh
# An "ssh" that stays on this machine: local_rsh.sh HOST COMMAND... runs
# COMMAND as one shell line here, as ssh would run it on HOST. With it,
# mpiexec --launcher ssh treats every named host as remote (PMI over its
# TCP port, the secret through stdin) without an sshd or root.
shift
exec sh -c "$*"
