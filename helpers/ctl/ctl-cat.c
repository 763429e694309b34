/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <getopt.h>

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

int verb_cat(int argc, char *argv[], const CtlOptions *o) {
        static const struct option options[] = {
                { "help", no_argument, NULL, 'h' },
                {}
        };
        CtlModel m = {};
        int c, r, ret = CTL_EXIT_OK;

        while ((c = getopt_long(argc, argv, "h", options, NULL)) >= 0)
                switch (c) {
                case 'h':
                        printf("cloisterctl cat ROLE...\n\nShows the unit text systemd sees for agent@ROLE.service.\n");
                        return CTL_EXIT_OK;
                default:
                        return CTL_EXIT_USAGE;
                }
        if (optind >= argc) {
                log_error("cat needs at least one ROLE.");
                return CTL_EXIT_USAGE;
        }
        if (o->json) {
                log_error("cat prints unit text; --json is not supported for it.");
                return CTL_EXIT_USAGE;
        }
        if (ctl_model_load(&m) < 0) {
                ctl_model_done(&m);
                return CTL_EXIT_FAILURE;
        }
        for (int i = optind; i < argc; i++) {
                const CtlRole *role = ctl_model_find_role(&m, argv[i]);

                if (i > optind)
                        putchar('\n');
                if (!role) {
                        log_error("No role \"%s\": no roles/%s.role in the configuration directories.", argv[i], argv[i]);
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
        ctl_model_done(&m);
        return ret;
}
