/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/sidecar.c: sidecars/<name>.sidecar (cloister.sidecar(5)) — every key, every refusal (a refused file yields
 * no sidecar and an error naming file:line and the key), the defaults from cloister.conf, the
 * socket directory contract (docs/overview.md, Files and search paths); and the units lib/profile/profile-sidecar.c renders from it. */

#include <sys/stat.h>

#include "cloister-conf.h"
#include "profile-sidecar.h"
#include "sidecar.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

#define CONF "[Sandbox]\nMemory=1G\nCPUs=2\nTasks=100\nShmSize=8M\nTimeout=10min\n"

typedef struct Load {
        int r;
        CloisterConf *conf;
        Sidecar *sc;
        char *err;
        char *path;
} Load;

static Load load(const char *conf_text, const char *file_name, const char *text) {
        static unsigned counter;
        _cleanup_free_ char *name = strprintf("sidecar-case-%u", ++counter), *rel = strprintf("sidecars/%s", file_name);
        _cleanup_free_ char *dir = test_path(tmpdir, name);
        char **dirs = test_dirs(dir, NULL);
        Load l = {};

        if (conf_text)
                free(test_write_file(dir, "cloister.conf", conf_text));
        else
                test_mkdir(dir, "sidecars");
        l.path = test_write_file(dir, rel, text);
        test_stderr_begin();
        l.r = cloister_conf_load(dirs, &l.conf);
        if (l.r >= 0)
                l.r = sidecar_load(l.path, l.conf, &l.sc);
        l.err = test_stderr_end();
        strv_free(dirs);
        return l;
}

static void load_done(Load *l) {
        sidecar_free(l->sc);
        cloister_conf_free(l->conf);
        free(l->err);
        free(l->path);
}

static const char full[] =
        "[Sidecar]\n"
        "Description=llama.cpp on the big GPU\n"
        "Exec=/usr/bin/llama-server -m /models/q.gguf --host 127.0.0.1 --port 8080\n"
        "Port=8080\n"
        "Health=/health\n"
        "StartTimeout=10min\n"
        "Memory=32G\n"
        "CPUs=8\n"
        "Tasks=512\n"
        "User=nobody\n"
        "GPUs=0,1\n"
        "ShmSize=1G\n"
        "ReadOnlyMount=/srv/models:/models\n"
        "ReadOnlyMount=/srv/lora:/lora:ro\n"
        "Environment=HOME=/tmp\n"
        "Environment=LLAMA_ARG=a \"b\" $c 100%\n"
        "MaxConnections=64\n"
        "JIT=yes\n";

static void test_every_key(void) {
        Load l = load(CONF, "inference.sidecar", full);
        Sidecar *s = l.sc;

        if (!ok(l.r >= 0 && s, "a sidecar with every key loads")) {
                diag("%s", l.err);
                load_done(&l);
                return;
        }
        is_str(s->name, "inference", "the name comes from the file name");
        is_str(s->description, "llama.cpp on the big GPU", "Description=");
        is_str(s->argv[0], "/usr/bin/llama-server", "Exec= program");
        is_int(strv_length(s->argv), 7, "Exec= split into 7 words");
        is_int(s->port, 8080, "Port=");
        is_str(s->health, "/health", "Health=");
        is_u64(s->start_timeout, 600 * USEC_PER_SEC, "StartTimeout=");
        is_u64(s->limits.memory, 32ULL << 30, "Memory=");
        is_int(s->limits.cpus_percent, 800, "CPUs=");
        is_u64(s->limits.tasks, 512, "Tasks=");
        is_str(s->user, "nobody", "User=");
        is_str(s->gpus, "0,1", "GPUs=");
        is_u64(s->limits.shm_size, 1ULL << 30, "ShmSize=");
        is_int(s->n_read_only_mounts, 2, "ReadOnlyMount= is repeatable");
        is_str(s->read_only_mounts[1].source, "/srv/lora", "ReadOnlyMount= source");
        is_str(s->read_only_mounts[1].target, "/lora", "ReadOnlyMount= target without :ro");
        is_int(strv_length(s->environment), 2, "Environment= is repeatable");
        is_str(s->environment[1], "LLAMA_ARG=a \"b\" $c 100%", "Environment= kept literally");
        is_u64(s->max_connections, 64, "MaxConnections=");
        is_int(s->jit, 1, "JIT=");
        is_str(l.err, "", "nothing logged");
        load_done(&l);
}

