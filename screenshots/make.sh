#!/usr/bin/env bash
# Regenerates the README's screenshots from specs/ with `pooltui render` (headless, deterministic).
set -euo pipefail
cd "$(dirname "$0")/.."
r() { python -m pooltui render "$@"; }
r specs/vllm_v1.pool            --event 53                        -o screenshots/preemption.svg
r specs/ascend_lanes.pool       --event 511                       -o screenshots/queue_aging.svg
r specs/spill_tiers.pool        --event 58                        -o screenshots/spill.svg
r specs/shared_prefix.pool      --event 59 --size 120x36          -o screenshots/shared_prefix.svg
r specs/offload.pool            --event 5891                      -o screenshots/reload.svg
r specs/evict_by.pool           --break "evict class=premium_user" -o screenshots/breakpoint.svg
r specs/halts/check_fails.pool  --event 37                        -o screenshots/invariant_halt.svg
r specs/vllm_v1.pool            --event 53 --size 80x24           -o screenshots/narrow.svg
r specs/vllm_v1.pool            --event 1300                      -o screenshots/timeline.svg
