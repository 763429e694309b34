/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdio.h>

#include "cloister-conf.h"
#include "sandbox-keys.h"

/* A warm runtime behind a socket (cloister.sidecar(5)): sidecars/<name>.sidecar. */
typedef struct Sidecar {
        char *name;
        char *path;

        /* [Sidecar] */
        char *description;
        char *exec;             /* as written */
        char **argv;            /* split */
        uint16_t port;          /* the runtime's loopback port; required */
        char *health;           /* HTTP path, or NULL: ready when the port accepts */
        usec_t start_timeout;
        SandboxLimits limits;   /* Memory=, CPUs=, Tasks=, ShmSize= (the rest unused) */
        char *user;
        char *gpus;
        char **read_only_mount_specs;
        ReadOnlyMount *read_only_mounts;
        size_t n_read_only_mounts;
        char **environment;
        uint64_t max_connections;
        int jit;
} Sidecar;

#define SIDECAR_START_TIMEOUT_DEFAULT (5 * 60 * USEC_PER_SEC)
#define SIDECAR_MAX_CONNECTIONS_DEFAULT 256
#define SIDECAR_MAX_CONNECTIONS_MAX 65536

/* Where a sidecar's socket lives (docs/overview.md, Files and search paths): the directory is 0555, the socket 0666. */
#define SIDECAR_SERVICES_DIR "/run/cloister/services"

Sidecar *sidecar_free(Sidecar *s);
DEFINE_TRIVIAL_CLEANUP_FUNC(Sidecar *, sidecar_free);

/* Reads the sidecar file `path` from `f` (the name comes from `path`) and checks it against
 * cloister.conf (Memory= and the other limits default from its [Sandbox]). Any error refuses
 * the whole file and is logged with path:line and key. The entry point for fuzzing. */
int sidecar_load_from_file(const char *path, FILE *f, const CloisterConf *conf, Sidecar **ret);

/* Opens `path` and calls sidecar_load_from_file(). */
int sidecar_load(const char *path, const CloisterConf *conf, Sidecar **ret);

/* Checks the directory contract (docs/overview.md, Files and search paths) of an existing socket directory: NULL if it is as it
 * must be; else a static reason, with *ret_fatal set when anyone but its owner could write
 * into it (someone could then put their own socket in the sidecar's place). `owner` is root
 * (0) on a live system; an offline check of an image (cloisterctl --root=DIR) wants the owner
 * of DIR, who owns that image's / as root owns the live one. */
const char *sidecar_dir_check(const char *dir, uid_t owner, bool *ret_fatal);
