#!/usr/bin/env bash
# mpiexec --launcher ssh against a real OpenSSH server: in each of the two
# "hosts" of hosts_test.sh --shell (HOST_A, HOST_B) an sshd of its own
# listens on the namespace's address, with a host key and a user key made
# here (public-key login only, the host key checked against a known_hosts
# file made here too). The job is then started by ssh exactly as on real
# machines: one remote shell command per rank, PMI over TCP with the job
# secret on the rank's stdin.
#   hosts_test.sh --shell bash sshd_test.sh [--want REGEX] MPIEXEC PROGRAM [ARGS...]
# Skips (77) with the reason when sshd or the keys cannot be had or sshd
# does not start; the sshds and keys are removed on exit.
set -uo pipefail
wants=()
while [ "${1:-}" = --want ]; do
  wants+=("$2")
  shift 2
done
mpiexec=$1
shift
skip() { echo "SKIP: $*"; exit 77; }
: "${HOST_A:?run under hosts_test.sh --shell}"
sshd=$(command -v sshd || echo /usr/sbin/sshd)
[ -x "$sshd" ] || skip "sshd is not installed (Debian: openssh-server)"
command -v ssh >/dev/null && command -v ssh-keygen >/dev/null || skip "ssh and ssh-keygen are not installed (openssh-client)"
dir=$(mktemp -d /tmp/adi3-sshd.XXXXXX)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP
ssh-keygen -q -t ed25519 -N '' -C adi3-test-host -f "$dir/host_key" || skip "ssh-keygen cannot make a host key"
ssh-keygen -q -t ed25519 -N '' -C adi3-test-user -f "$dir/user_key" || skip "ssh-keygen cannot make a user key"
cp "$dir/user_key.pub" "$dir/authorized_keys"
chmod 600 "$dir/authorized_keys"
# sshd's privilege separation needs its empty directory.
mkdir -p /run/sshd 2>/dev/null
user=$(id -un)
hosts=()
for ns in "$HOST_A" "$HOST_B"; do
  ip=$(ip -n "$ns" -4 -o addr show eth0 | awk '{ sub("/.*", "", $4); print $4 }')
  [ -n "$ip" ] || skip "namespace $ns has no IPv4 address on eth0"
  cat >"$dir/sshd_config.$ns" <<EOF
ListenAddress $ip
Port 22
HostKey $dir/host_key
PidFile none
AuthorizedKeysFile $dir/authorized_keys
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
AllowUsers $user
StrictModes no
UsePAM no
LogLevel ERROR
EOF
  "$sshd" -t -f "$dir/sshd_config.$ns" 2>"$dir/check.$ns" || skip "sshd rejects its test configuration: $(head -3 "$dir/check.$ns")"
  ip netns exec "$ns" "$sshd" -D -e -f "$dir/sshd_config.$ns" 2>>"$dir/sshd.$ns.log" &
  pids+=($!)
  echo "$ip $(cut -d' ' -f1,2 "$dir/host_key.pub")" >>"$dir/known_hosts"
  hosts+=("$ip")
done
ssh_cmd="ssh -x -o BatchMode=yes -o IdentitiesOnly=yes -i $dir/user_key -o StrictHostKeyChecking=yes
  -o UserKnownHostsFile=$dir/known_hosts -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=5 -l $user"
for ip in "${hosts[@]}"; do
  up=0
  for _ in $(seq 1 50); do
    if $ssh_cmd "$ip" true 2>"$dir/probe"; then up=1; break; fi
    sleep 0.1
  done
  [ $up = 1 ] || skip "no ssh login to the test sshd at $ip: $(tail -2 "$dir/probe") $(tail -3 "$dir"/sshd.*.log)"
done
echo "sshd_test: real sshd on ${hosts[*]}, logging in with a key made for this test"
out=$("$mpiexec" -n 4 --hosts "${hosts[0]}:2,${hosts[1]}:2" --launcher ssh --launcher-exec "$ssh_cmd" \
  --iface "$HOST_BRIDGE" --timeout 120 "$@" 2>&1)
status=$?
echo "$out"
for w in "${wants[@]}"; do
  grep -Eq -- "$w" <<<"$out" || { echo "FAIL: the output does not match: $w"; exit 1; }
done
exit $status
