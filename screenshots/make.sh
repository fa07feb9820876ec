#!/usr/bin/env bash
# Regenerates the README's screenshots from specs/ with `pooltui render` (headless, deterministic).
set -euo pipefail
cd "$(dirname "$0")/.."
r() { python -m pooltui render "$@"; }
r specs/vllm_v1.pool        --event 53   -o screenshots/vllm_v1_preempt.svg
r specs/preempt_lifo.pool   --event 255  -o screenshots/preempt_lifo.svg
r specs/preempt_none.pool   --event 255  -o screenshots/preempt_none_grow_wait.svg
r specs/prefix_cache.pool   --event 187  -o screenshots/prefix_cache_evict.svg
r specs/spill_tiers.pool    --event 58   -o screenshots/spill_tiers.svg
r specs/data_parallel.pool  --event 56   -o screenshots/data_parallel.svg
r specs/azure_conv.pool     --time 600   -o screenshots/azure_conv_600s.svg
