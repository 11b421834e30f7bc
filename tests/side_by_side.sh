#!/usr/bin/env bash
# `make test`: runs each NAME=COMMAND at once; the last in the foreground (its output live), the others
# into OUTPUT_DIR/NAME.out, printed once all are done; then each one's status, time and CPU time (user and
# system, of all its processes that ended). Fails if any failed.
#   bash tests/side_by_side.sh OUTPUT_DIR NAME=COMMAND... NAME=COMMAND
set -u
out=$1; shift
mkdir -p "$out"
start=$(date +%s)
names=(); pids=()
while [ $# -gt 1 ]; do
  name=${1%%=*}; command=${1#*=}; shift
  ( s=$(date +%s); bash -c "$command" >"$out/$name.out" 2>&1; rc=$?
    times >"$out/$name.times"; echo "$rc $(( $(date +%s) - s )) $(tail -1 "$out/$name.times")" >"$out/$name.status" ) &
  names+=("$name"); pids+=($!)
done
last=${1%%=*}; bash -c "${1#*=}"; last_rc=$?; last_s=$(( $(date +%s) - start )); times >"$out/$last.times"
last_cpu=$(tail -1 "$out/$last.times")
failed=$(( last_rc != 0 ))
for i in "${!names[@]}"; do
  wait "${pids[$i]}"
  echo; echo "=== ${names[$i]} ==="; cat "$out/${names[$i]}.out"
done
echo
for name in "${names[@]}"; do
  read -r rc seconds user system <"$out/$name.status"
  echo "$name: exit $rc after $seconds s (CPU: user $user, system $system)"; [ "$rc" -eq 0 ] || failed=1
done
echo "$last: exit $last_rc after $last_s s (CPU: user ${last_cpu% *}, system ${last_cpu#* }); all done after $(( $(date +%s) - start )) s"
exit $failed
