/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-model.h"

/* The `systemd-analyze security` exposure of agent@<role>.service ("0.4 SAFE"), analysed
 * offline (--offline=yes --root=) on a copy of the unit text cloisterctl cat shows, in a
 * temporary directory: the same answer with or without a running systemd, and for the
 * current files rather than the last daemon-reload. *ret = NULL ("unknown") when the tool is
 * missing or says nothing usable; that is not an error. $CLOISTER_SYSTEMD_ANALYZE names
 * another binary (tests). */
int ctl_security_exposure(const CtlModel *m, const CtlRole *role, char **ret);

/* The same for a sidecar's runtime (sidecar-runtime@<name>.service) and proxy
 * (sidecar@<name>.service), analysed on the units the generator writes for it (full unit
 * files; admin drop-ins for them are not applied). NULL: unknown. */
int ctl_security_exposure_sidecar(const Sidecar *sc, char **ret_runtime, char **ret_proxy);
