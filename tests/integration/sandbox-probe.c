/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Runs inside an agent sandbox and reports, one "name=result" line each, what it could do.
 * "ok" means the operation succeeded (the surface is open); anything else is the errno
 * name that stopped it. The test script on the host side decides what each mode expects,
 * and runs every probe once more in a deliberately weakened unit, where it must flip. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/io_uring.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <unistd.h>

static FILE *out;

#define streq_(a, b) (strcmp((a), (b)) == 0)

static const char *res(long r) {
        static char buf[64];
        if (r >= 0)
                return "ok";
        snprintf(buf, sizeof buf, "%s", strerrorname_np(errno) ?: "E?");
        return buf;
}

static void report(const char *name, const char *value) {
        fprintf(out, "%s=%s\n", name, value);
}

static void probe_netdevs(void) {
        FILE *f = fopen("/proc/self/net/dev", "re");
        char line[512], list[1024] = "";
        int n = 0;

        if (!f) {
                report("netdevs", res(-1));
                return;
        }
        while (fgets(line, sizeof line, f)) {
                char *name = line + strspn(line, " "), *c = strchr(name, ':');
                if (++n <= 2 || !c)
                        continue;
                *c = 0;
                if (*list)
                        strncat(list, ",", sizeof list - strlen(list) - 1);
                strncat(list, name, sizeof list - strlen(list) - 1);
        }
        fclose(f);
        report("netdevs", list);
}

static void probe_inet(int port) {
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t) port),
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        struct timeval tv = { .tv_sec = 2 };

        report("af_inet", res(fd));
        if (fd < 0) {
                report("connect_host_loopback", res(fd));
                return;
        }
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
        report("connect_host_loopback", res(connect(fd, (struct sockaddr *) &sa, sizeof sa)));
        close(fd);
}

static void probe_unix(const char *name, const char *path, bool abstract) {
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = { .sun_family = AF_UNIX };
        socklen_t len;

        if (fd < 0) {
                report(name, res(fd));
                return;
        }
        if (abstract) {
                strncpy(sa.sun_path + 1, path, sizeof sa.sun_path - 2);
                len = (socklen_t) (offsetof(struct sockaddr_un, sun_path) + 1 + strlen(path));
        } else {
                strncpy(sa.sun_path, path, sizeof sa.sun_path - 1);
                len = sizeof sa;
        }
        report(name, res(connect(fd, (struct sockaddr *) &sa, len)));
        close(fd);
}

static void list_tree(const char *dir, char *acc, size_t size) {
        DIR *d = opendir(dir);
        struct dirent *de;

        if (!d)
                return;
        while ((de = readdir(d))) {
                char p[4096];
                if (streq_(de->d_name, ".") || streq_(de->d_name, ".."))
                        continue;
                snprintf(p, sizeof p, "%s/%s", dir, de->d_name);
                if (*acc)
                        strncat(acc, ",", size - strlen(acc) - 1);
                strncat(acc, p, size - strlen(acc) - 1);
                if (de->d_type == DT_DIR)
                        list_tree(p, acc, size);
        }
        closedir(d);
}

static void probe_run(void) {
        static char acc[16384];
        acc[0] = 0;
        list_tree("/run", acc, sizeof acc);
        report("run_entries", acc);
}

static void probe_write(const char *name, const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        report(name, res(fd));
        if (fd >= 0) {
                close(fd);
                unlink(path);
        }
}

static void probe_exists(const char *name, const char *path) {
        struct stat st;
        report(name, stat(path, &st) == 0 ? "present" : "absent");
}

/* Fills `dir` until a write fails; reports "ERRNO@MiB written". */
static void probe_fill(const char *name, const char *dir, long max_mib) {
        static char block[1 << 20];
        char path[256], buf[64];
        long mib = 0;
        int fd, err = 0;

        snprintf(path, sizeof path, "%s/probe-fill", dir);
        fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fd < 0) {
                report(name, res(fd));
                return;
        }
        memset(block, 'x', sizeof block);
        for (; mib < max_mib; mib++) {
                ssize_t n = write(fd, block, sizeof block);
                if (n != (ssize_t) sizeof block) {
                        err = n < 0 ? errno : ENOSPC;
                        break;
                }
        }
        close(fd);
        unlink(path);
        snprintf(buf, sizeof buf, "%s@%ld", err ? strerrorname_np(err) : "ok", mib);
        report(name, buf);
}

