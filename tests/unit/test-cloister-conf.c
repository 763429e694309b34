/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/cloister-conf.c: cloister.conf plus cloister.conf.d/ drop-ins (docs/overview.md, Files and search paths; cloister.role(5), NETWORK MODES; cloister-broker(8)). Any error
 * refuses the whole configuration; an invalid DefaultNetwork= only falls back to daemon-only. */

#include "cloister-conf.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;
static unsigned case_no;

typedef struct Load {
        int r;
        CloisterConf *conf;
        char *err;
        char *dir;
} Load;

static void load_done(Load *l) {
        cloister_conf_free(l->conf);
        free(l->err);
        free(l->dir);
}

/* A fresh configuration directory with `main` as cloister.conf (NULL: none) and the given
 * drop-ins ("name", "content", …, NULL). */
static Load load(const char *main_conf, ...) {
        Load l = {};
        char *name = strprintf("case%u", ++case_no);
        char **dirs;
        va_list ap;

        l.dir = test_path(tmpdir, name);
        free(name);
        test_mkdir(l.dir, "");
        if (main_conf)
                free(test_write_file(l.dir, "cloister.conf", main_conf));
        va_start(ap, main_conf);
        for (const char *n = va_arg(ap, const char *); n; n = va_arg(ap, const char *)) {
                char *rel = strprintf("cloister.conf.d/%s", n);
                free(test_write_file(l.dir, rel, va_arg(ap, const char *)));
                free(rel);
        }
        va_end(ap);

        dirs = test_dirs(l.dir, NULL);
        test_stderr_begin();
        l.r = cloister_conf_load(dirs, &l.conf);
        l.err = test_stderr_end();
        strv_free(dirs);
        return l;
}

/* Checks a refusal and that the message names "<dir>/<rel>:<line>:". */
static void check_refused(Load *l, const char *rel, unsigned line, const char *what, const char *reason_part) {
        char *where = line ? strprintf("%s/%s:%u:", l->dir, rel, line) : strprintf("%s/%s", l->dir, rel);

        ok(l->r < 0, "%s: the configuration is refused", what);
        ok(l->conf == NULL, "%s: no configuration is returned", what);
        like(l->err, where, "%s: the error names %s", what, line ? "file:line" : "the file");
        if (reason_part)
                like(l->err, reason_part, "%s: the error says why", what);
        free(where);
}

static void test_nothing_configured(void) {
        Load l = load(NULL, NULL);

        is_int(l.r, 0, "no cloister.conf at all is fine");
        if (l.conf) {
                is_int(l.conf->default_network, _NETWORK_MODE_UNSET, "DefaultNetwork= is unset");
                is_int(cloister_conf_default_network(l.conf), NETWORK_DAEMON_ONLY, "unset DefaultNetwork= means daemon-only (fail closed)");
                ok(l.conf->allow_host_network <= 0, "AllowHostNetwork= is not yes");
                is_u64(l.conf->defaults.memory, UNSET_U64, "Memory= has no built-in default");
                is_int(l.conf->defaults.cpus_percent, 100, "built-in CPUs=1");
                is_u64(l.conf->defaults.tasks, 256, "built-in Tasks=256");
                is_u64(l.conf->defaults.tmp_size, UINT64_C(64) << 20, "built-in TmpSize=64M");
                is_u64(l.conf->defaults.timeout, 3600 * USEC_PER_SEC, "built-in Timeout=1h");
                is_u64(l.conf->defaults.stop_grace, 10 * USEC_PER_SEC, "built-in StopGrace=10s");
                is_u64(l.conf->defaults.shm_size, UINT64_C(64) << 20, "built-in ShmSize=64M");
                is_u64(l.conf->broker.requests_per_minute, 60, "built-in RequestsPerMinute=60");
                is_u64(l.conf->broker.tokens_per_minute, 100000, "built-in TokensPerMinute=100000");
                is_u64(l.conf->broker.max_request_bytes, UINT64_C(1) << 20, "built-in MaxRequestBytes=1M");
                is_u64(l.conf->broker.max_concurrent, 4, "built-in MaxConcurrent=4");
                is_int(l.conf->broker.loopback_port, 7800, "built-in LoopbackPort=7800");
                is_u64(l.conf->broker_caller_connections, 512, "built-in MaxConnectionsPerCaller=512");
                is_u64(l.conf->broker_caller_bytes, UINT64_C(64) << 20, "built-in MaxBytesPerCaller=64M");
                is_u64(l.conf->broker_header_timeout, 10 * USEC_PER_SEC, "built-in HeaderTimeout=10s");
                ok(l.conf->broker_socket == NULL, "no broker socket");
                is_int(l.conf->n_upstreams, 0, "no upstreams");
        }
        load_done(&l);
}

