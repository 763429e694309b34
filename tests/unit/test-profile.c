/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/profile/profile.c: the locked profile (cloister.role(5), THE LOCKED PROFILE) — the static part every agent@ unit shares and what each
 * role's keys add to it (cloister.role(5): the keys, NETWORK MODES, DURABILITY AND FAILURE). */

#include "exit-status.h"
#include "profile.h"
#include "systemd-version.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

/* True if some Section/Key has exactly `value`. */
static bool has(const UnitSettings *s, const char *section, const char *key, const char *value) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].section, section) && streq(s->items[i].key, key) &&
                    streq(s->items[i].value, value))
                        return true;
        return false;
}

/* True if some Section/Key value contains `part`. */
static bool has_part(const UnitSettings *s, const char *section, const char *key, const char *part) {
        for (size_t i = 0; i < s->n; i++)
                if (streq(s->items[i].section, section) && streq(s->items[i].key, key) &&
                    strstr(s->items[i].value, part))
                        return true;
        return false;
}

/* A bind of `source` at `target` with `key`, with or without the "-" that tolerates a missing
 * source (the shim checks mount sources itself). */
static bool has_bind(const UnitSettings *s, const char *key, const char *source, const char *target) {
        char *a = strprintf("%s:%s", source, target), *b = strprintf("-%s:%s", source, target);
        bool found = a && b && (has(s, "Service", key, a) || has(s, "Service", key, b));

        free(a);
        free(b);
        return found;
}

static bool has_key(const UnitSettings *s, const char *section, const char *key) {
        return unit_settings_get(s, section, key) != NULL;
}

/* True if any value of any key contains `part`. */
static bool anywhere(const UnitSettings *s, const char *part) {
        for (size_t i = 0; i < s->n; i++)
                if (strstr(s->items[i].value, part))
                        return true;
        return false;
}

static void dump(const UnitSettings *s) {
        for (size_t i = 0; i < s->n; i++)
                diag("  [%s] %s=%s", s->items[i].section, s->items[i].key, s->items[i].value);
}

#define HAS(s, sec, key, val) \
        do { if (!ok(has(s, sec, key, val), key "=" val)) dump(s); } while (0)

