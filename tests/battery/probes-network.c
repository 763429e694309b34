/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Network and IPC probes: devices, address families, the host's listeners, and every
 * socket reachable through the file system. */
#include <arpa/inet.h>
#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/sem.h>
#include <sys/shm.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/if_ether.h>
#include <linux/netlink.h>

#include "battery.h"
#include "macro.h"

#define BROKER_SOCKET "/run/cloister/broker.sock"
#define WALK_MAX_ENTRIES 400000

PROBE(only_lo) {
        _cleanup_fclose_ FILE *f = fopen("/proc/self/net/dev", "re");
        char line[512], others[256] = "";
        int n = 0;

        if (!f)
                return failed(r, "/proc/self/net/dev: %s", strerrorname_np(errno));
        while (fgets(line, sizeof line, f)) {
                char *name = line + strspn(line, " "), *colon = strchr(name, ':');
                if (++n <= 2 || !colon)
                        continue;
                *colon = 0;
                if (!streq(name, "lo"))
                        append(others, sizeof others, "%s ", name);
        }
        if (*others)
                opened(r, "devices besides lo: %s", others);
        else
                blocked(r, "lo only");
}

/* A family filtered by RestrictAddressFamilies= fails with EAFNOSUPPORT; any other answer
 * means the family got past the filter (the kernel may still refuse it for lack of a
 * capability, which is another directive's business). */
static void family(Result *r, int af, int type, int protocol) {
        _cleanup_close_ int fd = socket(af, type | SOCK_CLOEXEC, protocol);

        if (fd >= 0)
                opened(r, "socket() succeeded");
        else if (errno == EAFNOSUPPORT)
                blocked(r, "EAFNOSUPPORT");
        else
                opened(r, "the family passed the filter: %s", strerrorname_np(errno));
}

PROBE(af_inet) { family(r, AF_INET, SOCK_STREAM, 0); }
PROBE(af_inet6) { family(r, AF_INET6, SOCK_STREAM, 0); }
PROBE(af_netlink) { family(r, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE); }
PROBE(af_packet) { family(r, AF_PACKET, SOCK_DGRAM, htons(ETH_P_ALL)); }

static void tcp_connect(Result *r, const char *addr, uint16_t port) {
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port) };
        struct timeval tv = { .tv_sec = 3 };
        _cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

        if (fd < 0)
                return blocked(r, "no AF_INET socket: %s", strerrorname_np(errno));
        inet_pton(AF_INET, addr, &sa.sin_addr);
        (void) setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        if (connect(fd, (struct sockaddr *) &sa, sizeof sa) == 0)
                opened(r, "connected to %s:%u", addr, port);
        else
                blocked(r, "%s:%u: %s", addr, port, strerrorname_np(errno));
}

PROBE(host_loopback) { tcp_connect(r, "127.0.0.1", b->port); }
PROBE(metadata) { tcp_connect(r, "169.254.169.254", 80); }

PROBE(abstract) {
        int k = connect_unix(b->abstract, true);

        if (k == 0)
                opened(r, "connected to @%s", b->abstract);
        else
                blocked(r, "@%s: %s", b->abstract, strerrorname_np(-k));
}

PROBE(dns) {
        struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM }, *ai = NULL;
        int k = getaddrinfo(b->dns_name, NULL, &hints, &ai);

        if (k == 0) {
                char a[INET_ADDRSTRLEN] = "?";
                inet_ntop(AF_INET, &((struct sockaddr_in *) ai->ai_addr)->sin_addr, a, sizeof a);
                opened(r, "%s resolved to %s", b->dns_name, a);
                freeaddrinfo(ai);
        } else
                blocked(r, "%s: %s", b->dns_name, gai_strerror(k));
}

/* Connects to each path; open if any answers. */
static void connect_paths(Result *r, const char *const *paths, size_t n) {
        char d[sizeof r->detail] = "";
        bool any = false;

        for (size_t i = 0; i < n; i++) {
                int k = connect_unix(paths[i], false);
                any = any || k == 0;
                append(d, sizeof d, "%s: %s; ", paths[i], k == 0 ? "connected" : strerrorname_np(-k));
        }
        if (any)
                opened(r, "%s", d);
        else
                blocked(r, "%s", d);
}

PROBE(dbus) {
        static const char *const p[] = { "/run/dbus/system_bus_socket", "/var/run/dbus/system_bus_socket" };
        connect_paths(r, p, ELEMENTSOF(p));
}