static void test_main_file(void) {
        Load l = load("# shipped defaults\n"
                      "[Sandbox]\n"
                      "DefaultNetwork=daemon-only\n"
                      "AllowHostNetwork=yes\n"
                      "Memory=2G\n"
                      "CPUs=2.5\n"
                      "Tasks=100\n"
                      "TmpSize=32M\n"
                      "Timeout=30min\n"
                      "StopGrace=5s\n"
                      "ShmSize=16M\n"
                      "\n"
                      "[Broker]\n"
                      "Socket=/run/cloister/broker.sock\n"
                      "RequestsPerMinute=10\n"
                      "TokensPerMinute=2000\n"
                      "MaxRequestBytes=64K\n"
                      "MaxConcurrent=2\n"
                      "LoopbackPort=8000\n"
                      "MaxConnectionsPerCaller=2000\n"
                      "MaxBytesPerCaller=256M\n"
                      "HeaderTimeout=30s\n"
                      "\n"
                      "[Chat]\n"
                      "Endpoint=http://127.0.0.1:11434/v1\n"
                      "Model=chat-model\n"
                      "[LLM]\n"
                      "Endpoint=https://llm.example.com/v1\n"
                      "Model=qwen3.6:35b\n"
                      "ContextSize=32768\n"
                      "APIKeyCredential=llm.key\n"
                      "[Runtime]\n"
                      "RequireSealedRuns=no\n"
                      "[Upstream github]\n"
                      "Kind=http\n"
                      "URL=https://api.github.com\n"
                      "AuthCredential=github.token\n"
                      "AuthHeader=Authorization\n"
                      "[Upstream issues]\n"
                      "Kind=mcp\n"
                      "URL=http://127.0.0.1:9000/mcp\n",
                      NULL);
        const Upstream *u;

        is_int(l.r, 0, "a complete cloister.conf is accepted");
        is_str(l.err, "", "a complete cloister.conf logs nothing");
        if (!l.conf) {
                load_done(&l);
                return;
        }
        is_int(l.conf->default_network, NETWORK_DAEMON_ONLY, "DefaultNetwork=daemon-only");
        is_int(cloister_conf_default_network(l.conf), NETWORK_DAEMON_ONLY, "the effective default is daemon-only");
        is_int(l.conf->allow_host_network, 1, "AllowHostNetwork=yes");
        is_u64(l.conf->defaults.memory, UINT64_C(2) << 30, "Memory=2G");
        is_int(l.conf->defaults.cpus_percent, 250, "CPUs=2.5");
        is_u64(l.conf->defaults.tasks, 100, "Tasks=100");
        is_u64(l.conf->defaults.tmp_size, UINT64_C(32) << 20, "TmpSize=32M");
        is_u64(l.conf->defaults.timeout, 1800 * USEC_PER_SEC, "Timeout=30min");
        is_u64(l.conf->defaults.stop_grace, 5 * USEC_PER_SEC, "StopGrace=5s");
        is_u64(l.conf->defaults.shm_size, UINT64_C(16) << 20, "ShmSize=16M");
        is_str(l.conf->broker_socket, "/run/cloister/broker.sock", "[Broker] Socket=");
        is_u64(l.conf->broker.requests_per_minute, 10, "RequestsPerMinute=10");
        is_u64(l.conf->broker.tokens_per_minute, 2000, "TokensPerMinute=2000");
        is_u64(l.conf->broker.max_request_bytes, 64 << 10, "MaxRequestBytes=64K");
        is_u64(l.conf->broker.max_concurrent, 2, "MaxConcurrent=2");
        is_int(l.conf->broker.loopback_port, 8000, "LoopbackPort=8000");
        is_u64(l.conf->broker_caller_connections, 2000, "MaxConnectionsPerCaller=2000");
        is_u64(l.conf->broker_caller_bytes, UINT64_C(256) << 20, "MaxBytesPerCaller=256M");
        is_u64(l.conf->broker_header_timeout, 30 * USEC_PER_SEC, "HeaderTimeout=30s");
        is_str(l.conf->chat.endpoint, "http://127.0.0.1:11434/v1", "[Chat] Endpoint=");
        is_str(l.conf->chat.model, "chat-model", "[Chat] Model=");
        is_str(l.conf->llm.endpoint, "https://llm.example.com/v1", "[LLM] Endpoint=");
        is_str(l.conf->llm.model, "qwen3.6:35b", "[LLM] Model=");
        is_u64(l.conf->llm.context_size, 32768, "[LLM] ContextSize=");
        is_str(l.conf->llm.api_key_credential, "llm.key", "[LLM] APIKeyCredential=");
        is_int(l.conf->require_sealed_runs, 0, "[Runtime] RequireSealedRuns=no");
        is_int(l.conf->n_upstreams, 2, "two upstreams");
        u = cloister_conf_find_upstream(l.conf, "github");
        ok(u && streq_ptr(u->kind, "http") && streq_ptr(u->url, "https://api.github.com") &&
           streq_ptr(u->auth_credential, "github.token") && streq_ptr(u->auth_header, "Authorization"),
           "[Upstream github] is read with every key");
        u = cloister_conf_find_upstream(l.conf, "issues");
        ok(u && streq_ptr(u->kind, "mcp") && streq_ptr(u->url, "http://127.0.0.1:9000/mcp"),
           "[Upstream issues] is read");
        ok(cloister_conf_find_upstream(l.conf, "nosuch") == NULL, "an unknown upstream is not found");
        load_done(&l);
}