static void test_static(void) {
        UnitSettings s = {};
        const char *filter = NULL;

        if (!is_int(profile_static(&s), 0, "profile_static() succeeds"))
                return;
        HAS(&s, "Service", "Type", "exec");
        HAS(&s, "Service", "NotifyAccess", "none");
        HAS(&s, "Service", "PrivateNetwork", "yes");
        HAS(&s, "Service", "DynamicUser", "yes");
        HAS(&s, "Service", "PrivateUsers", "yes");
        HAS(&s, "Service", "NoNewPrivileges", "yes");
        HAS(&s, "Service", "ProtectSystem", "strict");
        HAS(&s, "Service", "ProtectHome", "yes");
        HAS(&s, "Service", "PrivateTmp", "yes");
        HAS(&s, "Service", "PrivateDevices", "yes");
        HAS(&s, "Service", "ProtectKernelTunables", "yes");
        HAS(&s, "Service", "ProtectKernelModules", "yes");
        HAS(&s, "Service", "ProtectKernelLogs", "yes");
        HAS(&s, "Service", "ProtectClock", "yes");
        HAS(&s, "Service", "ProtectHostname", "yes");
        HAS(&s, "Service", "ProtectControlGroups", "yes");
        HAS(&s, "Service", "ProtectProc", "invisible");
        HAS(&s, "Service", "RestrictNamespaces", "yes");
        HAS(&s, "Service", "RestrictSUIDSGID", "yes");
        HAS(&s, "Service", "RestrictRealtime", "yes");
        HAS(&s, "Service", "LockPersonality", "yes");
        HAS(&s, "Service", "MemoryDenyWriteExecute", "yes");
        HAS(&s, "Service", "SystemCallArchitectures", "native");
        HAS(&s, "Service", "UMask", "0077");
        HAS(&s, "Service", "MemorySwapMax", "0");
        HAS(&s, "Service", "CapabilityBoundingSet", "");
        HAS(&s, "Service", "AmbientCapabilities", "");
        HAS(&s, "Service", "TemporaryFileSystem", "/run:ro");
        HAS(&s, "Service", "RestrictAddressFamilies", "AF_UNIX");
        HAS(&s, "Service", "IPAddressDeny", "any");
        HAS(&s, "Service", "Restart", "no");
        HAS(&s, "Service", "SystemCallFilter", "@system-service");
        /* The rest of the locked rows (tests/mutation: each row removed must fail a test). */
        HAS(&s, "Service", "KillMode", "mixed");
        HAS(&s, "Service", "SecureBits", "noroot-locked");
        HAS(&s, "Service", "DevicePolicy", "closed");
        HAS(&s, "Service", "PrivateIPC", "yes");
        HAS(&s, "Service", "PrivateMounts", "yes");
        HAS(&s, "Service", "ProcSubset", "pid");
        HAS(&s, "Service", "KeyringMode", "private");
        HAS(&s, "Service", "RemoveIPC", "yes");
        HAS(&s, "Service", "LimitCORE", "0");
        HAS(&s, "Service", "SystemCallErrorNumber", "EPERM");
        HAS(&s, "Service", "InaccessiblePaths", "-/dev/mqueue -/dev/hugepages -/sys/class/net -/sys/devices/virtual/net");
        ok(has(&s, "Service", "ExecStart", CLOISTER_SHIM_PATH " --unconfigured=%i"), "ExecStart= the shim, unconfigured until a drop-in names the role");

        for (size_t i = 0; i < s.n; i++)
                if (streq(s.items[i].key, "SystemCallFilter") && s.items[i].value[0] == '~')
                        filter = s.items[i].value;
        ok(filter != NULL, "a SystemCallFilter=~… deny line follows the allow-list");
        if (filter) {
                like(filter, "io_uring_setup", "the deny line contains io_uring_setup");
                like(filter, "keyctl", "the deny line contains keyctl");
                like(filter, "userfaultfd", "the deny line contains userfaultfd");
                ok(!strstr(filter, "  ") && filter[strlen(filter) - 1] != ' ', "the deny line is blank-separated, no trailing blank");
        }
        ok(!anywhere(&s, "AF_INET"), "the static profile allows no AF_INET");
        ok(!has_key(&s, "Service", "User"), "no User= in the static profile");
        HAS(&s, "Unit", "StartLimitIntervalSec", "0");
        unit_settings_done(&s);
}

/* Loads a role (with cloister.conf `conf`) and renders its drop-in settings. */
typedef struct Rendered {
        RoleLoad load;
        UnitSettings s;
        int r;
} Rendered;

static Rendered render(const char *conf, const char *role_text, ...) __attribute__((sentinel));
static Rendered render(const char *conf, const char *role_text, ...) {
        Rendered x = {};
        const char *rel, *content;
        va_list ap;

        va_start(ap, role_text);
        rel = va_arg(ap, const char *);
        content = rel ? va_arg(ap, const char *) : NULL;
        va_end(ap);

        x.load = test_role_load(tmpdir, conf, "agent.role", role_text, rel, content, NULL);
        if (!x.load.role) {
                diag("role refused:\n%s", x.load.err);
                x.r = x.load.r ?: -EINVAL;
                return x;
        }
        x.r = profile_role(x.load.role, x.load.conf, &x.s);
        return x;
}

static void rendered_done(Rendered *x) {
        unit_settings_done(&x->s);
        test_role_load_done(&x->load);
}

#define BASE_CONF "[Sandbox]\nMemory=1G\n[Broker]\nSocket=/run/cloister/broker.sock\n"

