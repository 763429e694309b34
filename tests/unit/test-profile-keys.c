/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* What each role key becomes has one address: lib/profile/profile-role.c's role_key_emitters[].
 *  - every key the parser knows (lib/conf/role.c) has exactly one row, and every row is a key
 *    the parser knows;
 *  - each emitter, run alone on roles that set every key, emits exactly the directives and
 *    shim arguments its row lists (over a daemon-only role and an egress role without
 *    Output=: some only appear in one of them), and a row without an emitter says who reads the key instead;
 *  - docs/profile.md's table "Role keys" is the rows, word for word (--print-docs prints it). */

#include "profile-role.h"
#include "systemd-version.h"
#include "tap.h"
#include "test-util.h"

#define CONF "[Sandbox]\nMemory=1G\n[Broker]\nSocket=/run/cloister/broker.sock\n" \
        "[Upstream github]\nKind=http\nURL=https://api.github.com\n"
#define PROJECT "[Project]\nWorkspace=/srv/projects/webapp\n[Dependencies]\nPip=requirements.lock\n"
#define ROLE(network, output, user)                                                                     \
        "[Role]\nDescription=every key\nExec=/usr/bin/agent --flag\nProject=webapp\nDurability=durable\n"     \
        user "Environment=A=b\n"                                                                \
        "[Sandbox]\nNetwork=" network "\nMemory=512M\nCPUs=1.5\nTasks=64\nTmpSize=32M\nTimeout=15min\n" \
        "StopGrace=3s\nShmSize=16M\nInput=/srv/in\n" output "ReadOnlyMount=/srv/data:/data\n" \
        "GPUs=0\nService=inference\nJIT=yes\n"                                                  \
        "[LLM]\nModel=m\nContextSize=8192\n"                                                    \
        "[Install]\nWantedBy=multi-user.target\n"                                               \
        "[Broker]\nAllow=github\nLoopbackPort=7801\nRequestsPerMinute=10\n"

static const char *const network_modes[] = { "daemon-only", "egress" };

static char *tmpdir;

static size_t rows_of(const char *section, const char *key) {
        size_t n = 0;

        for (size_t i = 0; i < role_key_emitters_n; i++)
                n += streq(role_key_emitters[i].section, section) && streq(role_key_emitters[i].key, key);
        return n;
}

static void test_one_row_per_key(void) {
        size_t n;
        const ConfKey *keys = role_keys(&n);

        for (size_t i = 0; i < n; i++)
                is_int((int) rows_of(keys[i].section, keys[i].key), 1, "[%s] %s= has exactly one emitter row", keys[i].section, keys[i].key);
        for (size_t i = 0; i < role_key_emitters_n; i++) {
                bool known = false;
                for (size_t k = 0; k < n; k++)
                        known = known || (streq(keys[k].section, role_key_emitters[i].section) &&
                                          streq(keys[k].key, role_key_emitters[i].key));
                ok(known, "the row [%s] %s= is a key the parser knows", role_key_emitters[i].section, role_key_emitters[i].key);
        }
}

/* "Key= --arg= … — prose": the words before the dash. */
static char **documented(const RoleKeyEmitter *e) {
        const char *dash = strstr(e->becomes, " — ");
        _cleanup_free_ char *head = strndup(e->becomes, dash ? (size_t) (dash - e->becomes) : strlen(e->becomes));
        char **l = NULL, *save = NULL;

        for (char *w = strtok_r(head, " ", &save); w; w = strtok_r(NULL, " ", &save))
                if (strchr(w, '=') && strv_extend(&l, w) < 0)
                        tap_bail_out("OOM");
        return l;
}

static void note(char ***l, const char *w) {
        if (!strv_contains(*l, w) && strv_extend(l, w) < 0)
                tap_bail_out("OOM");
}

/* What one emitter put into a ProfileOut, as "Key=" and "--arg=" words. */
static void emitted(const ProfileOut *o, char ***l) {
        for (size_t k = 0; k < _SLOT_MAX; k++)
                for (size_t i = 0; i < o->slot[k].n; i++) {
                        char w[128];
                        snprintf(w, sizeof w, "%s=", o->slot[k].items[i].key);
                        note(l, w);
                }
        for (size_t a = 0; a < _ARG_MAX; a++)
                STRV_FOREACH(arg, o->arg[a]) {
                        if (a == ARG_EXEC) {
                                note(l, "ExecStart=");
                                continue;
                        }
                        /* an argument may hold several options ("--loopback-port=… --setenv=…") */
                        for (const char *p = *arg; (p = strstr(p, "--")); p += 2) {
                                const char *eq = strchr(p, '=');
                                char w[64];
                                if (!eq || (size_t) (eq - p) >= sizeof w - 1)
                                        continue;
                                snprintf(w, sizeof w, "%.*s=", (int) (eq - p), p);
                                if (strspn(w + 2, "abcdefghijklmnopqrstuvwxyz-") == strlen(w) - 3)
                                        note(l, w);
                        }
                }
        if (o->stage[STAGE_TMP] || o->stage[STAGE_MOUNTS] || o->stage[STAGE_DEPS]) {
                note(l, "ExecStartPre=");
                note(l, "ExecStopPost=");
        }
}