static void test_dropins(void) {
        Load l = load("[Sandbox]\n"
                      "DefaultNetwork=none\n"
                      "Memory=1G\n"
                      "Tasks=100\n"
                      "Timeout=10min\n"
                      "[Upstream github]\n"
                      "Kind=http\n"
                      "URL=https://api.github.com\n",
                      /* given out of order: they are read in lexical order */
                      "50-memory.conf", "[Sandbox]\nMemory=4G\nTimeout=20min\n",
                      "10-memory.conf", "[Sandbox]\nMemory=2G\nCPUs=3\n",
                      "90-reset.conf", "[Sandbox]\nTasks=\n",
                      "60-upstream.conf", "[Upstream github]\nURL=https://github.example.com/api\n"
                                          "[Upstream extra]\nKind=mcp\nURL=http://127.0.0.1:1/\n",
                      "70-default.conf", "[Sandbox]\nDefaultNetwork=egress\n",
                      "README", "not a drop-in: no .conf suffix\n",
                      NULL);

        is_int(l.r, 0, "cloister.conf with drop-ins is accepted");
        if (l.conf) {
                is_u64(l.conf->defaults.memory, UINT64_C(4) << 30, "the lexically last drop-in wins (50- after 10-)");
                is_int(l.conf->defaults.cpus_percent, 300, "a drop-in adds a key the main file lacks");
                is_u64(l.conf->defaults.timeout, 1200 * USEC_PER_SEC, "a drop-in overrides the main file");
                is_u64(l.conf->defaults.tasks, 256, "an empty assignment in a drop-in resets to the built-in default");
                is_int(l.conf->default_network, NETWORK_EGRESS, "a drop-in overrides DefaultNetwork=");
                ok(cloister_conf_find_upstream(l.conf, "github") &&
                   streq_ptr(cloister_conf_find_upstream(l.conf, "github")->url, "https://github.example.com/api") &&
                   streq_ptr(cloister_conf_find_upstream(l.conf, "github")->kind, "http"),
                   "a drop-in overrides one key of an upstream and keeps the others");
                ok(cloister_conf_find_upstream(l.conf, "extra") != NULL, "a drop-in adds an upstream");
                is_int(l.conf->n_upstreams, 2, "an upstream named twice is one upstream");
        }
        load_done(&l);

        /* Drop-ins also apply without a main file, and a masked drop-in is skipped. */
        l = load(NULL, "10-a.conf", "[Sandbox]\nMemory=3G\n", "20-b.conf", "[Sandbox]\nMemory=bogus\n", NULL);
        ok(l.r < 0, "a bad drop-in refuses the configuration even without a main file");
        {
                char *p = test_path(l.dir, "cloister.conf.d/20-b.conf");
                Load m;
                unlink(p);
                if (symlink("/dev/null", p) < 0)
                        diag("symlink failed: %s", strerror(errno));
                free(p);
                m = (Load) { .dir = strdup(l.dir) };
                {
                        char **dirs = test_dirs(m.dir, NULL);
                        test_stderr_begin();
                        m.r = cloister_conf_load(dirs, &m.conf);
                        m.err = test_stderr_end();
                        strv_free(dirs);
                }
                is_int(m.r, 0, "a drop-in masked by a /dev/null symlink is skipped");
                ok(m.conf && m.conf->defaults.memory == UINT64_C(3) << 30, "the remaining drop-in applies");
                load_done(&m);
        }
        load_done(&l);
}