static void test_defaults(void) {
        Load l = load(CONF, "small.sidecar", "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\n");
        Sidecar *s = l.sc;

        if (!ok(l.r >= 0 && s, "a sidecar with Exec= and Port= only loads")) {
                diag("%s", l.err);
                load_done(&l);
                return;
        }
        ok(s->health == NULL, "Health= unset: ready when the port accepts");
        is_u64(s->start_timeout, 300 * USEC_PER_SEC, "StartTimeout= defaults to 5min");
        is_u64(s->max_connections, 256, "MaxConnections= defaults to 256");
        is_u64(s->limits.memory, 1ULL << 30, "Memory= from cloister.conf");
        is_int(s->limits.cpus_percent, 200, "CPUs= from cloister.conf");
        is_u64(s->limits.tasks, 100, "Tasks= from cloister.conf");
        is_u64(s->limits.shm_size, 8ULL << 20, "ShmSize= from cloister.conf");
        is_u64(s->limits.timeout, 0, "no wall-clock ceiling for a warm runtime (cloister.conf's Timeout= is for agents)");
        ok(s->user == NULL && s->gpus == NULL && s->n_read_only_mounts == 0 && s->jit == -1,
           "no user, GPU, mount or JIT unless asked");
        load_done(&l);
}

/* The refusal names path:line (line 0: the file only) and every needle. */
static void refused_full(const char *what, const char *conf, const char *file_name, const char *text,
                         unsigned line, const char *const *needles) {
        Load l = load(conf, file_name, text);
        _cleanup_free_ char *where = line ? strprintf("%s:%u:", l.path, line) : strdup(l.path);

        ok(l.r < 0, "%s: the sidecar is refused", what);
        ok(l.sc == NULL, "%s: no sidecar is returned", what);
        like(l.err, where, "%s: the error names %s", what, line ? "file:line" : "the file");
        for (const char *const *n = needles; n && *n; n++)
                like(l.err, *n, "%s: the error mentions \"%s\"", what, *n);
        load_done(&l);
}

#define REFUSED(what, text, line, ...) \
        refused_full(what, CONF, "bad.sidecar", text, line, (const char *const[]) { __VA_ARGS__, NULL })
/* A valid sidecar but for `line_text`, at line 4. */
#define REFUSED4(what, line_text, ...) \
        REFUSED(what, "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\n" line_text "\n", 4, __VA_ARGS__)

