#!/bin/bash
# plugin_test.sh MPIEXEC SHM_P2P ADI3_INFO BAD_PLUGIN_DIR: how channels are
# chosen and what happens when the choice is wrong.
set -u
mpiexec=$1 p2p=$2 info=$3 baddir=$4
fail() { echo "FAIL: $*"; exit 1; }
run() { out=$("$@" 2>&1); status=$?; }

# An unknown channel: the job stops at once, naming what is available.
run env ADI3_CHANNEL=nosuch "$mpiexec" -n 2 --timeout 20 "$p2p" self
echo "$out"
[ "$status" -ne 0 ] || fail "an unknown channel did not fail the job"
echo "$out" | grep -q "no channel named 'nosuch'" || fail "no clear message for an unknown channel"
echo "$out" | grep -q "  shm  (" || fail "the message does not list shm"
echo "$out" | grep -q "  tcp  (" || fail "the message does not list tcp"

# inproc is built in but cannot connect processes.
run env ADI3_CHANNEL=inproc "$mpiexec" -n 2 --timeout 20 "$p2p" self
[ "$status" -ne 0 ] && echo "$out" | grep -q "cannot connect processes" || fail "inproc accepted for processes: $out"

# A plugin of another ABI version is refused, saying so.
run env ADI3_CHANNEL=badabi ADI3_PLUGIN_PATH="$baddir" "$mpiexec" -n 2 --timeout 20 "$p2p" self
echo "$out" | grep -q "built for channel ABI version" || fail "no ABI message: $out"
[ "$status" -ne 0 ] || fail "a plugin of another ABI was used"

# Without a launcher (a singleton) the error is thrown, not a PMI abort.
run env ADI3_CHANNEL=nosuch "$p2p" self
[ "$status" -ne 0 ] && echo "$out" | grep -q "no channel named 'nosuch'" || fail "singleton: $out"

# A singleton gets a one-rank job of the chosen channel.
for ch in shm tcp; do
  run env ADI3_CHANNEL=$ch "$p2p" self
  echo "$out" | grep -q "self: passed on 1 ranks (channel $ch" || fail "singleton over $ch: $out"
done

# adi3_info lists both plugins, their native types and their settings,
# and reports the unloadable one in ADI3_PLUGIN_PATH.
run env ADI3_PLUGIN_PATH="$baddir" "$info"
[ "$status" -eq 0 ] || fail "adi3_info failed: $out"
for want in "shm      processes on one host" "tcp      processes on any hosts" "native: point-to-point, active RMA" \
            "ADI3_SHM_CMA_MIN" "ADI3_TCP_ADDRESS" "ADI3_EAGER_LIMIT" "ADI3_INPROC_RING_BYTES" "ADI3_PLUGIN_PATH" \
            "Not loadable: .*badabi.*ABI version"; do
  echo "$out" | grep -q "$want" || fail "adi3_info does not show '$want'"
done
echo PASS
