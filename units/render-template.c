/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Build tool: renders the units cloister ships from the profile model, so that the shipped
 * files and the generator's model are one source:
 *   render-template agent OUTPUT    units/agent@.service, the static part of the locked profile;
 *   render-template broker OUTPUT   units/cloister-broker.service, from the hardening base. */
#include "profile-broker.h"
#include "profile.h"

static const char agent_header[] =
        "# SPDX-License-Identifier: LGPL-2.1-or-later\n"
        "# The locked profile of every cloister agent (cloister.role(5), THE LOCKED PROFILE).\n"
        "# Rendered at build time from lib/profile/profile.c and policy/; per-role settings come from\n"
        "# cloister-generator as agent@<role>.service.d/50-cloister.conf. Admin drop-ins may\n"
        "# not set the keys in policy/closed-surfaces.list: the role then refuses to start.\n\n";

static const char broker_header[] =
        "# SPDX-License-Identifier: LGPL-2.1-or-later\n"
        "# The one cloister process with network egress: it makes every LLM, MCP and API call for\n"
        "# sealed agents, with the credentials (LoadCredential=, added by cloister-generator in\n"
        "# cloister-broker.service.d/50-credentials.conf), the policy and an audit record.\n"
        "# Rendered at build time from lib/profile/profile-broker.c: the hardening base of every\n"
        "# cloister unit (lib/profile/hardening.c), with these differences (docs/profile.md):\n";

int main(int argc, char *argv[]) {
        bool broker = argc == 3 && streq(argv[1], "broker");
        UnitSettings s = {};
        FILE *f;
        int r;

        if (argc != 3 || (!broker && !streq(argv[1], "agent"))) {
                fprintf(stderr, "usage: %s agent|broker OUTPUT\n", argv[0]);
                return 2;
        }
        r = broker ? profile_broker(&s) : profile_static(&s);
        if (r < 0)
                return 1;
        f = fopen(argv[2], "we");
        if (!f)
                return 1;
        fputs(broker ? broker_header : agent_header, f);
        for (const HardeningChange *c = profile_broker_hardening; broker && c->name; c++)
                fprintf(f, "#   %s%s%s: %s\n", c->name, c->value ? "=" : " left out", strempty(c->value), c->why);
        if (broker)
                fputc('\n', f);
        r = unit_settings_write(f, &s);
        unit_settings_done(&s);
        return fclose(f) == 0 && r >= 0 ? 0 : 1;
}
