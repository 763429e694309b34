/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Build tool: renders the static part of the locked profile into units/agent@.service, so
 * the shipped template and the generator's model are one source. */
#include "profile.h"

int main(int argc, char *argv[]) {
        UnitSettings s = {};
        FILE *f;
        int r;

        if (argc != 2) {
                fprintf(stderr, "usage: %s OUTPUT\n", argv[0]);
                return 2;
        }
        r = profile_static(&s);
        if (r < 0)
                return 1;
        f = fopen(argv[1], "we");
        if (!f)
                return 1;
        fputs("# SPDX-License-Identifier: LGPL-2.1-or-later\n"
              "# The locked profile of every cloister agent (cloister.role(5), THE LOCKED PROFILE).\n"
              "# Rendered at build time from lib/profile/profile.c and policy/; per-role settings come from\n"
              "# cloister-generator as agent@<role>.service.d/50-cloister.conf. Admin drop-ins may\n"
              "# not set the keys in policy/closed-surfaces.list: the role then refuses to start.\n\n", f);
        r = unit_settings_write(f, &s);
        unit_settings_done(&s);
        return fclose(f) == 0 && r >= 0 ? 0 : 1;
}
