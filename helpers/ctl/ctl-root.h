/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <sys/types.h>

/* --root=DIR: configuration comes from DIR/$sysconfdir/cloister:DIR/run/cloister:
 * DIR/usr/local/lib/cloister:DIR/$prefix/lib/cloister (the build's directories) and units from systemd's search path below
 * DIR, unless $CLOISTER_CONFIG_PATH / $SYSTEMD_UNIT_PATH are set (those win: they name the
 * directories exactly). Host paths that cloisterctl checks (sockets, mount sources, the
 * dependency cache) are looked up below DIR too. Call once, before any verb. */
int ctl_root_apply(const char *root);

/* The host path `path` as seen under --root (a new string; `path` itself without --root). */
char *ctl_root_path(const char *path);

/* Who owns the system's /: root, or with --root=DIR the owner of DIR (an image an
 * unprivileged packager builds is theirs, as the live / is root's). */
uid_t ctl_root_owner(void);

/* The root, or NULL. */
const char *ctl_root(void);