static void test_modes(void) {
        Rendered x;

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=none\n", NULL);
        if (is_int(x.r, 0, "none: rendered")) {
                ok(!anywhere(&x.s, "AF_INET"), "none: no AF_INET");
                ok(!has(&x.s, "Service", "PrivateNetwork", "no"), "none: PrivateNetwork= stays yes");
                ok(!anywhere(&x.s, SANDBOX_BROKER_SOCKET), "none: no broker socket");
                ok(!has_key(&x.s, "Service", "IPAddressAllow"), "none: no IPAddressAllow=");
                ok(has_part(&x.s, "Service", "ExecStart", "--network=none"), "none: the shim is told the mode");
        }
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\n", NULL);
        if (is_int(x.r, 0, "daemon-only: rendered")) {
                ok(has_part(&x.s, "Service", "RestrictAddressFamilies", "AF_INET"), "daemon-only: AF_INET for the loopback relay");
                ok(!has(&x.s, "Service", "PrivateNetwork", "no"), "daemon-only: PrivateNetwork= stays yes");
                ok(has(&x.s, "Service", "IPAddressAllow", "localhost"), "daemon-only: IPAddressAllow=localhost");
                ok(has_bind(&x.s, "BindReadOnlyPaths", "/run/cloister/broker.sock", SANDBOX_BROKER_SOCKET),
                   "daemon-only: the broker socket is bound read-only at " SANDBOX_BROKER_SOCKET);
                ok(has_part(&x.s, "Service", "ExecStart", "--network=daemon-only"), "daemon-only: the shim is told the mode");
        }
        rendered_done(&x);

        x = render("[Sandbox]\nMemory=1G\n", "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=daemon-only\n", NULL);
        if (is_int(x.r, 0, "daemon-only without [Broker] Socket=: rendered"))
                ok(!anywhere(&x.s, SANDBOX_BROKER_SOCKET), "daemon-only without [Broker] Socket=: no socket, fully isolated");
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=egress\n", NULL);
        if (is_int(x.r, 0, "egress: rendered")) {
                ok(has(&x.s, "Service", "PrivateNetwork", "no"), "egress: PrivateNetwork=no");
                ok(has_part(&x.s, "Service", "RestrictAddressFamilies", "AF_INET"), "egress: AF_INET");
                ok(has(&x.s, "Service", "IPAddressDeny", ""), "egress: the static IPAddressDeny=any is reset");
                ok(has(&x.s, "Service", "IPAddressDeny", "localhost link-local multicast"),
                   "egress: IPAddressDeny=localhost link-local multicast");
                is_str(unit_settings_get(&x.s, "Service", "IPAddressDeny"), "localhost link-local multicast",
                       "egress: the deny list comes after the reset");
                ok(!anywhere(&x.s, SANDBOX_BROKER_SOCKET), "egress: no broker socket");
        }
        rendered_done(&x);

        x = render("[Sandbox]\nMemory=1G\nAllowHostNetwork=yes\n", "[Role]\nExec=/bin/true\n[Sandbox]\nNetwork=host\n", NULL);
        if (is_int(x.r, 0, "host: rendered")) {
                ok(has(&x.s, "Service", "PrivateNetwork", "no"), "host: PrivateNetwork=no");
                ok(has_part(&x.s, "Service", "RestrictAddressFamilies", "AF_INET"), "host: AF_INET");
                is_str(unit_settings_get(&x.s, "Service", "IPAddressDeny"), "", "host: IPAddressDeny= reset, nothing denied");
                ok(has_part(&x.s, "Service", "ExecStart", "--network=host"), "host: the shim is told the mode");
        }
        rendered_done(&x);
}