static void test_dropin_dirs_masking(void) {
        /* Two configuration directories: a higher drop-in masks the same name below it, and
         * drop-ins of all directories are read together in lexical order. */
        char *high = test_path(tmpdir, "dd-high"), *low = test_path(tmpdir, "dd-low");
        char **dirs = test_dirs(high, low, NULL);
        CloisterConf *c = NULL;
        char *err;
        int r;

        free(test_write_file(low, "cloister.conf", "[Sandbox]\nMemory=1G\nTasks=10\n"));
        free(test_write_file(high, "cloister.conf", "[Sandbox]\nMemory=8G\n"));
        free(test_write_file(low, "cloister.conf.d/10-x.conf", "[Sandbox]\nTasks=bogus\n"));
        free(test_write_file(high, "cloister.conf.d/10-x.conf", "[Sandbox]\nTasks=20\n"));
        free(test_write_file(low, "cloister.conf.d/20-y.conf", "[Sandbox]\nTasks=30\n"));
        free(test_write_file(high, "cloister.conf.d/05-z.conf", "[Sandbox]\nTasks=40\n"));

        test_stderr_begin();
        r = cloister_conf_load(dirs, &c);
        err = test_stderr_end();
        is_int(r, 0, "drop-ins across directories are accepted");
        if (c) {
                is_u64(c->defaults.memory, UINT64_C(8) << 30, "the highest cloister.conf masks the lower one entirely");
                is_u64(c->defaults.tasks, 30, "drop-ins are read in lexical order across directories (20-y last)");
        }
        cloister_conf_free(c);
        free(err);
        strv_free(dirs);
        free(high);
        free(low);
}

static void test_default_network(void) {
        Load l = load("[Sandbox]\nDefaultNetwork=sealed\nMemory=1G\n", NULL);
        char *where = strprintf("%s/cloister.conf:2:", l.dir);

        is_int(l.r, 0, "an invalid DefaultNetwork= does not refuse the configuration");
        if (l.conf) {
                is_int(l.conf->default_network, NETWORK_DAEMON_ONLY, "an invalid DefaultNetwork= means daemon-only");
                is_int(cloister_conf_default_network(l.conf), NETWORK_DAEMON_ONLY, "the effective default is daemon-only");
        }
        like(l.err, where, "the warning names file:line");
        like(l.err, "DefaultNetwork=", "the warning names the key");
        like(l.err, "daemon-only", "the warning says what is used instead");
        free(where);
        load_done(&l);

        static const char *const modes[] = { "none", "daemon-only", "egress", "host" };
        for (size_t i = 0; i < ELEMENTSOF(modes); i++) {
                char *text = strprintf("[Sandbox]\nDefaultNetwork=%s\n", modes[i]);
                l = load(text, NULL);
                ok(l.r == 0 && l.conf && l.conf->default_network == (NetworkMode) i,
                   "DefaultNetwork=%s", modes[i]);
                load_done(&l);
                free(text);
        }

        l = load("[Sandbox]\nDefaultNetwork=none\n", "50-unset.conf", "[Sandbox]\nDefaultNetwork=\n", NULL);
        ok(l.r == 0 && l.conf && cloister_conf_default_network(l.conf) == NETWORK_DAEMON_ONLY,
           "an empty DefaultNetwork= resets to unset, which means daemon-only (fail closed)");
        load_done(&l);
}

