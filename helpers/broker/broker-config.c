/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "broker-config.h"
#include "conf-files.h"
#include "log.h"

BrokerConfig *broker_config_free(BrokerConfig *c) {
        if (!c)
                return NULL;
        for (size_t i = 0; i < c->n_roles; i++)
                role_free(c->roles[i]);
        free(c->roles);
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

int broker_config_load(BrokerConfig **ret) {
        _cleanup_strv_free_ char **dirs = NULL;
        BrokerConfig *c = calloc(1, sizeof(BrokerConfig));
        ConfFileList roles = {};
        const char *key;
        int r;

        if (!c || conf_dirs(&dirs) < 0)
                return log_oom();
        r = cloister_conf_load(dirs, &c->conf);
        if (r < 0) {
                broker_config_free(c);
                return log_error_errno(r, "cloister.conf was refused; the broker cannot start.");
        }
        c->llm_endpoint = fallback(c->conf->llm.endpoint, c->conf->chat.endpoint);
        c->llm_model = fallback(c->conf->llm.model, c->conf->chat.model);
        c->idle_timeout = c->conf->broker_idle_timeout;
        key = c->conf->llm.api_key_credential ?: c->conf->chat.api_key_credential;
        if (key && broker_credential_read(key, &c->llm_api_key) < 0)
                log_warning("LLM requests go upstream without an API key.");

        r = conf_files_list(dirs, "roles", ".role", &roles);
        if (r < 0) {
                broker_config_free(c);
                return log_oom();
        }
        c->roles = calloc(roles.n + 1, sizeof(Role *));
        for (size_t i = 0; c->roles && i < roles.n; i++) {
                Role *role;
                /* A refused role file gets no drop-in either: its unit cannot run. */
                if (role_load(roles.files[i].path, c->conf, dirs, &role) >= 0)
                        c->roles[c->n_roles++] = role;
        }
        conf_file_list_done(&roles);
        if (!c->roles) {
                broker_config_free(c);
                return log_oom();
        }
        *ret = c;
        return 0;
}

/* A role added after the broker started (daemon-reload, no broker restart) is read the
 * first time one of its agents calls. */
static const Role *load_new_role(BrokerConfig *c, const char *name) {
        _cleanup_strv_free_ char **dirs = NULL;
        _cleanup_free_ char *fn = strprintf("roles/%s.role", name), *path = NULL;
        Role *role, **l;

        if (!fn || conf_dirs(&dirs) < 0 || conf_file_find(dirs, fn, &path) < 0 || !path)
                return NULL;
        if (role_load(path, c->conf, dirs, &role) < 0)
                return NULL;
        l = realloc(c->roles, sizeof(Role *) * (c->n_roles + 2));
        if (!l) {
                role_free(role);
                return NULL;
        }
        c->roles = l;
        c->roles[c->n_roles++] = role;
        c->roles[c->n_roles] = NULL;
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
