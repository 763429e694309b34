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

static uid_t pid_uid(pid_t pid) {
        _cleanup_free_ char *path = strprintf("/proc/%d/status", (int) pid);
        _cleanup_fclose_ FILE *f = path ? fopen(path, "re") : NULL;
        char line[256];
        unsigned long uid;

        while (f && fgets(line, sizeof line, f))
                if (sscanf(line, "Uid: %lu", &uid) == 1)
                        return (uid_t) uid;
        return (uid_t) -1;
}

/* The UID the kernel reports for a user that has no mapping in our user namespace
 * (/proc/sys/kernel/overflowuid, 65534 unless changed). */
static uid_t overflow_uid(void) {
        _cleanup_fclose_ FILE *f = fopen("/proc/sys/kernel/overflowuid", "re");
        unsigned long uid;

        return f && fscanf(f, "%lu", &uid) == 1 ? (uid_t) uid : (uid_t) 65534;
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
        /* systemd 252 has no pidfd identity: a connection whose process exited and whose PID
         * an agent reused would pass as that agent. The UID the kernel recorded at connect()
         * must still be the UID of the process now at that PID (each agent unit has its own).
         * In a user namespace that does not map the peer's UID (PrivateUsers= on the broker)
         * every such UID reads as the overflow UID and the check could not tell two users
         * apart: such a peer has no identity. */
        if (cred.uid == overflow_uid()) {
                log_warning("Peer PID %d has a UID this broker's user namespace does not map: refusing its identity.", (int) cred.pid);
                *ret = p;
                return 0;
        }
        if (pid_uid(cred.pid) != cred.uid) {
                log_warning("Peer PID %d now belongs to a process of another user: refusing its identity.", (int) cred.pid);
                *ret = p;
                return 0;
        }
        p.role = peer_role_of_unit(p.unit);
        *ret = p;
        return 0;
}