static void test_upstreams(void) {
        Load l;

        l = load("[Upstream github]\nURL=https://api.github.com\n", NULL);
        check_refused(&l, "cloister.conf", 0, "[Upstream] without Kind=", "Kind=");
        load_done(&l);

        l = load("[Upstream github]\nKind=ftp\nURL=https://api.github.com\n", NULL);
        check_refused(&l, "cloister.conf", 2, "Kind=ftp", "Kind=");
        load_done(&l);

        l = load("[Upstream github]\nKind=http\n", NULL);
        check_refused(&l, "cloister.conf", 0, "[Upstream] without URL=", "URL=");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\n", "50-github.conf", "[Upstream github]\nKind=http\n", NULL);
        check_refused(&l, "cloister.conf.d/50-github.conf", 0, "[Upstream] without URL= in a drop-in", "URL=");
        load_done(&l);

        l = load("[Upstream github]\nKind=http\nURL=ftp://x\n", NULL);
        check_refused(&l, "cloister.conf", 3, "URL=ftp://x", "URL=");
        load_done(&l);

        l = load("[Upstream GitHub]\nKind=http\nURL=https://api.github.com\n", NULL);
        check_refused(&l, "cloister.conf", 1, "an invalid upstream name", "GitHub");
        load_done(&l);

        l = load("[Upstream -x]\nKind=http\nURL=https://api.github.com\n", NULL);
        check_refused(&l, "cloister.conf", 1, "an upstream name starting with '-'", "-x");
        load_done(&l);

        l = load("[Upstream]\nKind=http\nURL=https://api.github.com\n", NULL);
        check_refused(&l, "cloister.conf", 1, "[Upstream] without a name", NULL);
        load_done(&l);

        l = load("[Upstream github]\nKind=http\nURL=https://api.github.com\nSecret=x\n", NULL);
        check_refused(&l, "cloister.conf", 4, "an unknown key in [Upstream]", "Secret=");
        load_done(&l);

        l = load("[Upstream github]\nKind=http\nURL=https://a.example.com\nURL=https://b.example.com\n", NULL);
        check_refused(&l, "cloister.conf", 4, "a duplicate key in [Upstream]", "line 3");
        load_done(&l);

        /* Re-opening the same [Upstream] in one file does not make a key settable twice,
         * however many other upstreams were added in between. */
        l = load("[Upstream a]\nKind=http\nURL=https://a.example.com\n"
                 "[Upstream b]\nKind=http\nURL=https://b.example.com\n"
                 "[Upstream c]\nKind=http\nURL=https://c.example.com\n"
                 "[Upstream d]\nKind=http\nURL=https://d.example.com\n"
                 "[Upstream a]\nURL=https://evil.example.com\n", NULL);
        check_refused(&l, "cloister.conf", 14, "URL= of [Upstream a] set again in a re-opened section", "line 3");
        load_done(&l);

        /* The same key in two different upstreams is no duplicate. */
        l = load("[Upstream a]\nKind=http\nURL=https://a.example.com\n"
                 "[Upstream b]\nKind=mcp\nURL=https://b.example.com\n", NULL);
        is_int(l.r, 0, "the same key in two upstreams is no duplicate");
        load_done(&l);
}

static void test_refusals(void) {
        Load l;

        l = load("[Sandbox]\nMemory=1G\n[Nonsense]\n", NULL);
        check_refused(&l, "cloister.conf", 3, "an unknown section", "[Nonsense]");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\nMemroy=2G\n", NULL);
        check_refused(&l, "cloister.conf", 3, "an unknown key", "Memroy=");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\nMemory=2G\n", NULL);
        check_refused(&l, "cloister.conf", 3, "a duplicate key", "line 2");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\n[Broker]\nLoopbackPort=7800\n[Sandbox]\nMemory=2G\n", NULL);
        check_refused(&l, "cloister.conf", 6, "a duplicate key in a re-opened section", "line 2");
        load_done(&l);

        l = load("[Sandbox]\nMemory=infinity\n", NULL);
        check_refused(&l, "cloister.conf", 2, "Memory=infinity", "infinity");
        load_done(&l);

        l = load("[Sandbox]\nAllowHostNetwork=perhaps\n", NULL);
        check_refused(&l, "cloister.conf", 2, "AllowHostNetwork=perhaps", "AllowHostNetwork=");
        load_done(&l);

        l = load("[Broker]\nSocket=run/broker.sock\n", NULL);
        check_refused(&l, "cloister.conf", 2, "a relative broker socket", "Socket=");
        load_done(&l);

        l = load("[LLM]\nAPIKeyCredential=sk-abc def\n", NULL);
        check_refused(&l, "cloister.conf", 2, "a secret written in place of a credential name", "APIKeyCredential=");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\nTimeout=0\n", "50-x.conf", "[Sandbox]\nCPUs=0\n", NULL);
        check_refused(&l, "cloister.conf.d/50-x.conf", 2, "a bad value in a drop-in", "CPUs=");
        load_done(&l);

        l = load("[Sandbox]\nMemory=1G\n", "50-x.conf", "[Sandbox]\nExec=sh -c \"a ; b\"\n", NULL);
        check_refused(&l, "cloister.conf.d/50-x.conf", 2, "a line inih would not read literally in a drop-in", NULL);
        load_done(&l);
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_nothing_configured();
        test_main_file();
        test_dropins();
        test_dropin_dirs_masking();
        test_default_network();
        test_upstreams();
        test_refusals();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
