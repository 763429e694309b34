/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <json-c/json.h>
#include <openssl/evp.h>

#include "deps.h"
#include "log.h"

typedef struct EcosystemInfo {
        const char *name;
        const char *key;
        const char *env_name;
        const char *env_value;
} EcosystemInfo;

static const EcosystemInfo ecosystems[_DEPS_ECOSYSTEM_MAX] = {
        [DEPS_PIP] = { "pip", "Pip", "PYTHONPATH", DEPS_SANDBOX_DIR "/pip" },
        [DEPS_NPM] = { "npm", "Npm", "NODE_PATH", DEPS_SANDBOX_DIR "/npm/node_modules" },
};

const char *deps_ecosystem_to_string(DepsEcosystem e) {
        return e >= 0 && e < _DEPS_ECOSYSTEM_MAX ? ecosystems[e].name : NULL;
}

DepsEcosystem deps_ecosystem_from_string(const char *s) {
        for (DepsEcosystem e = 0; e < _DEPS_ECOSYSTEM_MAX; e++)
                if (streq_ptr(s, ecosystems[e].name))
                        return e;
        return _DEPS_ECOSYSTEM_INVALID;
}

const char *deps_ecosystem_key(DepsEcosystem e) {
        return e >= 0 && e < _DEPS_ECOSYSTEM_MAX ? ecosystems[e].key : NULL;
}

const char *deps_ecosystem_env_name(DepsEcosystem e) {
        return e >= 0 && e < _DEPS_ECOSYSTEM_MAX ? ecosystems[e].env_name : NULL;
}

const char *deps_ecosystem_env_value(DepsEcosystem e) {
        return e >= 0 && e < _DEPS_ECOSYSTEM_MAX ? ecosystems[e].env_value : NULL;
}

const char *deps_lockfile_path_check(const char *rel) {
        if (isempty(rel))
                return "an empty path";
        if (rel[0] == '/')
                return "the path must be relative to the workspace";
        if (strlen(rel) >= 4096)
                return "the path is too long";
        for (const char *p = rel; *p; p++)
                if ((unsigned char) *p < 0x20 || *p == 0x7f || *p == '\\')
                        return "the path contains a control character or a backslash";
        for (const char *c = rel; *c; ) {
                size_t l = strcspn(c, "/");
                if (l == 0)
                        return "the path has an empty component (\"//\") or a trailing \"/\"";
                if ((l == 1 && c[0] == '.') || (l == 2 && c[0] == '.' && c[1] == '.'))
                        return "the path must not contain \".\" or \"..\" components";
                c += l;
                if (*c == '/') {
                        c++;
                        if (!*c)
                                return "the path has an empty component (\"//\") or a trailing \"/\"";
                }
        }
        return NULL;
}

static void evp_md_ctx_freep(EVP_MD_CTX **c) {
        if (*c)
                EVP_MD_CTX_free(*c);
}