static void test_role_keys(void) {
        Rendered x;

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nJIT=yes\n", NULL);
        if (is_int(x.r, 0, "JIT=yes: rendered"))
                ok(has(&x.s, "Service", "MemoryDenyWriteExecute", "no"), "JIT=yes: MemoryDenyWriteExecute=no");
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nJIT=no\n", NULL);
        if (is_int(x.r, 0, "JIT=no: rendered"))
                ok(!has(&x.s, "Service", "MemoryDenyWriteExecute", "no"), "JIT=no: MemoryDenyWriteExecute= stays yes");
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\nUser=agent-user\n", NULL);
        if (is_int(x.r, 0, "User=: rendered")) {
                ok(has(&x.s, "Service", "User", "agent-user"), "User=agent-user");
                ok(has(&x.s, "Service", "DynamicUser", "no"), "User= turns DynamicUser= off");
        }
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n", NULL);
        if (is_int(x.r, 0, "no User=: rendered")) {
                ok(!has_key(&x.s, "Service", "User"), "no User=: no User= line");
                ok(!has(&x.s, "Service", "DynamicUser", "no"), "no User=: DynamicUser= stays yes");
                ok(!has_key(&x.s, "Service", "Restart") || streq(unit_settings_get(&x.s, "Service", "Restart"), "no"),
                   "transient: never restarted (Restart= stays no)");
                ok(!has(&x.s, "Service", "StateDirectory", "cloister/agent"), "transient: no StateDirectory=cloister/<role>");
                ok(has(&x.s, "Service", "StateDirectory", "cloister-output/agent"),
                   "no Output=: systemd makes the output directory (StateDirectory=cloister-output/<role>)");
                ok(has_bind(&x.s, "BindPaths", "/var/lib/private/cloister-output/agent", "/output"),
                   "no Output=: the dynamic user's state directory is bound writable at /output");
                ok(has_part(&x.s, "Service", "ExecStart", "--expect-mount=Output=/var/lib/private/cloister-output/agent:/output"),
                   "no Output=: the shim checks that /output is mounted");
        }
        rendered_done(&x);

        /* 257 id-maps the managed directory only at its own mount point: the bind at /output
         * needs the "other" write bit there, and only there (docs/profile.md). */
        for (unsigned v = 252; v <= 257; v += 5) {
                systemd_version_set(v);
                x = render(BASE_CONF, "[Role]\nExec=/bin/true\n", NULL);
                if (is_int(x.r, 0, "systemd %u, no Output=: rendered", v)) {
                        if (v >= 257)
                                ok(has(&x.s, "Service", "StateDirectoryMode", "1777"),
                                   "systemd %u, no Output=: StateDirectoryMode=1777 (the bind at /output shows the directory as nobody's)", v);
                        else
                                ok(!has_key(&x.s, "Service", "StateDirectoryMode"),
                                   "systemd %u, no Output=: systemd's default mode (it chowns the directory to the dynamic user)", v);
                }
                rendered_done(&x);
                x = render(BASE_CONF, "[Role]\nExec=/bin/true\nDurability=durable\n", NULL);
                if (is_int(x.r, 0, "systemd %u, durable: rendered", v)) {
                        ok(has(&x.s, "Service", "RestartSec", "2s"), "systemd %u, durable: RestartSec=2s (no start limit ends a crash loop)", v);
                        if (v >= 254)
                                ok(has(&x.s, "Service", "RestartSteps", "5") && has(&x.s, "Service", "RestartMaxDelaySec", "1min"),
                                   "systemd %u, durable: the delay grows to 1min in 5 steps", v);
                        else
                                ok(!has_key(&x.s, "Service", "RestartSteps") && !has_key(&x.s, "Service", "RestartMaxDelaySec"),
                                   "systemd %u, durable: no RestartSteps=/RestartMaxDelaySec= (254+)", v);
                }
                rendered_done(&x);
                x = render(BASE_CONF, "[Role]\nExec=/bin/true\nUser=nobody\n", NULL);
                if (is_int(x.r, 0, "systemd %u, User=: rendered", v))
                        ok(!has_key(&x.s, "Service", "StateDirectoryMode"),
                           "systemd %u, User=: systemd's default mode (a named user owns its directory)", v);
                rendered_done(&x);
        }
        systemd_version_set(0);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\nDurability=durable\n", NULL);
        if (is_int(x.r, 0, "durable: rendered")) {
                ok(has(&x.s, "Service", "Restart", "on-failure"), "durable: Restart=on-failure");
                ok(has(&x.s, "Service", "RestartPreventExitStatus", "124 125 126 127"),
                   "durable: RestartPreventExitStatus=124 125 126 127");
                ok(has(&x.s, "Service", "RestartPreventExitStatus", CLOISTER_EXIT_TERMINAL_LIST),
                   "durable: the terminal list of exit-status.h");
                ok(has(&x.s, "Service", "StateDirectory", "cloister/agent"), "durable: StateDirectory=cloister/<role>");
        }
        rendered_done(&x);

        x = render(BASE_CONF,
                   "[Role]\nExec=/bin/true\nProject=webapp\n"
                   "[Sandbox]\nInput=/srv/in\nOutput=/srv/out\n"
                   "ReadOnlyMount=/srv/datasets:/data\nReadOnlyMount=/srv/models:/models:ro\n",
                   "projects/webapp.project", "[Project]\nWorkspace=/srv/projects/webapp\n",
                   NULL);
        if (is_int(x.r, 0, "mounts: rendered")) {
                const char *pre = unit_settings_get(&x.s, "Service", "ExecStartPre");
                ok(has_bind(&x.s, "BindReadOnlyPaths", CLOISTER_STAGE_DIR "/agent/input", "/input"), "Input= is bound read-only at /input");
                ok(has_bind(&x.s, "BindPaths", CLOISTER_STAGE_DIR "/agent/output", "/output"), "Output= is bound writable at /output");
                ok(has_bind(&x.s, "BindPaths", CLOISTER_STAGE_DIR "/agent/workspace", "/workspace"), "the workspace is bound writable at /workspace");
                ok(has_bind(&x.s, "BindReadOnlyPaths", CLOISTER_STAGE_DIR "/agent/workspace-git", "/workspace/.git"),
                   "the workspace's .git is bound read-only");
                ok(has_bind(&x.s, "BindReadOnlyPaths", CLOISTER_STAGE_DIR "/agent/ro-0", "/data"), "ReadOnlyMount= is bound read-only");
                ok(has_bind(&x.s, "BindReadOnlyPaths", CLOISTER_STAGE_DIR "/agent/ro-1", "/models"), "ReadOnlyMount= with :ro is bound read-only");
                is_str(pre, "+" CLOISTER_STAGE_PATH " start agent --tmp=/run/cloister/tmp/agent:67108864 "
                       "--tmp=/run/cloister/var-tmp/agent:67108864 Input:input:/srv/in Output:output:/srv/out "
                       "Workspace:workspace:/srv/projects/webapp Workspace:workspace-git:/srv/projects/webapp/.git "
                       "ReadOnlyMount:ro-0:/srv/datasets ReadOnlyMount:ro-1:/srv/models",
                       "every source is staged by cloister-stage (ExecStartPre=+), none named to systemd");
                ok(has(&x.s, "Service", "ExecStopPost", "+" CLOISTER_STAGE_PATH " stop agent --tmp=/run/cloister/tmp/agent:67108864 "
                       "--tmp=/run/cloister/var-tmp/agent:67108864"), "...and unstaged when the unit stops, /tmp emptied");
                for (size_t i = 0; i < x.s.n; i++)
                        if (streq(x.s.items[i].key, "BindPaths") || streq(x.s.items[i].key, "BindReadOnlyPaths"))
                                ok(!strstr(x.s.items[i].value, "/srv/"), "no bind source is a role path: %s=%s",
                                   x.s.items[i].key, x.s.items[i].value);
                ok(!has_part(&x.s, "Service", "BindPaths", "/data") && !has_part(&x.s, "Service", "BindPaths", "/models"),
                   "ReadOnlyMount= is never bound writable");
                ok(!has_part(&x.s, "Service", "BindPaths", "/input"), "Input= is never bound writable");
                ok(!has_key(&x.s, "Service", "StateDirectory"), "an explicit Output= gets no managed output directory");
        }
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nService=inference embed\n", NULL);
        if (is_int(x.r, 0, "Service=: rendered")) {
                ok(has_part(&x.s, "Service", "BindReadOnlyPaths", "/run/cloister/services/inference"),
                   "Service=inference binds that sidecar's socket directory");
                ok(has_part(&x.s, "Service", "BindReadOnlyPaths", "/run/cloister/services/embed"),
                   "Service=embed binds that sidecar's socket directory");
        }
        rendered_done(&x);
}

