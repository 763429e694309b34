#!/bin/sh
# SPDX-License-Identifier: LGPL-2.1-or-later
# Sleeps until it is stopped; exits cleanly on SIGTERM.
trap 'exit 0' TERM
echo started > /output/started
while :; do sleep 0.1; done
