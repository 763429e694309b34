/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the battery knows about the sandbox it is meant to run in. */
typedef enum {
        MODE_NONE = 1 << 0,
        MODE_DAEMON_ONLY = 1 << 1,
} Mode;
#define MODE_ALL (MODE_NONE | MODE_DAEMON_ONLY)

typedef struct Battery {
        Mode mode;
        uint64_t tmp_max;         /* bytes: TmpSize= */
        uint64_t shm_max;         /* bytes: ShmSize= */
        unsigned host_filters;    /* seccomp filters the sandbox's parent already has */
        uint16_t port;            /* a host-side TCP listener on 127.0.0.1 */
        const char *abstract;     /* a host-side abstract socket */
        const char *home_marker;  /* a readable file under /home on the host */
        const char *dns_name;     /* a name the host's resolver answers */
        int own_fds[4];           /* the battery's own descriptors (the fd census skips them) */
} Battery;

/* BLOCKED: the probe's surface is closed by its directive. OPEN: it is not. ERROR: the
 * probe could not tell (counts as a failure: fail closed). NOT_APPLICABLE: the kernel has no
 * such surface at all (e.g. no i386 syscall entry), told apart precisely from a refusal; only
 * the unhardened reference run may make that a SKIP. BY_DESIGN: the mode opens it. */
typedef enum {
        VERDICT_ERROR,
        VERDICT_BLOCKED,
        VERDICT_OPEN,
        VERDICT_NOT_APPLICABLE,
        VERDICT_BY_DESIGN,
} Verdict;

typedef struct Result {
        Verdict verdict;
        char detail[400];
} Result;

typedef void (*ProbeFunc)(const Battery *b, Result *r);

typedef struct Probe {
        const char *name;       /* stable id, e.g. "sys.bpf" */
        const char *what;       /* what must hold, in words */
        const char *directive;  /* what closes it */
        const char *control;    /* the negative control (tests/integration/suite-battery.sh) */
        Mode modes;             /* where it must be closed; elsewhere the mode opens it */
        ProbeFunc run;
        unsigned timeout_sec;   /* 0: the default */
} Probe;

/* Setting a verdict: the last call wins. */
void blocked(Result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void opened(Result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void failed(Result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void not_applicable(Result *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A syscall that the filter must stop before the kernel sees it: the arguments are chosen so
 * that the kernel, if reached, answers something else than EPERM (or succeeds harmlessly). */
void gate(Result *r, const char *call, long ret, int err);

/* Helpers shared by the probe files. connect_unix() counts a listener whose backlog is
 * full (EAGAIN) as reached. */
bool status_field(const char *key, char *buf, size_t size);
int connect_unix(const char *path, bool abstract);
int for_each_mount(void (*f)(const char *target, const char *fstype, bool rw, void *userdata), void *userdata);
void append(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#define PROBE(name) void probe_##name(const Battery *b, Result *r)
/* network and IPC */
PROBE(only_lo); PROBE(af_inet); PROBE(af_inet6); PROBE(af_netlink); PROBE(af_packet);
PROBE(host_loopback); PROBE(abstract); PROBE(dns); PROBE(metadata);
PROBE(socket_walk); PROBE(dbus); PROBE(journald); PROBE(resolved); PROBE(nscd); PROBE(sysv_ipc);
/* leaks */
PROBE(fds); PROBE(environment); PROBE(credentials); PROBE(proc_pids); PROBE(proc_subset);
PROBE(sys_net); PROBE(sys_ro); PROBE(cgroup_ro); PROBE(devices); PROBE(home);
/* file system */
PROBE(root_ro); PROBE(writable_mounts); PROBE(input_ro); PROBE(git_ro); PROBE(tmp_cap);
PROBE(var_tmp_cap); PROBE(shm_cap); PROBE(suid_chmod); PROBE(sgid_create); PROBE(umask);
/* privileges and namespaces */
PROBE(cap_bounding); PROBE(cap_sets); PROBE(securebits); PROBE(no_new_privs); PROBE(seccomp);
PROBE(mknod); PROBE(mount); PROBE(user_namespace); PROBE(unshare_user); PROBE(unshare_all);
/* syscalls */
PROBE(io_uring); PROBE(userfaultfd); PROBE(keyctl); PROBE(add_key); PROBE(bpf);
PROBE(perf_event_open); PROBE(ptrace); PROBE(process_vm_readv); PROBE(process_vm_writev);
PROBE(kcmp); PROBE(kexec_load); PROBE(modules); PROBE(clock_settime); PROBE(adjtimex);
PROBE(personality); PROBE(mmap_wx); PROBE(mprotect_x); PROBE(realtime); PROBE(setuid);
PROBE(foreign_arch);