static void test_refusals(void) {
        REFUSED4("an unknown key", "Helth=/health", "Helth=", "Unknown key");
        REFUSED4("an unknown section", "[Sandbox]", "[Sandbox]");
        REFUSED4("a role key (Network=)", "Network=none", "Network=");
        REFUSED4("a role key (Timeout=)", "Timeout=1h", "Timeout=");
        REFUSED4("a duplicate Port=", "Port=9001", "Port=", "line 3");
        REFUSED("Exec= missing", "[Sidecar]\nPort=9000\n", 0, "Exec=", "required");
        REFUSED("Port= missing", "[Sidecar]\nExec=/usr/bin/stub\n", 0, "Port=", "required");
        REFUSED("an empty file", "", 0, "Exec=");
        REFUSED("a relative Exec=", "[Sidecar]\nExec=stub\nPort=9000\n", 2, "Exec=", "absolute");
        REFUSED("an unterminated quote in Exec=", "[Sidecar]\nExec=/usr/bin/stub \"a\nPort=9000\n", 2, "Exec=");
        REFUSED4("Port=0", "Port=0", "Port=");
        REFUSED("Port=65536", "[Sidecar]\nExec=/usr/bin/stub\nPort=65536\n", 3, "Port=", "1…65535");
        REFUSED("Port=http", "[Sidecar]\nExec=/usr/bin/stub\nPort=http\n", 3, "Port=");
        REFUSED4("Health= without a leading slash", "Health=health", "Health=", "starting with \"/\"");
        REFUSED4("Health= with a blank", "Health=/a b", "Health=");
        REFUSED4("Health= with a query marker #", "Health=/a#b", "Health=");
        REFUSED4("Health= a full URL", "Health=http://127.0.0.1:9000/health", "Health=");
        REFUSED4("StartTimeout=0", "StartTimeout=0", "StartTimeout=", "greater than 0");
        REFUSED4("StartTimeout=soon", "StartTimeout=soon", "StartTimeout=");
        REFUSED4("StartTimeout=infinity", "StartTimeout=infinity", "StartTimeout=", "infinity");
        REFUSED4("Memory=infinity", "Memory=infinity", "Memory=", "infinity");
        REFUSED4("Memory=0", "Memory=0", "Memory=");
        REFUSED4("CPUs=0", "CPUs=0", "CPUs=");
        REFUSED4("Tasks=0", "Tasks=0", "Tasks=");
        REFUSED4("ShmSize=lots", "ShmSize=lots", "ShmSize=");
        REFUSED4("User=root", "User=root", "User=", "root");
        REFUSED4("User=Bad", "User=Bad", "User=");
        REFUSED4("GPUs=some", "GPUs=some", "GPUs=");
        REFUSED4("GPUs=0,,1", "GPUs=0,,1", "GPUs=");
        REFUSED4("GPUs=2,2", "GPUs=2,2", "GPUs=", "twice");
        REFUSED4("GPUs=64", "GPUs=64", "GPUs=");
        REFUSED4("ReadOnlyMount=…:rw", "ReadOnlyMount=/srv/m:/m:rw", "ReadOnlyMount=", ":ro");
        REFUSED4("ReadOnlyMount= onto /tmp", "ReadOnlyMount=/srv/m:/tmp", "ReadOnlyMount=");
        REFUSED4("ReadOnlyMount= from /run", "ReadOnlyMount=/run/cloister:/c", "ReadOnlyMount=");
        REFUSED("two ReadOnlyMount= with the same target",
                "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\nReadOnlyMount=/srv/a:/m\nReadOnlyMount=/srv/b:/m:ro\n",
                5, "ReadOnlyMount=", "already mounts");
        REFUSED4("Environment= without =", "Environment=HOME", "Environment=", "NAME=VALUE");
        REFUSED4("Environment=CLOISTER_X=", "Environment=CLOISTER_X=1", "Environment=", "CLOISTER_");
        REFUSED4("MaxConnections=0", "MaxConnections=0", "MaxConnections=");
        REFUSED4("MaxConnections=65537", "MaxConnections=65537", "MaxConnections=", "65536");
        REFUSED4("JIT=maybe", "JIT=maybe", "JIT=");
        REFUSED4("an inline comment", "Description=a ; no", "inline comment");
        refused_full("a bad name", CONF, "Inference.sidecar", "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\n", 0,
                     (const char *const[]) { "Invalid sidecar name", NULL });
        refused_full("Memory= neither in the file nor in cloister.conf", "[Sandbox]\nCPUs=1\n", "m.sidecar",
                     "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\n", 0,
                     (const char *const[]) { "Memory= is required", NULL });
}

static void test_resets(void) {
        Load l = load(CONF, "r.sidecar",
                      "[Sidecar]\nExec=/usr/bin/stub\nPort=9000\n"
                      "ReadOnlyMount=/srv/a:/m\nReadOnlyMount=\nReadOnlyMount=/srv/b:/m\n"
                      "Environment=A=1\nEnvironment=\nEnvironment=B=2\n");

        ok(l.r >= 0 && l.sc, "an empty ReadOnlyMount=/Environment= resets the list");
        if (l.sc) {
                is_int(l.sc->n_read_only_mounts, 1, "one mount after the reset");
                is_str(l.sc->read_only_mounts[0].source, "/srv/b", "the mount after the reset");
                is_int(strv_length(l.sc->environment), 1, "one variable after the reset");
        }
        load_done(&l);
}

static void test_dir_check(void) {
        _cleanup_free_ char *dir = test_path(tmpdir, "services-x");
        bool fatal = true;

        ok(sidecar_dir_check(dir, 0, &fatal) == NULL && !fatal, "a missing socket directory is fine (systemd creates it 0555)");
        if (mkdir(dir, 0555) < 0 || chmod(dir, 0555) < 0)
                tap_bail_out("mkdir");
        /* The owner is a parameter (root live, the image's owner under cloisterctl --root):
         * both answers are checked whoever runs the test. */
        ok(sidecar_dir_check(dir, geteuid() + 1, &fatal) != NULL && fatal, "owned by someone else than the owner asked for: refused");
        ok(sidecar_dir_check(dir, geteuid(), &fatal) == NULL && !fatal, "owned by the owner asked for, 0555: as it must be");
        if (geteuid() != 0)
                like(sidecar_dir_check(dir, 0, &fatal), "not owned by root", "live (owner root), not root-owned: refused, saying so");
        chmod(dir, 0755);
        like(sidecar_dir_check(dir, geteuid(), &fatal), "0555", "0755: a warning naming 0555");
        ok(!fatal, "0755: a warning, not a refusal (only the owner can write)");
        chmod(dir, 0757);
        ok(sidecar_dir_check(dir, geteuid(), &fatal) != NULL && fatal, "0757 (writable by others): refused");
        chmod(dir, 0775);
        ok(sidecar_dir_check(dir, geteuid(), &fatal) != NULL && fatal, "0775 (writable by the group): refused");
        rmdir(dir);
        free(test_write_file(tmpdir, "services-x", "not a dir"));
        ok(sidecar_dir_check(dir, geteuid(), &fatal) != NULL && fatal, "a file in the directory's place: refused");
}

