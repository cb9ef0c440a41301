#!/usr/bin/env bash
# Runs adi3 programs under a single-node Slurm started here: munged,
# slurmctld and slurmd with a generated configuration in a temporary
# directory (own ports, own munge socket and key; nothing system-wide is
# touched), then srun --mpi=pmi2 and --mpi=pmix on the bootstrap test and
# the C suites. Everything it started is stopped and removed on exit.
#
#   slurm.sh BIN_DIR [mpi_test_NAME:N ...]
#
# Exits 0 after every run passed; prints "SKIPPED: <reason>" and exits 0
# when Slurm cannot run here (not root, packages not installable, daemons
# do not start), so CI without Slurm stays green; ADI3_SLURM_REQUIRED=1
# turns a skip into a failure. With ADI3_SLURM_INSTALL=1 it installs
# slurmd, slurmctld, slurm-client and munge with apt-get when they are
# missing (root only); otherwise missing packages are a skip, so CI stays light.
set -uo pipefail
bin=${1:?usage: slurm.sh BIN_DIR [mpi_test_NAME:N ...]}
shift
tests=("$@")

skip() {
  echo "SKIPPED: $*"
  [ "${ADI3_SLURM_REQUIRED:-0}" = 1 ] && exit 1
  exit 0
}

[ "$(id -u)" -eq 0 ] || skip "needs root to start slurmd and munged"
need=()
for p in slurmd slurmctld slurm-client munge; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  [ "${ADI3_SLURM_INSTALL:-0}" = 1 ] || skip "${need[*]} not installed (ADI3_SLURM_INSTALL=1 installs them)"
  echo "slurm.sh: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1 ||
    { apt-get update -qq >/dev/null 2>&1 &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null 2>&1; } ||
    skip "cannot install ${need[*]}"
fi

dir=$(mktemp -d /tmp/adi3-slurm.XXXXXX)
cleanup() {
  for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -s "$f" ] && kill "$(cat "$f")" 2>/dev/null
  done
  sleep 0.5
  for f in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    [ -s "$f" ] && kill -9 "$(cat "$f")" 2>/dev/null
  done
  [ "${ADI3_SLURM_KEEP:-0}" = 1 ] && echo "slurm.sh: kept $dir" || rm -rf "$dir"
}
trap cleanup EXIT
mkdir -p "$dir/state" "$dir/spool"

# munge: a fresh key and a private socket.
dd if=/dev/urandom of="$dir/munge.key" bs=1 count=1024 2>/dev/null
chmod 600 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munge.seed" || skip "munged does not start: $(cat "$dir/munged.log" 2>/dev/null)"

host=$(hostname -s)
node=$(slurmd -C 2>/dev/null | head -1 | sed 's/ UpTime=.*//')
[ -n "$node" ] || skip "slurmd -C cannot describe this node"
port=$((20000 + RANDOM % 20000))
# Job ids start at a random point: the pmix plugin keeps its directory
# (/tmp/spmix_appdir_UID_JOB.STEP) when a run is killed, and a later run
# reaching the same job id then fails to launch that step.
first_job=$((1000 + RANDOM * 1000 + RANDOM % 1000))
cat >"$dir/slurm.conf" <<CONF
ClusterName=adi3test
FirstJobId=$first_job
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
$node State=UNKNOWN
PartitionName=adi3 Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE
CONF
export SLURM_CONF=$dir/slurm.conf
slurmctld -f "$SLURM_CONF" || skip "slurmctld does not start: $(tail -3 "$dir/slurmctld.log" 2>/dev/null)"
slurmd -f "$SLURM_CONF" || skip "slurmd does not start: $(tail -3 "$dir/slurmd.log" 2>/dev/null)"
for _ in $(seq 1 50); do
  sinfo -h -o %T 2>/dev/null | grep -qE "idle|mixed" && break
  sleep 0.2
done
sinfo -h -o %T 2>/dev/null | grep -qE "idle|mixed" ||
  skip "the node does not come up: $(sinfo 2>&1 | tail -2); $(tail -3 "$dir/slurmd.log" 2>/dev/null)"
echo "slurm.sh: single-node Slurm $(sinfo -V) up on $host ($node)"

fails=0
run() {  # label, srun arguments...
  local label=$1
  shift
  local out
  out=$(timeout 120 srun --overcommit --time=2 "$@" 2>&1)
  local rc=$?
  if [ $rc -ne 0 ] || grep -qE "check failed|Found [0-9]+ errors" <<<"$out"; then
    echo "FAIL [$label] (exit $rc): srun $*"
    echo "$out" | tail -20
    fails=$((fails + 1))
  else
    echo "ok   [$label] srun $* | $(grep -E "boot_test:|No Errors" <<<"$out" | head -1)"
  fi
}

for mpi in pmi2 pmix; do
  wire=$mpi
  run "$mpi boot" --mpi=$mpi -n 3 "$bin/boot_test" --wire "$wire" --nodes 1
  for t in "${tests[@]}"; do
    name=${t%%:*}
    n=${t##*:}
    ADI3_PMI=$wire run "$mpi $name" --mpi=$mpi -n "$n" "$bin/mpi_test_$name"
  done
done
# Slurm's pmi2 plugin also serves PMI-1 clients.
ADI3_PMI=pmi1 run "pmi2 plugin, PMI-1 client" --mpi=pmi2 -n 3 "$bin/boot_test" --wire pmi1 --nodes 1
# An abort stops the whole job, with the reason, under each plugin. The
# pmi2 plugin of Slurm 22.05 receives the abort but its request to cancel
# the step does not reach slurmctld here, so that run adds
# --kill-on-bad-exit (the aborting rank exits with the abort code).
for mpi in pmi2 pmix; do
  kill_opt=()
  [ $mpi = pmi2 ] && kill_opt=(--kill-on-bad-exit=1)
  out=$(timeout 20 srun --overcommit --time=1 "${kill_opt[@]}" --mpi=$mpi -n 3 "$bin/boot_test" --abort 2>&1)
  rc=$?
  if [ $rc -ne 0 ] && grep -q "rank 2 aborting with code 5" <<<"$out"; then
    echo "ok   [$mpi abort] srun ${kill_opt[*]} --mpi=$mpi -n 3 boot_test --abort: exit $rc"
  else
    echo "FAIL [$mpi abort] exit $rc"
    echo "$out" | tail -10
    fails=$((fails + 1))
  fi
done
[ $fails -eq 0 ] && echo "slurm.sh: all runs passed" || echo "slurm.sh: $fails run(s) failed"
[ $fails -eq 0 ]
