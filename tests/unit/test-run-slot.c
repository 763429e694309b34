/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* helpers/run/run-slot.c: cloisterctl run's /tmp slots. A run claims the first free slot
 * or one whose run and cloisterctl are both gone; two runs never hold one slot; a claim is
 * released only by the one who made it. The claim directory must be root's (root only). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run-slot.h"
#include "macro.h"
#include "tap.h"

static char dir[] = "/tmp/cloister-test-run-slot.XXXXXX";

static bool gone_if_x(const char *unit, void *userdata) {
        return unit[0] == 'X';
}

static char *claim(const char *claims, const char *unit) {
        char *slot = NULL;
        int r = run_slot_claim(claims, "r", unit, gone_if_x, NULL, &slot);

        if (r < 0)
                diag("claim for %s: %s", unit, strerror(-r));
        return slot;
}

static char *content(const char *claims, const char *slot) {
        _cleanup_free_ char *p = strprintf("%s/%s", claims, slot);
        char buf[256] = "";
        int fd = p ? open(p, O_RDONLY | O_CLOEXEC) : -1;

        if (fd >= 0) {
                ssize_t n = read(fd, buf, sizeof buf - 1);
                buf[n > 0 ? n : 0] = 0;
                close(fd);
        }
        return strdup(buf);
}

static void write_claim(const char *claims, const char *slot, const char *text) {
        _cleanup_free_ char *p = strprintf("%s/%s", claims, slot);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t) strlen(text))
                tap_bail_out("cannot write a claim");
        close(fd);
}

int main(void) {
        _cleanup_free_ char *claims = NULL, *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL,
                *symlinked = NULL, *want = NULL, *got = NULL;
        char *slot = NULL;
        unsigned taken = 0;

        if (!mkdtemp(dir))
                tap_bail_out("mkdtemp");
        claims = strprintf("%s/run/tmp-slots", dir);
        if (geteuid() != 0) {
                ok(run_slot_claim(claims, "r", "agent-run@r.1.service", gone_if_x, NULL, &slot) == -EPERM,
                   "not root: the claim directory is not root's, no slot is claimed (the run mounts its own)");
                tap_skip("claiming slots needs a root-owned claim directory");
                return tap_done();
        }
        a = claim(claims, "agent-run@r.a.service");
        is_str(a, "r.slot-0", "the first run claims slot 0");
        want = strprintf("agent-run@r.a.service %d\n", (int) getpid());
        got = content(claims, "r.slot-0");
        is_str(got, want, "...its claim names the unit and the claiming process");
        b = claim(claims, "agent-run@r.b.service");
        is_str(b, "r.slot-1", "an overlapping run claims slot 1");
        run_slot_release(claims, "r.slot-0", "agent-run@r.other.service");
        free(got);
        got = content(claims, "r.slot-0");
        ok(startswith(got, "agent-run@r.a.service "), "a release by another unit leaves the claim");
        run_slot_release(claims, "r.slot-0", "agent-run@r.a.service");
        c = claim(claims, "agent-run@r.c.service");
        is_str(c, "r.slot-0", "released by its run, slot 0 is claimed again");

        write_claim(claims, "r.slot-2", "Xagent-run@r.crashed.service 2147483646\n");
        write_claim(claims, "r.slot-3", "agent-run@r.alive.service 2147483646\n");
        d = claim(claims, "agent-run@r.d.service");
        is_str(d, "r.slot-2", "a claim whose unit and process are gone is taken over");
        e = claim(claims, "agent-run@r.e.service");
        is_str(e, "r.slot-4", "a claim whose unit systemd still knows is not");
        write_claim(claims, "r.slot-5", "Xagent-run@r.mine.service 1\n");
        free(e);
        e = claim(claims, "agent-run@r.f.service");
        is_str(e, "r.slot-6", "a claim whose cloisterctl still runs is not (it may be about to start it)");

        for (unsigned i = 0; i < RUN_TMP_SLOTS_MAX; i++) {
                char *s = claim(claims, "agent-run@r.many.service");
                taken += !!s;
                free(s);
        }
        is_int(taken, RUN_TMP_SLOTS_MAX - 7, "slots up to RUN_TMP_SLOTS_MAX are handed out");
        ok(run_slot_claim(claims, "r", "agent-run@r.z.service", gone_if_x, NULL, &slot) == -EBUSY,
           "then none: -EBUSY (the run mounts its own)");

        symlinked = strprintf("%s/link", dir);
        if (symlink(claims, symlinked) < 0)
                tap_bail_out("symlink");
        ok(run_slot_claim(symlinked, "r", "agent-run@r.z.service", gone_if_x, NULL, &slot) < 0,
           "a claim directory that is a symlink is refused");
        {
                _cleanup_free_ char *cmd = strprintf("rm -rf '%s'", dir);
                if (system(cmd) != 0)
                        diag("could not remove %s", dir);
        }
        return tap_done();
}
