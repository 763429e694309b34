/* SPDX-License-Identifier: LGPL-2.1-or-later */

#include "ctl-unit.h"
#include "ctl.h"
#include "log.h"

static int cat_role(const CtlModel *m, const CtlRole *role) {
        UnitPart *parts = NULL;
        size_t n = 0;
        int r = ctl_unit_text(m, role, &parts, &n);

        for (size_t i = 0; r >= 0 && i < n; i++) {
                if (i > 0)
                        putchar('\n');
                printf("# %s\n", parts[i].path);
                r = unit_part_write(&parts[i], stdout);
        }
        unit_parts_free(parts, n);
        return r;
}

void help_cat(void) {
        printf("cloisterctl cat ROLE...\n\nShows the unit text systemd sees for agent@ROLE.service.\n");
}

int verb_cat(char **args, const CtlOptions *o) {
        _cleanup_(ctl_model_done) CtlModel m = {};
        int r, ret = CTL_EXIT_OK;

        if (!args[0]) {
                log_error("cat needs at least one ROLE.");
                return CTL_EXIT_USAGE;
        }
        if (o->json) {
                log_error("cat prints unit text; --json is not supported for it.");
                return CTL_EXIT_USAGE;
        }
        if (ctl_model_load(&m) < 0)
                return CTL_EXIT_FAILURE;
        for (size_t i = 0; args[i]; i++) {
                const CtlRole *role = ctl_model_find_role(&m, args[i]);

                if (i > 0)
                        putchar('\n');
                if (!role) {
                        log_error("No role \"%s\": no roles/%s.role in the configuration directories.", args[i], args[i]);
                        ret = CTL_EXIT_FAILURE;
                        continue;
                }
                if (!role->role || role->closed_surface) {
                        log_error("Role %s is refused; agent@%s.service will not start:", role->name, role->name);
                        STRV_FOREACH(e, role->errors)
                                log_error("  %s", *e);
                        if (role->closed_surface)
                                log_error("  %s", role->closed_surface);
                        ret = CTL_EXIT_FAILURE;
                }
                r = cat_role(&m, role);
                if (r < 0)
                        ret = CTL_EXIT_FAILURE;
        }
        return ret;
}
