#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The main job: build 6.12 with the mmext queue, boot it, and run the feature tour in it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

"$MMEXT_ROOT/scripts/deps.sh"
"$MMEXT_ROOT/scripts/kernel.sh" prepare
"$MMEXT_ROOT/scripts/kernel.sh" build patched
make -s -C "$MMEXT_ROOT/examples"
"$MMEXT_ROOT/scripts/vm.sh" -k patched -t 600 -- mmext-tour