static void probe_status(void) {
        FILE *f = fopen("/proc/self/status", "re");
        char line[256], caps[256] = "";

        while (f && fgets(line, sizeof line, f)) {
                char *v = strchr(line, ':');
                if (!v)
                        continue;
                *v++ = 0;
                v += strspn(v, " \t");
                v[strcspn(v, "\n")] = 0;
                if (!strncmp(line, "Cap", 3)) {
                        if (*caps)
                                strncat(caps, ",", sizeof caps - strlen(caps) - 1);
                        strncat(caps, v, sizeof caps - strlen(caps) - 1);
                } else if (streq_(line, "NoNewPrivs"))
                        report("no_new_privs", v);
                else if (streq_(line, "Seccomp"))
                        report("seccomp", v);
                else if (streq_(line, "Seccomp_filters"))
                        report("seccomp_filters", v);
        }
        if (f)
                fclose(f);
        report("capabilities", strspn(caps, "0,") == strlen(caps) ? "none" : caps);
}

static void probe_syscalls(void) {
        struct io_uring_params p = {};
        char buf[8];
        struct iovec l = { buf, sizeof buf }, r = { buf, sizeof buf };
        pid_t sibling;

        report("io_uring_setup", res(syscall(SYS_io_uring_setup, 1, &p)));
        report("keyctl", res(syscall(SYS_keyctl, 0 /* KEYCTL_GET_KEYRING_ID */, -3 /* session */, 0)));
        report("add_key", res(syscall(SYS_add_key, "user", "cloister-probe", "x", 1, -3)));
        report("userfaultfd", res(syscall(SYS_userfaultfd, O_CLOEXEC)));
        report("personality", res(syscall(SYS_personality, 0x0400000 /* READ_IMPLIES_EXEC */)));
        report("setuid", res(syscall(SYS_setuid, 0)));

        sibling = fork();
        if (sibling == 0) {
                pause();
                _exit(0);
        }
        report("process_vm_readv", res(syscall(SYS_process_vm_readv, sibling, &l, 1, &r, 1, 0)));
        report("kcmp", res(syscall(SYS_kcmp, getpid(), sibling, 0 /* KCMP_FILE */, 0, 0)));
        report("ptrace_sibling", res(ptrace(PTRACE_ATTACH, sibling, 0, 0)));
        kill(sibling, SIGKILL);
        waitpid(sibling, NULL, 0);

        /* in a child: success would change this process */
        pid_t c = fork();
        if (c == 0) {
                long u = unshare(CLONE_NEWUSER);
                _exit(u == 0 ? 0 : errno);
        }
        int st = 0;
        waitpid(c, &st, 0);
        errno = WEXITSTATUS(st);
        report("unshare_user", res(WEXITSTATUS(st) == 0 ? 0 : -1));
}

int main(int argc, char *argv[]) {
        int port = 0;
        long tmp_mib = 256;
        const char *abstract = "cloister-probe", *outpath = NULL;
        char buf[32];
        int c;

        while ((c = getopt(argc, argv, "p:a:m:o:")) >= 0)
                switch (c) {
                case 'p': port = atoi(optarg); break;
                case 'a': abstract = optarg; break;
                case 'm': tmp_mib = atol(optarg); break;
                case 'o': outpath = optarg; break;
                default: return 2;
                }
        out = outpath ? fopen(outpath, "we") : stdout;
        if (!out)
                return 1;
        setvbuf(out, NULL, _IOLBF, 0);

        snprintf(buf, sizeof buf, "%u", (unsigned) geteuid());
        report("uid", buf);
        probe_status();
        probe_netdevs();
        probe_inet(port);
        probe_unix("connect_abstract", abstract, true);
        probe_unix("connect_broker", "/run/cloister/broker.sock", false);
        probe_run();
        probe_write("write_root", "/probe-write");
        probe_write("write_usr", "/usr/probe-write");
        probe_write("write_etc", "/etc/probe-write");
        probe_write("write_input", "/input/probe-write");
        probe_write("write_output", "/output/probe-write");
        probe_write("write_workspace", "/workspace/probe-write");
        probe_write("write_workspace_git", "/workspace/.git/probe-write");
        probe_exists("host_tmp_marker", "/tmp/cloister-host-marker");
        probe_exists("host_shm_marker", "/dev/shm/cloister-host-marker");
        probe_exists("sys_class_net_lo", "/sys/class/net/lo");
        probe_exists("dev_mqueue", "/dev/mqueue/.");
        probe_fill("fill_tmp", "/tmp", tmp_mib);
        probe_fill("fill_var_tmp", "/var/tmp", tmp_mib);
        probe_fill("fill_dev_shm", "/dev/shm", tmp_mib);
        probe_syscalls();
        report("done", "yes");
        return 0;
}