int deps_file_sha256(const char *path, char ret[static 65]) {
        _cleanup_(evp_md_ctx_freep) EVP_MD_CTX *ctx = EVP_MD_CTX_new();
        _cleanup_close_ int fd = -1;
        unsigned char buf[65536], md[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (!ctx)
                return -ENOMEM;
        fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        if (EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1)
                return -EIO;
        for (;;) {
                ssize_t k = read(fd, buf, sizeof(buf));
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                if (EVP_DigestUpdate(ctx, buf, (size_t) k) != 1)
                        return -EIO;
        }
        if (EVP_DigestFinal_ex(ctx, md, &n) != 1 || n != 32)
                return -EIO;
        for (unsigned i = 0; i < n; i++)
                sprintf(ret + 2 * i, "%02x", md[i]);
        ret[64] = 0;
        return 0;
}

int deps_cache_dir_in(const char *cache_root, const char *ecosystem, const char *lockfile_path, char **ret) {
        char sha[65];
        char *d;
        int r;

        if (deps_ecosystem_from_string(ecosystem) < 0)
                return -EINVAL;
        r = deps_file_sha256(lockfile_path, sha);
        if (r < 0)
                return r;
        d = strprintf("%s/%s-%s", cache_root ?: DEPS_CACHE_DIR, ecosystem, sha);
        if (!d)
                return -ENOMEM;
        *ret = d;
        return 0;
}

int deps_cache_dir(const char *ecosystem, const char *lockfile_path, char **ret) {
        return deps_cache_dir_in(DEPS_CACHE_DIR, ecosystem, lockfile_path, ret);
}

bool deps_materialised(const char *dir) {
        _cleanup_free_ char *marker = strprintf("%s/" DEPS_COMPLETE_MARKER, dir);
        struct stat st;

        if (!marker || lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
                return false;
        return lstat(marker, &st) >= 0 && S_ISREG(st.st_mode);
}

char *deps_project_link(const char *cache_root, const char *project, DepsEcosystem e) {
        if (!deps_ecosystem_to_string(e))
                return NULL;
        return strprintf("%s/" DEPS_BY_PROJECT "/%s/%s", cache_root ?: DEPS_CACHE_DIR, project,
                         deps_ecosystem_to_string(e));
}

/* ---- pip: requirements files as pip-compile --generate-hashes writes them ---- */

static bool is_sha256_hash_option(const char *w) {
        const char *h = startswith(w, "--hash=sha256:");

        if (!h || strlen(h) != 64)
                return false;
        for (; *h; h++)
                if (!isxdigit((unsigned char) *h))
                        return false;
        return true;
}

/* One logical line (continuations joined): NULL if it is fine, else the reason. */
static const char *pip_check_logical_line(char *l) {
        char *hash_start = NULL, *save = NULL;
        unsigned hashes = 0;

        /* A comment starts at "#" at the line start or after blank (pip's rule). */
        for (char *p = l; *p; p++)
                if (*p == '#' && (p == l || isspace((unsigned char) p[-1]))) {
                        *p = 0;
                        break;
                }
        while (isspace((unsigned char) *l))
                l++;
        if (!*l)
                return NULL;
        if (*l == '-')
                return "options lines (-r, -c, -e, --index-url, --find-links, ...) are refused: the index is the administrator's pip configuration";
        for (char *p = l; *p; p++)
                if (p[0] == '-' && p[1] == '-' && (p == l || isspace((unsigned char) p[-1]))) {
                        hash_start = p;
                        break;
                }
        if (!hash_start)
                return "the requirement has no --hash=sha256:...: every requirement must be hash-pinned";
        *hash_start = 0;
        if (strstr(l, "://") || strchr(l, '@') || l[0] == '.' || l[0] == '/')
                return "direct URL or path requirements are refused";
        if (!strstr(l, "=="))
                return "the requirement is not pinned to one version with \"==\"";
        *hash_start = '-';
        for (char *w = strtok_r(hash_start, " \t", &save); w; w = strtok_r(NULL, " \t", &save)) {
                if (!is_sha256_hash_option(w))
                        return "only --hash=sha256:<64 hex digits> may follow a requirement";
                hashes++;
        }
        return hashes > 0 ? NULL : "the requirement has no --hash=sha256:...: every requirement must be hash-pinned";
}

static int check_pip(const char *path, FILE *f) {
        _cleanup_free_ char *line = NULL, *logical = NULL;
        size_t cap = 0, len = 0;
        unsigned lineno = 0, start = 0, requirements = 0;
        bool cont = false;
        ssize_t k;

        for (;;) {
                bool eof;
                k = getline(&line, &cap, f);
                eof = k < 0;
                if (!eof) {
                        size_t n = (size_t) k;
                        char *t;
                        lineno++;
                        if (strlen(line) != n)
                                return log_error_errno(EINVAL, "%s:%u: a NUL byte in the lockfile; refusing it.", path, lineno);
                        while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
                                line[--n] = 0;
                        if (!cont)
                                start = lineno;
                        cont = n > 0 && line[n - 1] == '\\';
                        if (cont)
                                line[--n] = 0;
                        t = realloc(logical, len + n + 2);
                        if (!t)
                                return log_oom();
                        logical = t;
                        memcpy(logical + len, line, n);
                        len += n;
                        logical[len++] = ' ';
                        logical[len] = 0;
                        if (cont)
                                continue;
                } else if (!logical)
                        break;
                else if (cont)
                        return log_error_errno(EINVAL, "%s:%u: the file ends in a line continuation; refusing the lockfile.", path, lineno);
                if (logical) {
                        const char *reason;
                        bool blank = true;
                        for (const char *p = logical; *p && *p != '#'; p++)
                                if (!isspace((unsigned char) *p))
                                        blank = false;
                        reason = pip_check_logical_line(logical);
                        if (reason)
                                return log_error_errno(EINVAL, "%s:%u: %s; refusing the lockfile.", path, start, reason);
                        if (!blank)
                                requirements++;
                        logical = mfree(logical);
                        len = 0;
                }
                if (eof)
                        break;
        }
        if (ferror(f))
                return log_error_errno(EIO, "%s: Failed to read.", path);
        if (cont)
                return log_error_errno(EINVAL, "%s:%u: the file ends in a line continuation; refusing the lockfile.", path, lineno);
        if (requirements == 0)
                return log_error_errno(EINVAL, "%s: no requirement in the lockfile; refusing it.", path);
        return 0;
}

int deps_check_pip_lockfile(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");

        if (!f)
                return log_error_errno(errno, "%s: Failed to open: %m", path);
        return check_pip(path, f);
}

/* ---- npm: package-lock.json, lockfileVersion 2 or 3 ---- */

static int check_npm(const char *path, json_object *root) {
        json_object *v, *packages;
        int version;
        unsigned n = 0;

        if (!json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, "lockfileVersion", &v) || !json_object_is_type(v, json_type_int) ||
            ((version = json_object_get_int(v)) != 2 && version != 3))
                return log_error_errno(EINVAL, "%s: lockfileVersion: must be 2 or 3 (npm 7 or newer); refusing the lockfile.", path);
        if (!json_object_object_get_ex(root, "packages", &packages) || !json_object_is_type(packages, json_type_object))
                return log_error_errno(EINVAL, "%s: packages: missing or not an object; refusing the lockfile.", path);
        json_object_object_foreach(packages, key, entry) {
                json_object *integrity, *resolved, *flag;
                const char *reason = NULL, *s;

                if (isempty(key))       /* the root project itself */
                        continue;
                if (!json_object_is_type(entry, json_type_object))
                        reason = "not an object";
                else if (json_object_object_get_ex(entry, "link", &flag) && json_object_get_boolean(flag))
                        reason = "links to local directories are refused";
                else if (json_object_object_get_ex(entry, "inBundle", &flag) && json_object_get_boolean(flag))
                        continue;       /* shipped inside its parent's tarball, covered by its integrity */
                else if (!json_object_object_get_ex(entry, "integrity", &integrity) ||
                         !json_object_is_type(integrity, json_type_string) ||
                         !startswith(json_object_get_string(integrity), "sha512-"))
                        reason = "no \"integrity\" of sha512: every package must be integrity-pinned";
                else if (json_object_object_get_ex(entry, "resolved", &resolved) &&
                         (!json_object_is_type(resolved, json_type_string) ||
                          !(s = json_object_get_string(resolved)) || !startswith(s, "https://")))
                        /* absent: the configured registry */
                        reason = "\"resolved\" is not an https:// URL (git, file and http sources are refused)";
                if (reason)
                        return log_error_errno(EINVAL, "%s: packages[\"%s\"]: %s; refusing the lockfile.", path, key, reason);
                n++;
        }
        if (n == 0)
                return log_error_errno(EINVAL, "%s: no package in the lockfile; refusing it.", path);
        return 0;
}

int deps_check_npm_lockfile(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *data = NULL;
        size_t size = 0, cap = 0;

        if (!f)
                return log_error_errno(errno, "%s: Failed to open: %m", path);
        for (;;) {
                size_t k;
                if (size + 65536 > cap) {
                        char *t = realloc(data, cap + 65536 + 1);
                        if (!t)
                                return log_oom();
                        data = t;
                        cap += 65536;
                }
                k = fread(data + size, 1, cap - size, f);
                size += k;
                if (k == 0)
                        break;
        }
        if (ferror(f))
                return log_error_errno(EIO, "%s: Failed to read.", path);
        return deps_check_lockfile_data(DEPS_NPM, path, data ?: "", size);
}

int deps_check_lockfile_data(DepsEcosystem e, const char *name, const char *data, size_t size) {
        if (memchr(data, 0, size))
                return log_error_errno(EINVAL, "%s: a NUL byte in the lockfile; refusing it.", name);
        if (e == DEPS_PIP) {
                _cleanup_fclose_ FILE *f = fmemopen((void *) data, size, "r");
                if (size == 0)
                        return log_error_errno(EINVAL, "%s: no requirement in the lockfile; refusing it.", name);
                if (!f)
                        return log_oom();
                return check_pip(name, f);
        }
        if (e == DEPS_NPM) {
                json_tokener *tok = json_tokener_new();
                json_object *root;
                int r;
                if (!tok)
                        return log_oom();
                root = json_tokener_parse_ex(tok, data, (int) size);
                if (!root || json_tokener_get_error(tok) != json_tokener_success || json_tokener_get_parse_end(tok) != size) {
                        r = log_error_errno(EINVAL, "%s: not valid JSON (%s); refusing the lockfile.", name,
                                            json_tokener_error_desc(json_tokener_get_error(tok)));
                        json_object_put(root);
                        json_tokener_free(tok);
                        return r;
                }
                json_tokener_free(tok);
                r = check_npm(name, root);
                json_object_put(root);
                return r;
        }
        return -EINVAL;
}

int deps_data_sha256(const void *data, size_t size, char ret[static 65]) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned n = 0;

        if (EVP_Digest(data, size, md, &n, EVP_sha256(), NULL) != 1 || n != 32)
                return -EIO;
        for (unsigned i = 0; i < n; i++)
                sprintf(ret + 2 * i, "%02x", md[i]);
        ret[64] = 0;
        return 0;
}

int deps_check_lockfile(DepsEcosystem e, const char *path) {
        switch (e) {
        case DEPS_PIP:
                return deps_check_pip_lockfile(path);
        case DEPS_NPM:
                return deps_check_npm_lockfile(path);
        default:
                return -EINVAL;
        }
}
