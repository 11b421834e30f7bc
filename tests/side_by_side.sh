#!/usr/bin/env bash
# `make test`: runs each NAME=COMMAND at once; the last in the foreground (its output live), the others
# into OUTPUT_DIR/NAME.out, printed once all are done; then each one's status and time. Fails if any failed.
#   bash tests/side_by_side.sh OUTPUT_DIR NAME=COMMAND... NAME=COMMAND
set -u
out=$1; shift
mkdir -p "$out"
start=$(date +%s)
names=(); pids=()
while [ $# -gt 1 ]; do
  name=${1%%=*}; command=${1#*=}; shift
  ( s=$(date +%s); bash -c "$command" >"$out/$name.out" 2>&1; rc=$?; echo "$rc $(( $(date +%s) - s ))" >"$out/$name.status" ) &
  names+=("$name"); pids+=($!)
done
last=${1%%=*}; bash -c "${1#*=}"; last_rc=$?; last_s=$(( $(date +%s) - start ))
failed=$(( last_rc != 0 ))
for i in "${!names[@]}"; do
  wait "${pids[$i]}"
  echo; echo "=== ${names[$i]} ==="; cat "$out/${names[$i]}.out"
done
echo
for name in "${names[@]}"; do
  read -r rc seconds <"$out/$name.status"
  echo "$name: exit $rc after $seconds s"; [ "$rc" -eq 0 ] || failed=1
done
echo "$last: exit $last_rc after $last_s s; all done after $(( $(date +%s) - start )) s"
exit $failed
