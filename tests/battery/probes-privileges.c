/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Privilege and namespace probes: capability sets, securebits, no_new_privs, seccomp,
 * mknod, mount, the user namespace, unshare. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <linux/securebits.h>

#include "battery.h"
#include "macro.h"

static bool zero_hex(const char *s) {
        return *s && strspn(s, "0") == strlen(s);
}

PROBE(cap_bounding) {
        char v[64];

        if (!status_field("CapBnd", v, sizeof v))
                return failed(r, "no CapBnd in /proc/self/status");
        if (zero_hex(v))
                blocked(r, "CapBnd %s", v);
        else
                opened(r, "CapBnd %s", v);
}

PROBE(cap_sets) {
        static const char *const keys[] = { "CapInh", "CapPrm", "CapEff", "CapAmb" };
        char d[200] = "";
        bool any = false;

        for (size_t i = 0; i < ELEMENTSOF(keys); i++) {
                char v[64];
                if (!status_field(keys[i], v, sizeof v))
                        return failed(r, "no %s in /proc/self/status", keys[i]);
                any = any || !zero_hex(v);
                append(d, sizeof d, "%s %s ", keys[i], v);
        }
        if (any)
                opened(r, "%s", d);
        else
                blocked(r, "%s", d);
}

/* What SecureBits=noroot-locked sets: the noroot bit locked (in whatever state it has). */
PROBE(securebits) {
        int bits = prctl(PR_GET_SECUREBITS);

        if (bits < 0)
                failed(r, "PR_GET_SECUREBITS: %s", strerrorname_np(errno));
        else if (bits & SECBIT_NOROOT_LOCKED)
                blocked(r, "securebits 0x%x: noroot locked (noroot itself %s)", bits, bits & SECBIT_NOROOT ? "on" : "off");
        else
                opened(r, "securebits 0x%x: noroot not locked", bits);
}

PROBE(no_new_privs) {
        char v[16];

        if (!status_field("NoNewPrivs", v, sizeof v))
                return failed(r, "no NoNewPrivs in /proc/self/status");
        if (streq(v, "1"))
                blocked(r, "NoNewPrivs 1");
        else
                opened(r, "NoNewPrivs %s", v);
}

/* Containers and VMs may run every process under a filter of their own: the sandbox must add
 * filters beyond the number its parent has (--host-filters=). */
PROBE(seccomp) {
        char mode[16], filters[16] = "0";

        if (!status_field("Seccomp", mode, sizeof mode))
                return failed(r, "no Seccomp in /proc/self/status");
        (void) status_field("Seccomp_filters", filters, sizeof filters);
        if (streq(mode, "2") && (unsigned) atoi(filters) > b->host_filters)
                blocked(r, "Seccomp 2, %s filters (host %u)", filters, b->host_filters);
        else
                opened(r, "Seccomp %s, %s filters (host %u)", mode, filters, b->host_filters);
}

PROBE(mknod) {
        const char *path = "/tmp/.battery-node";
        int k;

        unlink(path);
        k = mknod(path, S_IFCHR | 0600, makedev(1, 3));
        if (k == 0) {
                unlink(path);
                opened(r, "mknod c 1:3 succeeded");
        } else
                blocked(r, "mknod c 1:3: %s", strerrorname_np(errno));
}

/* A bad file system type pointer: the kernel answers EFAULT before it checks privileges. */
PROBE(mount) {
        long k = mount("none", "/tmp", (const char *) 1, 0, NULL);
        gate(r, "mount(type=(char *) 1)", k, errno);
}

PROBE(user_namespace) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
        unsigned long inside, outside, count;

        if (!f || fscanf(f, "%lu %lu %lu", &inside, &outside, &count) != 3)
                return failed(r, "/proc/self/uid_map unreadable");
        if (inside == 0 && outside == 0 && count == 4294967295UL)
                opened(r, "uid_map is the identity: the host's user namespace");
        else
                blocked(r, "uid_map %lu %lu %lu", inside, outside, count);
}

static void try_unshare(Result *r, int flags, const char *names) {
        if (unshare(flags) == 0)
                opened(r, "unshare(%s) succeeded", names);
        else
                blocked(r, "unshare(%s): %s", names, strerrorname_np(errno));
}

PROBE(unshare_user) { try_unshare(r, CLONE_NEWUSER, "CLONE_NEWUSER"); }
PROBE(unshare_all) {
        try_unshare(r, CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWPID | CLONE_NEWCGROUP,
                    "NEWUSER|NEWNS|NEWNET|NEWIPC|NEWUTS|NEWPID|NEWCGROUP");
}