static void test_limits(void) {
        Rendered x;

        x = render(BASE_CONF,
                   "[Role]\nExec=/bin/true\n[Sandbox]\nMemory=768M\nCPUs=1.5\nTasks=99\nTmpSize=128M\n"
                   "ShmSize=16M\nTimeout=15min\nStopGrace=20s\n", NULL);
        if (is_int(x.r, 0, "limits: rendered")) {
                ok(has(&x.s, "Service", "MemoryMax", "805306368"), "Memory=768M: MemoryMax= in bytes");
                ok(has(&x.s, "Service", "CPUQuota", "150%"), "CPUs=1.5: CPUQuota=150%%");
                ok(has(&x.s, "Service", "TasksMax", "99"), "Tasks=99: TasksMax=99");
                ok(has(&x.s, "Service", "RuntimeMaxSec", "900s"), "Timeout=15min: RuntimeMaxSec=900s");
                ok(has_part(&x.s, "Service", "TemporaryFileSystem", "/dev/shm:size=16777216"), "ShmSize=16M caps /dev/shm");
                ok(has_part(&x.s, "Service", "ExecStart", "--timeout=900s"), "the shim gets the wall-clock ceiling");
                ok(has_part(&x.s, "Service", "ExecStart", "--stop-grace=20s"), "the shim gets the stop grace");
                ok(has_key(&x.s, "Service", "TimeoutStopSec"), "systemd's own stop timeout is set as a backstop");
        }

        if (x.load.role) {
                UnitSettings m = {};
                char *where = profile_tmp_path(x.load.role, "tmp");
                is_str(where, "/run/cloister/tmp/agent", "profile_tmp_path(tmp)");
                if (is_int(profile_tmp_mount(x.load.role, "tmp", NULL, &m), 0, "profile_tmp_mount(tmp) succeeds")) {
                        ok(has(&m, "Mount", "Where", "/run/cloister/tmp/agent"), "the tmp mount unit mounts at the role's path");
                        ok(has(&m, "Mount", "Type", "tmpfs"), "the tmp mount unit is a tmpfs");
                        ok(has_part(&m, "Mount", "Options", "size=134217728"), "TmpSize=128M is the tmpfs size= option");
                        ok(has_part(&m, "Mount", "Options", "nosuid") && has_part(&m, "Mount", "Options", "nodev"),
                           "the tmpfs is nosuid,nodev");
                        ok(has(&m, "Unit", "SourcePath", x.load.path), "the tmp mount unit names the role file");
                        ok(!has_key(&m, "Unit", "StopWhenUnneeded"),
                           "a role's tmp mount stays mounted between starts (a start makes no mount event)");
                }
                ok(has_part(&x.s, "Service", "ExecStartPre", "start agent --tmp=/run/cloister/tmp/agent:134217728 "
                            "--tmp=/run/cloister/var-tmp/agent:134217728"),
                   "cloister-stage empties both before each start, and knows TmpSize=");
                ok(has_part(&x.s, "Service", "ExecStopPost", "stop agent --tmp=/run/cloister/tmp/agent:134217728 "
                            "--tmp=/run/cloister/var-tmp/agent:134217728"), "...and after each stop");
                unit_settings_done(&m);
                {
                        Role dashed = { .name = (char *) "my-role" };
                        char *name = profile_tmp_mount_name(&dashed, "var-tmp");
                        is_str(name, "run-cloister-var\\x2dtmp-my\\x2drole.mount",
                               "the mount unit's name is the path escaped as systemd does (a role named my-role)");
                        free(name);
                }
                {       /* a run's mounts are its own, made for it and gone with it */
                        UnitSettings rm = {}, rs = {};
                        x.load.role->run_instance = (char *) "agent.0123abcd";
                        if (profile_tmp_mount(x.load.role, "tmp", NULL, &rm) < 0 ||
                            profile_role(x.load.role, x.load.conf, &rs) < 0)
                                tap_bail_out("a run's profile does not render");
                        ok(has(&rm, "Unit", "StopWhenUnneeded", "yes"), "a run's tmp mount is unmounted when the run ends");
                        ok(!has_part(&rs, "Service", "ExecStartPre", "--tmp="), "...so cloister-stage has nothing to empty for a run");
                        unit_settings_done(&rm);
                        unit_settings_done(&rs);
                        /* ...unless it claimed a slot: pre-mounted, emptied, checked as its own */
                        x.load.role->run_tmp_slot = (char *) "agent.slot-3";
                        rm = (UnitSettings) {};
                        rs = (UnitSettings) {};
                        if (profile_tmp_mount(x.load.role, "tmp", NULL, &rm) < 0 ||
                            profile_role(x.load.role, x.load.conf, &rs) < 0)
                                tap_bail_out("a run's profile with a slot does not render");
                        ok(has(&rm, "Mount", "Where", "/run/cloister/tmp/agent.slot-3") && !has_key(&rm, "Unit", "StopWhenUnneeded"),
                           "a run's slot stays mounted between runs");
                        ok(has_part(&rs, "Service", "ExecStartPre", "start agent.0123abcd --tmp=/run/cloister/tmp/agent.slot-3:134217728 "
                                    "--tmp=/run/cloister/var-tmp/agent.slot-3:134217728 --claim=/run/cloister/tmp-slots/agent.slot-3"),
                           "...cloister-stage checks the claim and empties it before the run");
                        ok(has_part(&rs, "Service", "ExecStopPost", "stop agent.0123abcd --tmp=/run/cloister/tmp/agent.slot-3:134217728 "
                                    "--tmp=/run/cloister/var-tmp/agent.slot-3:134217728 --claim=/run/cloister/tmp-slots/agent.slot-3"),
                           "...and empties and releases it after");
                        ok(has_bind(&rs, "BindPaths", "/run/cloister/tmp/agent.slot-3", "/tmp"), "...and the run's /tmp is bound from it");
                        x.load.role->run_tmp_slot = NULL;
                        x.load.role->run_instance = NULL;
                        unit_settings_done(&rm);
                        unit_settings_done(&rs);
                }
                ok(has_bind(&x.s, "BindPaths", "/run/cloister/tmp/agent", "/tmp"), "/tmp is bound from the capped tmpfs");
                ok(has_bind(&x.s, "BindPaths", "/run/cloister/var-tmp/agent", "/var/tmp"), "/var/tmp is bound from its capped tmpfs");
                free(where);
        }
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nTimeout=0\n", NULL);
        if (is_int(x.r, 0, "Timeout=0: rendered")) {
                ok(!has_key(&x.s, "Service", "RuntimeMaxSec"), "Timeout=0: no RuntimeMaxSec=");
                ok(has_part(&x.s, "Service", "ExecStart", "--timeout=0s"), "Timeout=0: the shim is told there is no ceiling");
        }
        rendered_done(&x);

        x = render(BASE_CONF, "[Role]\nExec=/bin/true\n[Sandbox]\nCPUs=2\n", NULL);
        if (is_int(x.r, 0, "CPUs=2: rendered"))
                ok(has(&x.s, "Service", "CPUQuota", "200%"), "CPUs=2: CPUQuota=200%%");
        rendered_done(&x);
}