PROBE(journald) {
        static const char *const p[] = { "/run/systemd/journal/socket", "/run/systemd/journal/stdout",
                                         "/run/systemd/journal/dev-log", "/dev/log" };
        connect_paths(r, p, ELEMENTSOF(p));
}

PROBE(resolved) {
        static const char *const p[] = { "/run/systemd/resolve/io.systemd.Resolve" };
        connect_paths(r, p, ELEMENTSOF(p));
}

PROBE(nscd) {
        static const char *const p[] = { "/run/nscd/socket" };
        connect_paths(r, p, ELEMENTSOF(p));
}

/* The walk's state. */
static struct {
        char connected[300];
        unsigned sockets, entries, vanished;
        bool allow_broker;
} walk;

#define WALK_MAX_DEPTH 64

/* Entries may come and go while the walk runs (other tests share the file system; the VM
 * tier sees the host's / over 9p): one that is gone, or was replaced by a symlink, between
 * reading its directory and looking at it holds no socket to connect to any more. It is
 * counted, never taken for a failure of the walk (nftw() gave up on such a race). */
static bool vanished(int err) {
        return err == ENOENT || err == ESTALE || err == ELOOP || err == ENOTDIR;
}

static void visit(int dfd, char *path, size_t len, unsigned depth) {
        _cleanup_(closedir_p) DIR *d = NULL;
        struct dirent *de;
        int fd;

        if (depth > WALK_MAX_DEPTH)
                return;
        fd = openat(dfd, len ? strrchr(path, '/') + 1 : "/", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (fd < 0) {
                walk.vanished += vanished(errno);
                return; /* EACCES: unreadable, as nftw()'s FTW_DNR */
        }
        d = fdopendir(fd);
        if (!d) {
                close(fd);
                return;
        }
        while ((de = readdir(d)) && walk.entries <= WALK_MAX_ENTRIES) {
                struct stat st;
                size_t n;

                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                walk.entries++;
                n = snprintf(path + len, PATH_MAX - len, "/%s", de->d_name);
                if (n >= PATH_MAX - len)
                        continue;
                /* /proc and /sys hold no socket files; /usr is the OS image, where no service binds
                 * one, and in the VM tier 9p makes its ~150k entries take minutes. */
                if (depth == 0 && (streq(de->d_name, "proc") || streq(de->d_name, "sys") || streq(de->d_name, "usr")))
                        continue;
                if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
                        walk.vanished += vanished(errno);
                        continue;
                }
                if (S_ISDIR(st.st_mode))
                        visit(dirfd(d), path, len + n, depth + 1);
                else if (S_ISSOCK(st.st_mode)) {
                        walk.sockets++;
                        if (!(walk.allow_broker && streq(path, BROKER_SOCKET)) && connect_unix(path, false) == 0)
                                append(walk.connected, sizeof walk.connected, "%s ", path);
                }
                path[len] = 0;
        }
}

PROBE(socket_walk) {
        char path[PATH_MAX] = "";

        walk.allow_broker = b->mode == MODE_DAEMON_ONLY;
        visit(AT_FDCWD, path, 0, 0);
        if (walk.entries > WALK_MAX_ENTRIES)
                return failed(r, "more than %u entries under /", WALK_MAX_ENTRIES);
        if (*walk.connected)
                opened(r, "%u sockets, connected: %s", walk.sockets, walk.connected);
        else
                blocked(r, "%u sockets among %u entries (not under /usr, %u gone during the walk), none connected%s",
                        walk.sockets, walk.entries, walk.vanished, walk.allow_broker ? " (the broker's not tried)" : "");
}

/* The *_INFO commands count the objects of the caller's IPC namespace. */
PROBE(sysv_ipc) {
        struct msginfo mi = {};
        struct shm_info si = {};
        struct seminfo se = {};
        union { int val; struct semid_ds *buf; unsigned short *array; struct seminfo *__buf; } arg = { .__buf = &se };

        if (msgctl(0, MSG_INFO, (struct msqid_ds *) &mi) < 0 || shmctl(0, SHM_INFO, (struct shmid_ds *) &si) < 0 ||
            semctl(0, 0, SEM_INFO, arg) < 0)
                return failed(r, "*_INFO: %s", strerrorname_np(errno));
        if (mi.msgpool > 0 || si.used_ids > 0 || se.semusz > 0)
                opened(r, "visible: %d message queues, %d shared memory segments, %d semaphore sets",
                       mi.msgpool, si.used_ids, se.semusz);
        else
                blocked(r, "no System V IPC objects");
}
