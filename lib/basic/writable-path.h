/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Host paths a role may mount into its sandbox. Returns NULL or a static reason. */

/* Any mount source or target: not "/", not under the kernel's or the runtime's trees. */
const char *mount_path_check(const char *path);

/* Writable mounts (Output=, a project's Workspace=): also not the OS itself. */
const char *writable_path_check(const char *path);

/* ReadOnlyMount= targets: also none of the sandbox's own places. */
const char *mount_target_check(const char *path);