static void test_emitters_emit_what_they_say(void) {
        RoleLoad loads[ELEMENTSOF(network_modes)];

        for (size_t m = 0; m < ELEMENTSOF(network_modes); m++) {
                loads[m] = test_role_load(tmpdir, CONF, "agent.role", network_modes[m][0] == 'd' ? ROLE("daemon-only", "Output=/srv/out\n", "User=nobody\n") :
                                          /* a dynamic user and systemd's managed output directory */
                                          ROLE("egress", "", ""),
                                          "projects/webapp.project", PROJECT, NULL);
                if (!loads[m].role) {
                        diag("%s", loads[m].err);
                        tap_bail_out("the role with every key does not load");
                }
        }
        for (size_t i = 0; i < role_key_emitters_n; i++) {
                const RoleKeyEmitter *e = &role_key_emitters[i];
                _cleanup_strv_free_ char **want = documented(e), **got = NULL;
                bool same;

                if (!e->emit) {
                        ok(!want && startswith(e->becomes, "nothing in the unit: "),
                           "%s=: no emitter, and its row says who reads it instead", e->key);
                        continue;
                }
                for (size_t m = 0; m < ELEMENTSOF(network_modes); m++) {
                        ProfileOut o = {};
                        test_stderr_begin();    /* GPUs=0 warns about nothing; keep stderr clean anyway */
                        if (e->emit(&o, loads[m].role, loads[m].conf) < 0)
                                tap_bail_out("an emitter failed");
                        free(test_stderr_end());
                        emitted(&o, &got);
                        profile_out_done(&o);
                }
                strv_sort(want);
                strv_sort(got);
                same = strv_length(want) == strv_length(got);
                for (size_t k = 0; same && want[k]; k++)
                        same = streq(want[k], got[k]);
                if (!ok(same, "%s=: emits what its row says", e->key)) {
                        STRV_FOREACH(w, got)
                                diag("emitted %s", *w);
                        STRV_FOREACH(w, want)
                                diag("row says %s", *w);
                }
        }
        for (size_t m = 0; m < ELEMENTSOF(network_modes); m++)
                test_role_load_done(&loads[m]);
}

static char *docs_table(void) {
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);

        if (!f)
                tap_bail_out("OOM");
        fputs("| key | becomes |\n| --- | --- |\n", f);
        for (size_t i = 0; i < role_key_emitters_n; i++)
                fprintf(f, "| `[%s] %s=` | %s |\n", role_key_emitters[i].section, role_key_emitters[i].key,
                        role_key_emitters[i].becomes);
        fclose(f);
        return buf;
}

/* The table after "## Role keys" in docs/profile.md, up to the first line that is not a row. */
static void test_docs_table(const char *path) {
        _cleanup_free_ char *want = docs_table(), *text = NULL;
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        size_t n = 0;
        char line[2048];
        bool in = false;
        FILE *t = open_memstream(&text, &n);

        if (!f || !t)
                tap_bail_out("cannot read the docs file");
        while (fgets(line, sizeof line, f)) {
                if (startswith(line, "## "))
                        in = startswith(line, "## Role keys");
                else if (in && line[0] == '|')
                        fputs(line, t);
        }
        fclose(t);
        if (!ok(streq(text, want), "docs/profile.md's table \"Role keys\" is role_key_emitters[] (regenerate with test-profile-keys --print-docs)"))
                diag("want:\n%s", want);
}

int main(int argc, char *argv[]) {
        if (argc == 2 && streq(argv[1], "--print-docs")) {
                _cleanup_free_ char *t = docs_table();
                fputs(t, stdout);
                return 0;
        }
        if (argc != 2)
                tap_bail_out("usage: test-profile-keys DOCS/PROFILE.MD | --print-docs");
        tmpdir = test_tmpdir_new();
        /* every versioned directive emitted (the rows name them all), whatever systemd runs here */
        systemd_version_set(SYSTEMD_VERSION_NEWEST);
        test_one_row_per_key();
        test_emitters_emit_what_they_say();
        test_docs_table(argv[1]);
        test_tmpdir_remove(tmpdir);
        return tap_done();
}
