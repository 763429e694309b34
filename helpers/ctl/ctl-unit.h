/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "ctl-model.h"

/* The unit text systemd sees for agent@<role>.service, as `systemctl cat` shows it: the unit
 * file (agent@.service, or an agent@<role>.service that replaces it), then the drop-ins of
 * agent@<role>.service.d/, its dash prefixes, agent@.service.d/ and service.d/ in every unit
 * directory, one per file name (the highest-priority directory wins), sorted by file name.
 *
 * The generated 50-cloister.conf is rendered in-process with the generator's model
 * (profile_role()) rather than read from /run/systemd/generator, which holds what the last
 * daemon-reload generated: cat shows the truth of the current files. It is shown under the
 * path the generator writes it to. A role refused for an admin drop-in that re-opens a closed
 * surface gets the generator's refusal drop-in (profile_refusal()); a role the generator
 * cannot read gets none, as at boot. */

typedef struct UnitPart {
        char *name;     /* drop-in file name (the sort key); NULL for the unit file */
        char *path;
        char *text;     /* rendered text, or NULL: the file's content */
} UnitPart;

/* parts[0] is the unit file. */
int ctl_unit_text(const CtlModel *m, const CtlRole *role, UnitPart **ret, size_t *ret_n);
int unit_part_write(const UnitPart *p, FILE *out);
void unit_parts_free(UnitPart *parts, size_t n);
