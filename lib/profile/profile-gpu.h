/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "unit-settings.h"

/* A part of the profile below lib/profile/profile.c (which, like the sidecar runtime, calls
 * it): it includes only the settings list and the start check, never profile.h. */

/* GPUs= (cloister.role(5)): DeviceAllow= and a read-only bind ("-") into the private /dev for each NVIDIA
 * node (/dev/nvidia<N>, /dev/nvidiactl, /dev/nvidia-uvm, optionally /dev/nvidia-uvm-tools;
 * with "all" also the /dev/dri/renderD* render nodes present now), and for each required
 * node a start check in the sandbox, so that a missing one fails the start naming it.
 * `source` is for warnings. */
int profile_add_gpus(UnitSettings *s, const char *gpus, const char *source);