static bool has(const UnitSettings *s, const char *section, const char *key, const char *value) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].section, section) && streq(s->items[i].key, key) && streq(s->items[i].value, value))
                        return true;
        return false;
}

static bool has_part(const UnitSettings *s, const char *section, const char *key, const char *part) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].section, section) && streq(s->items[i].key, key) && strstr(s->items[i].value, part))
                        return true;
        return false;
}

static size_t count(const UnitSettings *s, const char *section, const char *key) {
        size_t n = 0;
        for (size_t i = 0; i < s->n; i++)
                n += streq(s->items[i].section, section) && streq(s->items[i].key, key);
        return n;
}

static void test_units(void) {
        Load l = load(CONF, "inference.sidecar", full);
        UnitSettings sock = {}, proxy = {}, rt = {};

        if (!l.sc || profile_sidecar_socket(l.sc, &sock) < 0 || profile_sidecar_proxy(l.sc, &proxy) < 0 ||
            profile_sidecar_runtime(l.sc, &rt) < 0) {
                ok(false, "the three units render");
                load_done(&l);
                return;
        }
        ok(has(&sock, "Socket", "ListenStream", "/run/cloister/services/inference/service.sock"), "socket: ListenStream=");
        ok(has(&sock, "Socket", "SocketMode", "0666"), "socket: SocketMode=0666");
        ok(has(&sock, "Socket", "DirectoryMode", "0555"), "socket: DirectoryMode=0555");
        ok(has(&sock, "Socket", "Service", "sidecar@inference.service"), "socket: Service=sidecar@inference.service");

        ok(has(&proxy, "Service", "ExecStart", PKGLIBEXECDIR "/cloister-sidecar --port=8080 --health=/health --start-timeout=600s --max-connections=64 inference"),
           "proxy: the contract's command line");
        ok(has(&proxy, "Unit", "JoinsNamespaceOf", "sidecar-runtime@inference.service"), "proxy: joins the runtime's namespace");
        ok(has(&proxy, "Service", "PrivateNetwork", "yes"), "proxy: PrivateNetwork=yes (needed to join)");
        ok(has(&proxy, "Unit", "Wants", "sidecar-runtime@inference.service") &&
           has(&proxy, "Unit", "After", "sidecar-runtime@inference.service"), "proxy: wants and follows the runtime");
        ok(has(&proxy, "Service", "DynamicUser", "yes") && has(&proxy, "Service", "CapabilityBoundingSet", ""),
           "proxy: dynamic user, no capabilities");
        ok(count(&proxy, "Service", "ExecStart") == 1, "proxy: one ExecStart= (the agent's shim line is not there)");

        ok(has(&rt, "Service", "ExecStart", "\"/usr/bin/llama-server\" \"-m\" \"/models/q.gguf\" \"--host\" \"127.0.0.1\" \"--port\" \"8080\""),
           "runtime: Exec= quoted word by word");
        ok(count(&rt, "Service", "ExecStart") == 1, "runtime: one ExecStart=");
        ok(has(&rt, "Service", "PrivateNetwork", "yes"), "runtime: own network namespace");
        ok(has(&rt, "Service", "IPAddressDeny", "any") && has(&rt, "Service", "IPAddressAllow", "localhost"),
           "runtime: no address but loopback");
        ok(has(&rt, "Service", "RestrictAddressFamilies", "AF_UNIX") && has(&rt, "Service", "RestrictAddressFamilies", "AF_INET AF_INET6"),
           "runtime: AF_UNIX AF_INET AF_INET6");
        ok(has(&rt, "Service", "Restart", "on-failure") && count(&rt, "Service", "Restart") == 1, "runtime: Restart=on-failure only");
        ok(has(&rt, "Service", "DynamicUser", "no") && has(&rt, "Service", "User", "nobody"), "runtime: User=");
        ok(has(&rt, "Service", "MemoryDenyWriteExecute", "no"), "runtime: JIT=yes lifts MemoryDenyWriteExecute=");
        ok(has(&rt, "Service", "MemoryMax", "34359738368") && has(&rt, "Service", "CPUQuota", "800%") &&
           has(&rt, "Service", "TasksMax", "512"), "runtime: limits");
        ok(count(&rt, "Service", "RuntimeMaxSec") == 0, "runtime: no wall-clock ceiling");
        ok(has(&rt, "Service", "TemporaryFileSystem", "/dev/shm:size=1073741824,mode=1777,nosuid,nodev,noexec"), "runtime: ShmSize=");
        ok(has(&rt, "Service", "BindReadOnlyPaths", "-/srv/models:/models") && has(&rt, "Unit", "RequiresMountsFor", "/srv/models"),
           "runtime: ReadOnlyMount= bound read-only after its file system");
        ok(has_part(&rt, "Service", "ExecStartPre", "/proc/self/mountinfo") &&
           has_part(&rt, "Service", "ExecStartPre", "ReadOnlyMount= source $$1 is missing, so nothing is mounted at $$2") &&
           has_part(&rt, "Service", "ExecStartPre", " sh \"/srv/models\" \"/models\""),
           "runtime: a start check in the sandbox names a missing ReadOnlyMount= source");
        ok(!has_part(&rt, "Service", "ExecStartPre", "+"), "runtime: no start check runs with full privileges");
        ok(has(&rt, "Service", "Environment", "\"LLAMA_ARG=a \\\"b\\\" $c 100%%\""), "runtime: Environment= quoted, $ literal, %% escaped");
        ok(has(&rt, "Service", "SystemCallFilter", "@system-service"), "runtime: the syscall filter");
        for (unsigned i = 0; i < 2; i++) {
                _cleanup_free_ char *allow = strprintf("/dev/nvidia%u rw", i), *bind = strprintf("-/dev/nvidia%u", i),
                        *check = strprintf("sh \"/dev/nvidia%u\"", i);
                ok(has(&rt, "Service", "DeviceAllow", allow) && has(&rt, "Service", "BindReadOnlyPaths", bind) &&
                   has_part(&rt, "Service", "ExecStartPre", check), "runtime: GPUs=0,1 grants, binds and checks /dev/nvidia%u", i);
        }
        ok(!has(&rt, "Service", "DeviceAllow", "/dev/nvidia2 rw"), "runtime: no other GPU");
        ok(has(&rt, "Service", "PrivateDevices", "yes") && has(&rt, "Service", "DevicePolicy", "closed"),
           "runtime: the private /dev and closed device policy stay");
        unit_settings_done(&sock);
        unit_settings_done(&proxy);
        unit_settings_done(&rt);
        load_done(&l);
}

