#!/bin/bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# Records the signals it gets and ignores SIGTERM, so only SIGKILL ends it.
trap 'echo TERM >> /output/signals' TERM
trap 'echo HUP >> /output/signals' HUP
echo started > /output/signals
while :; do sleep 0.1; done