static void test_description_and_exec(void) {
        Rendered x = render(BASE_CONF,
                            "[Role]\nDescription=Checks 100% of %i\n"
                            "Exec=/usr/bin/python3 -c \"print('$HOME 50%')\"\n"
                            "Environment=LOG_LEVEL=info\n", NULL);

        if (is_int(x.r, 0, "Description= and Exec= with specifiers: rendered")) {
                ok(has(&x.s, "Unit", "Description", "cloister agent agent: Checks 100%% of %%i"),
                   "Description= is escaped so that no %% specifier expands");
                ok(has(&x.s, "Unit", "SourcePath", x.load.path), "SourcePath= names the role file");
                ok(has(&x.s, "Service", "ExecStart", ""), "ExecStart= is reset before the role's own");
                {
                        const char *exec = unit_settings_get(&x.s, "Service", "ExecStart");
                        like(exec, "--role=agent", "ExecStart= names the role");
                        like(exec, "\"--setenv=LOG_LEVEL=info\"", "Environment= is passed quoted to the shim");
                        like(exec, " -- \"/usr/bin/python3\" \"-c\" \"print('$$HOME 50%%')\"",
                             "the agent's argv follows \"--\", each word quoted with $$ and %%%% escaped");
                }
        }
        rendered_done(&x);
}