static void test_gpus_render(void) {
        UnitSettings s = {};

        ok(profile_add_gpus(&s, NULL, "x") >= 0 && s.n == 0, "no GPUs=: nothing");
        ok(profile_add_gpus(&s, "3", "x") >= 0, "GPUs=3 renders");
        ok(has(&s, "Service", "DeviceAllow", "/dev/nvidiactl rw") && has_part(&s, "Service", "ExecStartPre", "sh \"/dev/nvidiactl\""),
           "nvidiactl granted and checked");
        ok(has(&s, "Service", "DeviceAllow", "/dev/nvidia-uvm rw") && has(&s, "Service", "BindReadOnlyPaths", "-/dev/nvidia-uvm"),
           "nvidia-uvm granted and bound");
        ok(has(&s, "Service", "BindReadOnlyPaths", "-/dev/nvidia-uvm-tools") && !has_part(&s, "Service", "ExecStartPre", "nvidia-uvm-tools"),
           "nvidia-uvm-tools optional");
        ok(count(&s, "Service", "ExecStartPre") == 3, "three checks (ctl, uvm, GPU 3)");
        ok(has_part(&s, "Service", "ExecStartPre", "/bin/sh -c \"test -c \\\"$$1\\\" || ") &&
           !has_part(&s, "Service", "ExecStartPre", "+/bin/sh"),
           "the device checks run in the sandbox (no \"+\"), $1 escaped for systemd");
        ok(has(&s, "Service", "DeviceAllow", "/dev/nvidia3 rw") && count(&s, "Service", "DeviceAllow") == 4,
           "GPU 3 and nothing else");
        ok(!has(&s, "Service", "PrivateDevices", "no") && count(&s, "Service", "DevicePolicy") == 0,
           "the private /dev is not lifted");
        unit_settings_done(&s);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_every_key();
        test_defaults();
        test_refusals();
        test_resets();
        test_dir_check();
        test_units();
        test_gpus_render();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
