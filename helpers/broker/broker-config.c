/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "broker-config.h"
#include "conf-files.h"
#include "log.h"

BrokerConfig *broker_config_ref(BrokerConfig *c) {
        if (c)
                c->n_ref++;
        return c;
}

BrokerConfig *broker_config_unref(BrokerConfig *c) {
        if (!c || --c->n_ref > 0)
                return NULL;
        for (size_t i = 0; i < c->n_roles; i++) {
                role_free(c->roles[i]);
                if (c->limits)
                        rate_limit_free(c->limits[i]);
        }
        free(c->roles);
        free(c->limits);
        cloister_conf_free(c->conf);
        free(c->llm_endpoint);
        free(c->llm_model);
        if (c->llm_api_key) {
                explicit_bzero(c->llm_api_key, strlen(c->llm_api_key));
                free(c->llm_api_key);
        }
        return mfree(c);
}

int broker_credential_read(const char *name, char **ret) {
        const char *dir = getenv("CREDENTIALS_DIRECTORY");
        _cleanup_free_ char *path = NULL, *buf = NULL;
        _cleanup_close_ int fd = -1;
        size_t n = 0, size = 4096;
        ssize_t k;

        if (!dir)
                return log_error_errno(ENOENT, "Credential %s: $CREDENTIALS_DIRECTORY is not set (LoadCredential=%s missing?).", name, name);
        path = strprintf("%s/%s", dir, name);
        buf = malloc(size);
        if (!path || !buf)
                return log_oom();
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return log_error_errno(errno, "Credential %s cannot be read: %m", name);
        while ((k = read(fd, buf + n, size - n - 1)) > 0) {
                n += (size_t) k;
                if (n + 1 >= size) {
                        char *b = size > 1 << 20 ? NULL : realloc(buf, size *= 2);
                        if (!b)
                                return log_error_errno(EFBIG, "Credential %s is too large.", name);
                        buf = b;
                }
        }
        if (k < 0)
                return log_error_errno(errno, "Credential %s cannot be read: %m", name);
        while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                n--;
        buf[n] = 0;
        *ret = TAKE_PTR(buf);
        return 0;
}

static char *fallback(const char *a, const char *b) {
        return a ? strdup(a) : b ? strdup(b) : NULL;
}

static int load_conf(BrokerConfig *c, char * const *dirs) {
        const char *key;
        int r;

        r = cloister_conf_load(dirs, &c->conf);
        if (r < 0)
                return log_error_errno(r, "cloister.conf was refused; the broker cannot use it.");
        c->llm_endpoint = fallback(c->conf->llm.endpoint, c->conf->chat.endpoint);
        c->llm_model = fallback(c->conf->llm.model, c->conf->chat.model);
        c->idle_timeout = c->conf->broker_idle_timeout;
        key = c->conf->llm.api_key_credential ?: c->conf->chat.api_key_credential;
        if (key && broker_credential_read(key, &c->llm_api_key) < 0)
                log_warning("LLM requests go upstream without an API key.");
        return 0;
}

/* Appends a role with fresh rate-limit state. Takes the role, even on failure. */
static int add_role(BrokerConfig *c, Role *role) {
        _cleanup_(role_freep) Role *owned = role;
        Role **roles;
        RateLimit **limits;

        roles = realloc(c->roles, sizeof(Role *) * (c->n_roles + 2));
        if (!roles)
                return -ENOMEM;
        c->roles = roles;
        limits = realloc(c->limits, sizeof(RateLimit *) * (c->n_roles + 2));
        if (!limits)
                return -ENOMEM;
        c->limits = limits;
        c->limits[c->n_roles] = rate_limit_new();
        if (!c->limits[c->n_roles])
                return -ENOMEM;
        c->roles[c->n_roles++] = TAKE_PTR(owned);
        c->roles[c->n_roles] = NULL;
        c->limits[c->n_roles] = NULL;
        return 0;
}

static int load_roles(BrokerConfig *c, BrokerConfigMode mode, char * const *dirs) {
        ConfFileList files = {};
        int r, ret = 0;

        r = conf_files_list(dirs, "roles", ".role", &files);
        if (r < 0)
                return log_oom();
        for (size_t i = 0; i < files.n; i++) {
                Role *role;
                /* A refused role file gets no drop-in either: its unit cannot run. At start the
                 * others are served; a reload or a check refuses the whole config. */
                r = role_load(files.files[i].path, c->conf, dirs, &role);
                if (r < 0) {
                        if (mode == BROKER_CONFIG_STRICT && ret >= 0)
                                ret = r;
                        continue;
                }
                r = add_role(c, role);
                if (r < 0) {
                        ret = log_oom();
                        break;
                }
        }
        conf_file_list_done(&files);
        return ret;
}

int broker_config_load(BrokerConfigMode mode, BrokerConfig **ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_(broker_config_unrefp) BrokerConfig *c = calloc(1, sizeof(BrokerConfig));
        int r;

        if (!c || conf_dirs(&dirs) < 0)
                return log_oom();
        c->n_ref = 1;
        r = load_conf(c, dirs);
        if (r < 0)
                return r;
        r = load_roles(c, mode, dirs);
        if (r < 0)
                return r;
        if (!c->roles) { /* no role: still an empty, terminated list */
                c->roles = calloc(1, sizeof(Role *));
                c->limits = calloc(1, sizeof(RateLimit *));
                if (!c->roles || !c->limits)
                        return log_oom();
        }
        *ret = TAKE_PTR(c);
        return 0;
}

void broker_config_adopt_limits(BrokerConfig *c, const BrokerConfig *old) {
        for (size_t i = 0; i < c->n_roles; i++)
                for (size_t j = 0; j < old->n_roles; j++)
                        if (streq(c->roles[i]->name, old->roles[j]->name)) {
                                rate_limit_free(c->limits[i]);
                                c->limits[i] = rate_limit_ref(old->limits[j]);
                                break;
                        }
}

RateLimit *broker_config_role_limit(const BrokerConfig *c, const Role *role) {
        for (size_t i = 0; i < c->n_roles; i++)
                if (c->roles[i] == role)
                        return c->limits[i];
        return NULL;
}

/* A role added after the broker started (daemon-reload, no broker restart) is read the
 * first time one of its agents calls. */
static const Role *load_new_role(BrokerConfig *c, const char *name) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *fn = strprintf("roles/%s.role", name), *path = NULL;
        Role *role;

        if (!fn || conf_dirs(&dirs) < 0 || conf_file_find(dirs, fn, &path) < 0 || !path)
                return NULL;
        if (role_load(path, c->conf, dirs, &role) < 0)
                return NULL;
        if (add_role(c, role) < 0)
                return NULL;
        log_info("Role %s read from %s.", name, path);
        return role;
}

const Role *broker_config_find_role(BrokerConfig *c, const char *name) {
        for (size_t i = 0; i < c->n_roles; i++)
                if (streq(c->roles[i]->name, name))
                        return c->roles[i];
        return load_new_role(c, name);
}

const char *broker_config_role_model(const BrokerConfig *c, const Role *role) {
        return role->llm_model ?: c->llm_model;
}