/* The last guard before a unit reaches disk: a value that a line-based reader would not read
 * back as one assignment is refused, whatever renderer produced it. */
static void test_written_values_checked(void) {
        static const struct { const char *value; bool ok; } cases[] = {
                { "plain value", true },
                { "two\nlines", false },
                { "carriage\rreturn", false },
                { "continues \\", false },
                { "escaped \\\\", true },
                { "\xff\xfe not UTF-8", false },
                { "UTF-8 \xc3\xa9", true },
        };

        for (size_t i = 0; i < ELEMENTSOF(cases); i++) {
                UnitSettings s = {};
                if (unit_settings_add(&s, "Unit", "Description", cases[i].value) < 0)
                        tap_bail_out("unit_settings_add");
                if (cases[i].ok)
                        is_int(unit_settings_check(&s), 0, "written as is: \"%s\"", cases[i].value);
                else
                        is_int(unit_settings_check(&s), -EINVAL, "refused before writing: case %zu", i);
                unit_settings_done(&s);
        }

        /* one table for both renderers: what has no D-Bus row cannot be written either */
        UnitSettings s = {};
        if (unit_settings_add(&s, "Service", "ExecStartPost", "/bin/true") < 0)
                tap_bail_out("unit_settings_add");
        test_stderr_begin();
        is_int(unit_settings_check(&s), -EINVAL, "a directive without a row in lib/profile/directives.c is refused");
        free(test_stderr_end());
        unit_settings_done(&s);
}

int main(void) {
        test_written_values_checked();
        tmpdir = test_tmpdir_new();

        test_static();
        test_modes();
        test_role_keys();
        test_limits();
        test_description_and_exec();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
