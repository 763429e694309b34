/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The escape battery: run as the agent of a real agent@ unit, it tries every way out that
 * the locked profile (docs/profile.md) closes, each in a forked child, and prints one TAP line per
 * probe naming the directive that closes it, plus a machine-readable line
 *
 *   # verdict NAME blocked|open|error|n/a|by-design control=CONTROL DETAIL
 *   # directive NAME DIRECTIVE
 *   # elapsed NAME MS ms
 *
 * A seccomp kill of the child (SIGSYS) counts as blocked. tests/integration/suite-battery.sh
 * runs it in sealed units (every probe must be blocked) and, per CONTROL, in a unit with the
 * responsible directive removed (the probes of that control must turn open).
 *
 * It refuses to run as root: it is never meant to run outside a sandbox. */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "battery.h"
#include "macro.h"

#define PROBE_TIMEOUT_SEC 20

#define P(n, w, d, c, m, f) { .name = n, .what = w, .directive = d, .control = c, .modes = m, .run = probe_##f }
/* The walk of the whole tree: in the VM tier, / is the host's over 9p, ~1 ms an entry. */
#define P_LONG(n, w, d, c, m, f) { .name = n, .what = w, .directive = d, .control = c, .modes = m, .run = probe_##f, \
                                   .timeout_sec = 240 }
