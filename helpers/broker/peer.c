/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <sys/socket.h>
#include <systemd/sd-login.h>

#include "log.h"
#include "parse-util.h"
#include "peer.h"

void peer_done(Peer *p) {
        p->unit = mfree(p->unit);
        p->role = mfree(p->role);
}

char *peer_role_of_unit(const char *unit) {
        const char *inst, *end;
        size_t n;

        if ((inst = startswith(unit, "agent@")))
                end = strrchr(inst, '.');
        else if ((inst = startswith(unit, "agent-run@"))) {
                end = strchr(inst, '.');
                /* ROLE.ID.service: the ID must be alphanumeric */
                const char *id = end ? end + 1 : NULL, *svc = strrchr(inst, '.');
                if (!id || svc <= id)
                        return NULL;
                for (const char *p = id; p < svc; p++)
                        if (!isalnum((unsigned char) *p))
                                return NULL;
        } else
                return NULL;
        if (!end || !streq(strrchr(unit, '.'), ".service"))
                return NULL;
        n = (size_t) (end - inst);
        char *role = strndup(inst, n);
        if (role && !name_is_valid(role))
                role = mfree(role);
        return role;
}

int peer_identify(int fd, Peer *ret) {
        struct ucred cred;
        socklen_t len = sizeof cred;
        Peer p = {};
        int r;

        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0)
                return -errno;
        p.pid = cred.pid;
        r = sd_pid_get_unit(cred.pid, &p.unit);
        if (r < 0) {
                *ret = p;
                return 0; /* not in a unit we know: no role */
        }
        p.role = peer_role_of_unit(p.unit);
        *ret = p;
        return 0;
}
