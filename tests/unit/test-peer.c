/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/broker/peer.c: the role a broker caller is, from the unit name PID 1 gives its PID.
 * Only agent@ROLE.service and agent-run@ROLE.ID.service are roles; every near miss is not
 * (a role it is not would get that role's credentials and policy). */
#include <sys/socket.h>
#include <unistd.h>

#include "macro.h"
#include "peer.h"
#include "tap.h"

static void role_is(const char *unit, const char *want) {
        _cleanup_free_ char *got = peer_role_of_unit(unit);

        if (want)
                is_str(got, want, "%s is role %s", unit, want);
        else
                ok(!got, "%s is no role (got %s)", unit, got ?: "none");
}

static void test_role_of_unit(void) {
        role_is("agent@reviewer.service", "reviewer");
        role_is("agent@a-b_c.service", "a-b_c");
        role_is("agent-run@reviewer.0123456789abcdef.service", "reviewer");
        /* not agent units */
        role_is("web@reviewer.service", NULL);
        role_is("xagent@reviewer.service", NULL);
        role_is("sidecar@reviewer.service", NULL);
        role_is("cloister-broker.service", NULL);
        role_is("session-1.scope", NULL);
        /* not services */
        role_is("agent@reviewer.socket", NULL);
        role_is("agent@reviewer.scope", NULL);
        role_is("agent-run@reviewer.abc.scope", NULL);
        /* a run's ID is letters and digits, and there is one */
        role_is("agent-run@reviewer.service", NULL);
        role_is("agent-run@reviewer..service", NULL);
        role_is("agent-run@reviewer.a-b.service", NULL);
        role_is("agent-run@reviewer.a_b.service", NULL);
        /* the instance must be a valid role name */
        role_is("agent@.service", NULL);
        role_is("agent@-x.service", NULL);
        role_is("agent@re\\x2fviewer.service", NULL);
        role_is("agent-run@.abc.service", NULL);
}

/* Outside any agent unit (a test process): a connection has a PID, no role. */
static void test_identify_outside_a_unit(void) {
        int sv[2];
        Peer p = {};

        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                tap_bail_out("socketpair");
        is_int(peer_identify(sv[0], &p), 0, "peer_identify() of a socketpair succeeds");
        is_int(p.pid, getpid(), "the peer's PID is ours (SO_PEERCRED)");
        ok(!p.role, "a process in no agent unit has no role (unit %s)", p.unit ?: "none");
        peer_done(&p);
        ok(!p.unit && !p.role, "peer_done() frees and clears");
        close(sv[0]);
        close(sv[1]);
}

int main(void) {
        test_role_of_unit();
        test_identify_outside_a_unit();
        return tap_done();
}
