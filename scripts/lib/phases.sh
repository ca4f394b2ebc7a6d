# Times the phases of a script: `phase NAME` ends the one before and starts NAME; `phase_end` ends the last;
# `phase_summary` prints one line with each phase's time. Sourced by scripts/test and scripts/check-long.
phase_names=()
phase_seconds=()
phase_started=""
phase_end() {
  if [ -n "$phase_started" ]; then
    phase_seconds+=($(( $(date +%s) - phase_started )))
    phase_started=""
  fi
}
phase() {
  phase_end
  phase_names+=("$1")
  phase_started=$(date +%s)
}
phase_summary() {
  phase_end
  local line="phases:" i
  for i in "${!phase_names[@]}"; do
    line="$line ${phase_names[$i]} $(( phase_seconds[i] / 60 ))m$(( phase_seconds[i] % 60 ))s;"
  done
  echo "${line%;}"
}