static const Probe probes[] = {
        /* network */
        P("net.only-lo", "only the loopback device", "PrivateNetwork=", "private-network", MODE_ALL, only_lo),
        P("net.af-inet", "AF_INET sockets filtered", "RestrictAddressFamilies=", "address-families", MODE_NONE, af_inet),
        P("net.af-inet6", "AF_INET6 sockets filtered", "RestrictAddressFamilies=", "address-families", MODE_NONE, af_inet6),
        P("net.af-netlink", "AF_NETLINK sockets filtered", "RestrictAddressFamilies=", "address-families", MODE_ALL, af_netlink),
        P("net.af-packet", "AF_PACKET sockets filtered", "RestrictAddressFamilies=", "address-families", MODE_ALL, af_packet),
        P("net.host-loopback", "the host's 127.0.0.1 listener unreachable", "PrivateNetwork=", "private-network", MODE_ALL, host_loopback),
        P("net.abstract", "the host's abstract socket unreachable", "PrivateNetwork=", "private-network", MODE_ALL, abstract),
        P("net.dns", "no name resolution through the host's resolver", "PrivateNetwork=", "private-network", MODE_ALL, dns),
        P("net.metadata", "cloud metadata 169.254.169.254 unreachable", "PrivateNetwork= + IPAddressDeny=", "private-network-ip", MODE_ALL, metadata),
        /* IPC */
        P_LONG("ipc.socket-walk", "no socket under / (but /usr) accepts a connection (nor the broker's, in none)", "TemporaryFileSystem=/run:ro", "run-tmpfs", MODE_ALL, socket_walk),
        P("ipc.dbus", "D-Bus system bus unreachable", "TemporaryFileSystem=/run:ro", "run-tmpfs", MODE_ALL, dbus),
        P("ipc.journald", "journald's sockets unreachable", "TemporaryFileSystem=/run:ro", "run-tmpfs", MODE_ALL, journald),
        P("ipc.resolved", "systemd-resolved's varlink socket unreachable", "TemporaryFileSystem=/run:ro", "run-tmpfs", MODE_ALL, resolved),
        P("ipc.nscd", "nscd's socket unreachable", "TemporaryFileSystem=/run:ro", "run-tmpfs", MODE_ALL, nscd),
        P("ipc.sysv", "the host's System V IPC objects invisible", "PrivateIPC=", "private-ipc", MODE_ALL, sysv_ipc),
        /* leaks */
        P("leak.fds", "no descriptors beyond 0-2", "cloister-shim (no inherited fds)", "fd-leak", MODE_ALL, fds),
        P("leak.environment", "environment only CLOISTER_*, OPENAI_* and the basics", "cloister-shim (clean environment)", "environment", MODE_ALL, environment),
        P("leak.credentials", "no credentials", "no LoadCredential=/SetCredential=", "credentials", MODE_ALL, credentials),
        P("leak.proc-pids", "other users' processes invisible in /proc", "ProtectProc=invisible", "protect-proc", MODE_ALL, proc_pids),
        P("leak.proc-subset", "/proc holds only process directories", "ProcSubset=pid", "proc-subset", MODE_ALL, proc_subset),
        P("leak.sys-net", "/sys/class/net inaccessible", "InaccessiblePaths=", "inaccessible-paths", MODE_ALL, sys_net),
        P("leak.sys-ro", "/sys mounted read-only", "ProtectKernelTunables=", "kernel-tunables", MODE_ALL, sys_ro),
        P("leak.cgroup-ro", "/sys/fs/cgroup mounted read-only", "ProtectControlGroups=", "control-groups", MODE_ALL, cgroup_ro),
        P("leak.devices", "/dev holds only the pseudo devices", "PrivateDevices=", "private-devices", MODE_ALL, devices),
        P("leak.home", "home directories inaccessible", "ProtectHome=", "protect-home", MODE_ALL, home),
        /* file system */
        P("fs.root-ro", "/, /usr, /etc, /var read-only", "ProtectSystem=strict", "protect-system", MODE_ALL, root_ro),
        P("fs.writable-mounts", "writable mounts only /tmp /var/tmp /dev/shm /output /workspace", "ProtectSystem=strict", "protect-system", MODE_ALL, writable_mounts),
        P("fs.input-ro", "/input read-only", "BindReadOnlyPaths= (Input=)", "input-rw", MODE_ALL, input_ro),
        P("fs.git-ro", "/workspace/.git read-only", "BindReadOnlyPaths= (.git)", "git-rw", MODE_ALL, git_ro),
        P("fs.tmp-cap", "/tmp a tmpfs capped at TmpSize=", "BindPaths= (per-role tmpfs)", "tmp-binds", MODE_ALL, tmp_cap),
        P("fs.var-tmp-cap", "/var/tmp a tmpfs capped at TmpSize=", "BindPaths= (per-role tmpfs)", "tmp-binds", MODE_ALL, var_tmp_cap),
        P("fs.shm-cap", "/dev/shm a tmpfs capped at ShmSize=", "TemporaryFileSystem=/dev/shm", "shm", MODE_ALL, shm_cap),
        P("fs.suid-chmod", "chmod u+s refused or stripped", "RestrictSUIDSGID=", "suid-sgid", MODE_ALL, suid_chmod),
        P("fs.sgid-create", "creating a set-gid file refused or stripped", "RestrictSUIDSGID=", "suid-sgid", MODE_ALL, sgid_create),
        P("fs.umask", "umask 0077", "UMask=0077", "umask", MODE_ALL, umask),
        /* privileges */
        P("priv.cap-bounding", "empty capability bounding set", "CapabilityBoundingSet=", "bounding-set", MODE_ALL, cap_bounding),
        P("priv.cap-sets", "no inheritable, permitted, effective or ambient capabilities", "AmbientCapabilities=", "ambient", MODE_ALL, cap_sets),
        P("priv.securebits", "securebits: noroot locked", "SecureBits=noroot-locked", "securebits", MODE_ALL, securebits),
        P("priv.no-new-privs", "NoNewPrivs=1", "NoNewPrivileges= (+ the seccomp directives that imply it)", "no-seccomp", MODE_ALL, no_new_privs),
        P("priv.seccomp", "Seccomp=2 with filters of its own", "SystemCallFilter= and the seccomp directives", "no-seccomp", MODE_ALL, seccomp),
        P("priv.mknod", "mknod of a device refused", "CapabilityBoundingSet= + PrivateDevices= + PrivateUsers=", "mknod", MODE_ALL, mknod),
        P("priv.mount", "mount() filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, mount),
        P("priv.user-namespace", "a user namespace (uid_map not the identity)", "PrivateUsers=", "private-users", MODE_ALL, user_namespace),
        /* namespaces */
        P("ns.user", "unshare(CLONE_NEWUSER) refused", "RestrictNamespaces=", "namespaces", MODE_ALL, unshare_user),
        P("ns.all", "unshare(NEWUSER|NEWNS|NEWNET|NEWIPC|NEWUTS|NEWPID|NEWCGROUP) refused", "RestrictNamespaces=", "namespaces", MODE_ALL, unshare_all),
        /* syscalls */
        P("sys.io_uring", "io_uring_setup filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, io_uring),
        P("sys.userfaultfd", "userfaultfd filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, userfaultfd),
        P("sys.keyctl", "keyctl filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, keyctl),
        P("sys.add_key", "add_key filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, add_key),
        P("sys.bpf", "bpf filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, bpf),
        P("sys.perf_event_open", "perf_event_open filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, perf_event_open),
        P("sys.ptrace", "ptrace of its own child filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, ptrace),
        P("sys.process_vm_readv", "process_vm_readv filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, process_vm_readv),
        P("sys.process_vm_writev", "process_vm_writev filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, process_vm_writev),
        P("sys.kcmp", "kcmp filtered", "SystemCallFilter=", "syscall-filter", MODE_ALL, kcmp),
        P("sys.setuid", "setuid/setgid filtered (even to oneself)", "SystemCallFilter=", "syscall-filter", MODE_ALL, setuid),
        P("sys.kexec_load", "kexec_load refused", "SystemCallFilter= + CapabilityBoundingSet=", "kexec", MODE_ALL, kexec_load),
        P("sys.modules", "init_module/finit_module refused", "SystemCallFilter= + ProtectKernelModules=", "modules", MODE_ALL, modules),
        P("sys.clock_settime", "clock_settime filtered", "SystemCallFilter= + ProtectClock=", "clock", MODE_ALL, clock_settime),
        P("sys.adjtimex", "adjtimex filtered", "SystemCallFilter= + ProtectClock=", "clock", MODE_ALL, adjtimex),
        P("sys.personality", "personality(READ_IMPLIES_EXEC) refused", "LockPersonality= + SystemCallFilter=", "personality", MODE_ALL, personality),
        P("sys.mmap-wx", "mmap(PROT_WRITE|PROT_EXEC) refused", "MemoryDenyWriteExecute=", "write-execute", MODE_ALL, mmap_wx),
        P("sys.mprotect-x", "mprotect(PROT_EXEC) of a written page refused", "MemoryDenyWriteExecute=", "write-execute", MODE_ALL, mprotect_x),
        P("sys.realtime", "sched_setscheduler(SCHED_FIFO) filtered", "RestrictRealtime=", "realtime", MODE_ALL, realtime),
        P("sys.foreign-arch", "32-bit syscalls (int 0x80) refused", "SystemCallArchitectures=native", "architectures", MODE_ALL, foreign_arch),
};
#undef P
#undef P_LONG

static FILE *copy_out; /* --output: the TAP also goes here */
static const char *only_control; /* --only: the probes of one negative control */

static void vset(Result *r, Verdict v, const char *fmt, va_list ap) {
        r->verdict = v;
        vsnprintf(r->detail, sizeof r->detail, fmt, ap);
}

void blocked(Result *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, VERDICT_BLOCKED, fmt, ap);
        va_end(ap);
}

void opened(Result *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, VERDICT_OPEN, fmt, ap);
        va_end(ap);
}

void failed(Result *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, VERDICT_ERROR, fmt, ap);
        va_end(ap);
}

void not_applicable(Result *r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vset(r, VERDICT_NOT_APPLICABLE, fmt, ap);
        va_end(ap);
}

void gate(Result *r, const char *call, long ret, int err) {
        if (ret >= 0)
                opened(r, "%s succeeded", call);
        else if (err == EPERM)
                blocked(r, "%s: EPERM", call);
        else
                opened(r, "%s reached the kernel: %s", call, strerrorname_np(err) ?: "?");
}

void append(char *buf, size_t size, const char *fmt, ...) {
        size_t l = strlen(buf);
        va_list ap;

        if (l + 1 >= size)
                return;
        va_start(ap, fmt);
        vsnprintf(buf + l, size - l, fmt, ap);
        va_end(ap);
}

bool status_field(const char *key, char *buf, size_t size) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/status", "re");
        char line[512];
        size_t l = strlen(key);

        while (f && fgets(line, sizeof line, f))
                if (strncmp(line, key, l) == 0 && line[l] == ':') {
                        char *v = line + l + 1;
                        v += strspn(v, " \t");
                        v[strcspn(v, "\n")] = 0;
                        snprintf(buf, size, "%s", v);
                        return true;
                }
        return false;
}

/* Tries a stream, then a datagram, then a seqpacket connection. Returns 0 or -errno. */
int connect_unix(const char *path, bool abstract) {
        static const int types[] = { SOCK_STREAM, SOCK_DGRAM, SOCK_SEQPACKET };
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;
        int err = 0;

        if (strlen(path) + 2 > sizeof sa.sun_path)
                return -ENAMETOOLONG;
        strcpy(sa.sun_path + abstract, path);
        len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + abstract + strlen(path) + !abstract);
        for (size_t i = 0; i < ELEMENTSOF(types); i++) {
                _cleanup_close_ int fd = socket(AF_UNIX, types[i] | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (fd < 0)
                        return -errno;
                if (connect(fd, (struct sockaddr *) &sa, len) == 0)
                        return 0;
                err = errno;
                if (err == EAGAIN)
                        return 0;
                if (err != EPROTOTYPE)
                        break;
        }
        return -err;
}

static void unescape_octal(char *s) {
        char *w = s;
        for (char *p = s; *p; p++)
                if (p[0] == '\\' && p[1] >= '0' && p[1] <= '3' && p[2] && p[3]) {
                        *w++ = (char) (((p[1] - '0') << 6) | ((p[2] - '0') << 3) | (p[3] - '0'));
                        p += 3;
                } else
                        *w++ = *p;
        *w = 0;
}

/* /proc/self/mountinfo: target, fstype and whether the mount itself is read-write. */
int for_each_mount(void (*f)(const char *target, const char *fstype, bool rw, void *userdata), void *userdata) {
        _cleanup_fclose_ FILE *mi = fopen("/proc/self/mountinfo", "re");
        char line[4096];

        if (!mi)
                return -errno;
        while (fgets(line, sizeof line, mi)) {
                char target[2048], opts[512], fstype[128];
                const char *sep = strstr(line, " - ");
                if (!sep || sscanf(line, "%*s %*s %*s %*s %2047s %511s", target, opts) != 2 ||
                    sscanf(sep + 3, "%127s", fstype) != 1)
                        return -EBADMSG;
                unescape_octal(target);
                f(target, fstype, strncmp(opts, "rw", 2) == 0 && (opts[2] == 0 || opts[2] == ','), userdata);
        }
        return 0;
}

static const char *verdict_to_string(Verdict v) {
        static const char *const names[] = {
                [VERDICT_ERROR] = "error", [VERDICT_BLOCKED] = "blocked",
                [VERDICT_OPEN] = "open", [VERDICT_NOT_APPLICABLE] = "n/a",
                [VERDICT_BY_DESIGN] = "by-design",
        };
        return names[v];
}

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        if (copy_out) {
                va_start(ap, fmt);
                vfprintf(copy_out, fmt, ap);
                va_end(ap);
        }
}

/* The child writes its Result into a pipe; a child that dies by SIGSYS was stopped by seccomp. */
static void run_in_child(Battery *b, const Probe *p, Result *ret) {
        int pipefd[2];
        pid_t pid;
        int status;
        ssize_t n = 0;

        *ret = (Result) { .verdict = VERDICT_ERROR };
        if (pipe2(pipefd, O_CLOEXEC) < 0) {
                failed(ret, "pipe2: %s", strerrorname_np(errno));
                return;
        }
        fflush(stdout);
        if (copy_out)
                fflush(copy_out);
        pid = fork();
        if (pid < 0) {
                failed(ret, "fork: %s", strerrorname_np(errno));
                close(pipefd[0]);
                close(pipefd[1]);
                return;
        }
        if (pid == 0) {
                Result r = { .verdict = VERDICT_ERROR, .detail = "the probe set no verdict" };
                close(pipefd[0]);
                b->own_fds[2] = pipefd[1];
                alarm(p->timeout_sec ?: PROBE_TIMEOUT_SEC);
                p->run(b, &r);
                _exit(write(pipefd[1], &r, sizeof r) == (ssize_t) sizeof r ? 0 : 1);
        }
        close(pipefd[1]);
        for (ssize_t k; n < (ssize_t) sizeof *ret; n += k) {
                k = read(pipefd[0], (char *) ret + n, sizeof *ret - (size_t) n);
                if (k <= 0)
                        break;
        }
        close(pipefd[0]);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        if (WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
                blocked(ret, "the child was killed by SIGSYS (seccomp)");
        else if (WIFSIGNALED(status))
                failed(ret, "the child was killed by %s", sigabbrev_np(WTERMSIG(status)) ?: "a signal");
        else if (n != (ssize_t) sizeof *ret)
                failed(ret, "the child exited (status %d) without a verdict", WEXITSTATUS(status));
        ret->detail[sizeof ret->detail - 1] = 0;
        for (char *c = ret->detail; *c; c++)
                if (*c == '\n')
                        *c = ' ';
}

static bool selected(const Probe *p) {
        return !only_control || streq(p->control, only_control);
}

static uint64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int run_battery(Battery *b) {
        unsigned n = 0, bad = 0, total = 0;

        for (size_t i = 0; i < ELEMENTSOF(probes); i++)
                total += selected(&probes[i]);
        if (total == 0) {
                fprintf(stderr, "battery: no probe belongs to the control \"%s\".\n", only_control);
                return 2;
        }
        emit("TAP version 13\n1..%u\n", total);
        emit("# battery: mode=%s uid=%u pid=%d\n", b->mode == MODE_NONE ? "none" : "daemon-only",
             (unsigned) getuid(), (int) getpid());
        for (size_t i = 0; i < ELEMENTSOF(probes); i++) {
                const Probe *p = &probes[i];
                uint64_t t0 = now_ms();
                Result r;

                if (!selected(p))
                        continue;
                n++;
                if (!(p->modes & b->mode)) {
                        r = (Result) { .verdict = VERDICT_BY_DESIGN, .detail = "opened by design in this mode" };
                        emit("ok %u - %s: %s (%s) # SKIP opened by design in this mode\n", n, p->name, p->what, p->directive);
                } else {
                        run_in_child(b, p, &r);
                        if (r.verdict == VERDICT_NOT_APPLICABLE)
                                /* Not a pass: the suite accepts it only where the unhardened
                                 * reference run says the same (tests/integration/skips.list). */
                                emit("ok %u - %s: %s (%s) # SKIP not applicable: %s\n", n, p->name, p->what,
                                     p->directive, r.detail);
                        else {
                                bad += r.verdict != VERDICT_BLOCKED;
                                emit("%s %u - %s: %s (%s)\n", r.verdict == VERDICT_BLOCKED ? "ok" : "not ok",
                                     n, p->name, p->what, p->directive);
                        }
                }
                emit("# verdict %s %s control=%s %s\n", p->name, verdict_to_string(r.verdict), p->control, r.detail);
                emit("# directive %s %s\n", p->name, p->directive);
                emit("# elapsed %s %llu ms\n", p->name, (unsigned long long) (now_ms() - t0));
        }
        emit("# battery: %u of %u probes not blocked\n", bad, n);
        return bad == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

static int parse_size(const char *s, uint64_t *ret) {
        char *end;
        unsigned long long v;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (errno || end == s)
                return -EINVAL;
        switch (*end) {
        case 'K': v <<= 10; end++; break;
        case 'M': v <<= 20; end++; break;
        case 'G': v <<= 30; end++; break;
        }
        if (*end)
                return -EINVAL;
        *ret = v;
        return 0;
}

static int parse_mode(const char *s, Mode *ret) {
        if (streq_ptr(s, "none"))
                *ret = MODE_NONE;
        else if (streq_ptr(s, "daemon-only"))
                *ret = MODE_DAEMON_ONLY;
        else
                return -EINVAL;
        return 0;
}

static int usage(void) {
        fprintf(stderr,
                "Usage: battery [--mode=none|daemon-only] --tmp-max=SIZE --shm-max=SIZE [--host-filters=N]\n"
                "               [--port=N] [--abstract=NAME] [--home-marker=PATH] [--dns-name=NAME] [--output=FILE]\n"
                "               [--only=CONTROL]\n"
                "Runs the escape battery as the agent of a cloister sandbox; the mode defaults to $CLOISTER_NETWORK.\n");
        return 2;
}

int main(int argc, char *argv[]) {
        static const struct option options[] = {
                { "mode", required_argument, NULL, 'm' },
                { "tmp-max", required_argument, NULL, 't' },
                { "shm-max", required_argument, NULL, 's' },
                { "host-filters", required_argument, NULL, 'f' },
                { "port", required_argument, NULL, 'p' },
                { "abstract", required_argument, NULL, 'a' },
                { "home-marker", required_argument, NULL, 'h' },
                { "dns-name", required_argument, NULL, 'd' },
                { "output", required_argument, NULL, 'o' },
                { "only", required_argument, NULL, 'O' },
                {}
        };
        Battery b = {
                .port = 7999, .abstract = "cloister-battery", .dns_name = "cloister-battery.test",
                .home_marker = "/home/cloister-battery/marker", .own_fds = { -1, -1, -1, -1 },
        };
        const char *mode = getenv("CLOISTER_NETWORK"), *output = NULL;
        int c;

        if (getuid() == 0 || geteuid() == 0) {
                fprintf(stderr, "battery: refusing to run as root (uid 0): it only runs as the agent of a cloister sandbox.\n");
                return 2;
        }
        while ((c = getopt_long(argc, argv, "", options, NULL)) >= 0)
                switch (c) {
                case 'm': mode = optarg; break;
                case 't': if (parse_size(optarg, &b.tmp_max) < 0) return usage(); break;
                case 's': if (parse_size(optarg, &b.shm_max) < 0) return usage(); break;
                case 'f': b.host_filters = (unsigned) atoi(optarg); break;
                case 'p': b.port = (uint16_t) atoi(optarg); break;
                case 'a': b.abstract = optarg; break;
                case 'h': b.home_marker = optarg; break;
                case 'd': b.dns_name = optarg; break;
                case 'o': output = optarg; break;
                case 'O': only_control = optarg; break;
                default: return usage();
                }
        if (optind != argc || parse_mode(mode, &b.mode) < 0 || b.tmp_max == 0 || b.shm_max == 0)
                return usage();
        if (output) {
                copy_out = fopen(output, "we");
                if (!copy_out) {
                        fprintf(stderr, "battery: cannot write %s: %s\n", output, strerror(errno));
                        return 1;
                }
                b.own_fds[0] = fileno(copy_out);
        }
        setvbuf(stdout, NULL, _IOLBF, 0);
        c = run_battery(&b);
        if (copy_out && fclose(copy_out) != 0)
                return 1;
        return c;
}
