/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* lib/conf/deps.c: lockfile paths, content-addressed cache directories, the "materialised"
 * test, and the hash-pin checks that run before any installer (cloister.project(5)). */

#include <sys/stat.h>

#include "deps.h"
#include "tap.h"
#include "test-util.h"

static char *tmpdir;

#define H64 "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define H64B "fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210"
#define SHA512 "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng=="

static void test_path_check(void) {
        static const char *const good[] = { "requirements.lock", "web/package-lock.json", "a/b/c.lock", ".deps/r.lock", "..x/r" };
        static const struct { const char *path, *reason; } bad[] = {
                { "", "empty" },
                { "/etc/r.lock", "relative" },
                { "../r.lock", "\"..\"" },
                { "a/../../r.lock", "\"..\"" },
                { "..", "\"..\"" },
                { "./r.lock", "\".\"" },
                { "a/./r.lock", "\".\"" },
                { "a//r.lock", "empty component" },
                { "web/", "empty component" },
                { "a\\b", "backslash" },
                { "a\tb", "control" },
        };

        for (size_t i = 0; i < ELEMENTSOF(good); i++)
                ok(!deps_lockfile_path_check(good[i]), "lockfile path \"%s\" is accepted", good[i]);
        for (size_t i = 0; i < ELEMENTSOF(bad); i++)
                like(deps_lockfile_path_check(bad[i].path), bad[i].reason, "lockfile path \"%s\" is refused", bad[i].path);
}

static void test_ecosystems(void) {
        is_str(deps_ecosystem_to_string(DEPS_PIP), "pip", "DEPS_PIP is \"pip\"");
        is_str(deps_ecosystem_to_string(DEPS_NPM), "npm", "DEPS_NPM is \"npm\"");
        is_int(deps_ecosystem_from_string("npm"), DEPS_NPM, "\"npm\" parses");
        is_int(deps_ecosystem_from_string("cargo"), _DEPS_ECOSYSTEM_INVALID, "\"cargo\" is no ecosystem");
        is_int(deps_ecosystem_from_string(NULL), _DEPS_ECOSYSTEM_INVALID, "NULL is no ecosystem");
        is_str(deps_ecosystem_env_name(DEPS_PIP), "PYTHONPATH", "pip sets PYTHONPATH");
        is_str(deps_ecosystem_env_value(DEPS_PIP), "/opt/cloister/deps/pip", "...to the mount point");
        is_str(deps_ecosystem_env_name(DEPS_NPM), "NODE_PATH", "npm sets NODE_PATH");
        is_str(deps_ecosystem_env_value(DEPS_NPM), "/opt/cloister/deps/npm/node_modules", "...to its node_modules");
}

static void test_cache_dir(void) {
        char *f = test_write_file(tmpdir, "abc.lock", "abc"), *g = test_write_file(tmpdir, "abd.lock", "abd");
        char *f2 = test_write_file(tmpdir, "sub/abc-copy.lock", "abc");
        char *root = test_path(tmpdir, "cache"), *d = NULL, *d2 = NULL, *e = NULL, *expected;
        char sha[65];

        is_int(deps_file_sha256(f, sha), 0, "deps_file_sha256() hashes a file");
        is_str(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "...to the sha256 of its content");
        is_int(deps_data_sha256("abc", 3, sha), 0, "deps_data_sha256() hashes a buffer");
        is_str(sha, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "...the same way");

        expected = strprintf("%s/pip-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", root);
        is_int(deps_cache_dir_in(root, "pip", f, &d), 0, "deps_cache_dir_in() names the set");
        is_str(d, expected, "...<root>/<ecosystem>-<sha256 of the lockfile>");
        is_int(deps_cache_dir_in(root, "pip", f2, &d2), 0, "the same content elsewhere");
        is_str(d2, d, "...gets the same directory (never installed twice)");
        free(d2);
        d2 = NULL;
        is_int(deps_cache_dir_in(root, "pip", g, &d2), 0, "a changed lockfile");
        ok(d2 && !streq(d2, d), "...gets a new directory");
        free(d2);
        d2 = NULL;
        is_int(deps_cache_dir_in(root, "npm", f, &d2), 0, "the same bytes as an npm lockfile");
        like(d2, "/npm-ba7816bf", "...are another set");
        free(d2);
        d2 = NULL;
        is_int(deps_cache_dir("pip", f, &d2), 0, "deps_cache_dir() uses the system cache");
        is_str(d2, "/var/cache/cloister/deps/pip-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
               "...under /var/cache/cloister/deps");
        free(d2);
        d2 = NULL;
        is_int(deps_cache_dir_in(root, "cargo", f, &d2), -EINVAL, "an unknown ecosystem is -EINVAL");
        is_int(deps_cache_dir_in(root, "pip", "/nonexistent/r.lock", &d2), -ENOENT, "a missing lockfile is -ENOENT");
        ok(!d2, "...and names nothing");

        e = deps_project_link(NULL, "webapp", DEPS_NPM);
        is_str(e, "/var/cache/cloister/deps/by-project/webapp/npm", "the stable per-project link");
        free(e);
        e = deps_project_link(root, "webapp", DEPS_PIP);
        ok(e && startswith(e, root) && strstr(e, "/by-project/webapp/pip"), "...under another cache root");
        free(e);

        /* materialised: a directory holding the marker file, nothing less */
        ok(!deps_materialised(d), "a set that does not exist is not materialised");
        test_mkdir(tmpdir, "cache/pip-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
        ok(!deps_materialised(d), "a directory without the complete marker is not materialised");
        test_mkdir(tmpdir, "cache/pip-ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad/" DEPS_COMPLETE_MARKER);
        ok(!deps_materialised(d), "a marker that is a directory does not count");
        free(test_write_file(tmpdir, "cache/pip-x/" DEPS_COMPLETE_MARKER, "x"));
        e = test_path(tmpdir, "cache/pip-x");
        ok(deps_materialised(e), "a directory with the marker file is materialised");
        free(e);
        free(test_write_file(tmpdir, "cache/file", "x"));
        e = test_path(tmpdir, "cache/file");
        ok(!deps_materialised(e), "a regular file is not materialised");
        free(e);

        free(expected);
        free(d);
        free(root);
        free(f);
        free(f2);
        free(g);
}

static void check_pip(const char *what, const char *content, int expected_r, const char *err_part) {
        char *f = test_write_file(tmpdir, "r.lock", content), *err;
        int r;

        test_stderr_begin();
        r = deps_check_pip_lockfile(f);
        err = test_stderr_end();
        is_int(r, expected_r, "pip: %s", what);
        if (err_part)
                like(err, err_part, "pip: %s: the error says where and why", what);
        else
                is_str(err, "", "pip: %s: nothing is logged", what);
        /* the in-memory variant agrees */
        test_stderr_begin();
        is_int(deps_check_lockfile_data(DEPS_PIP, "mem", content, strlen(content)), expected_r,
               "pip: %s (from memory)", what);
        free(test_stderr_end());
        free(err);
        free(f);
}

static void test_pip(void) {
        char *err;
        int r;

        check_pip("a pip-compile --generate-hashes file",
                  "#\n# This file is autogenerated by pip-compile\n#\n"
                  "certifi==2024.2.2 \\\n    --hash=sha256:" H64 " \\\n    --hash=sha256:" H64B "\n    # via requests\n"
                  "idna==3.6 \\\n    --hash=sha256:" H64 "\n"
                  "tomli==2.0.1 ; python_version < \"3.11\" \\\n    --hash=sha256:" H64B "\n\n",
                  0, NULL);
        check_pip("one line with the hash", "six==1.16.0 --hash=sha256:" H64 "\n", 0, NULL);
        check_pip("no trailing newline", "six==1.16.0 --hash=sha256:" H64, 0, NULL);
        check_pip("a requirement without a hash", "six==1.16.0\n", -EINVAL, "r.lock:1: the requirement has no --hash");
        check_pip("the second requirement without a hash",
                  "# pinned\nsix==1.16.0 \\\n    --hash=sha256:" H64 "\nidna==3.6\n", -EINVAL, "r.lock:4:");
        check_pip("a hash that is not sha256", "six==1.16.0 --hash=md5:0123456789abcdef0123456789abcdef\n", -EINVAL,
                  "r.lock:1: only --hash=sha256");
        check_pip("a short sha256", "six==1.16.0 --hash=sha256:0123\n", -EINVAL, "r.lock:1:");
        check_pip("a non-hex sha256", "six==1.16.0 --hash=sha256:" "z123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef" "\n",
                  -EINVAL, "r.lock:1:");
        check_pip("an unpinned requirement", "six>=1.16 --hash=sha256:" H64 "\n", -EINVAL, "not pinned");
        check_pip("-r of another file", "-r base.txt\nsix==1.16.0 --hash=sha256:" H64 "\n", -EINVAL, "r.lock:1: options lines");
        check_pip("--index-url", "--index-url https://example.org/simple\nsix==1.16.0 --hash=sha256:" H64 "\n", -EINVAL, "r.lock:1:");
        check_pip("an editable install", "-e .\n", -EINVAL, "r.lock:1:");
        check_pip("a direct URL", "six @ https://example.org/six.whl --hash=sha256:" H64 "\n", -EINVAL, "direct URL");
        check_pip("another option after the requirement", "six==1.16.0 --hash=sha256:" H64 " --no-binary=:all:\n", -EINVAL,
                  "only --hash=sha256");
        check_pip("a file ending in a continuation", "six==1.16.0 \\\n", -EINVAL, "continuation");
        check_pip("an empty file", "", -EINVAL, "no requirement");
        check_pip("comments only", "# nothing\n\n   # at all\n", -EINVAL, "no requirement");
        check_pip("a hash only in a comment", "six==1.16.0 # --hash=sha256:" H64 "\n", -EINVAL, "r.lock:1:");

        test_stderr_begin();
        r = deps_check_lockfile_data(DEPS_PIP, "mem", "six==1.16.0 --hash=sha256:" H64 "\n\0x", 48);
        err = test_stderr_end();
        is_int(r, -EINVAL, "pip: a NUL byte is refused");
        free(err);

        test_stderr_begin();
        r = deps_check_pip_lockfile("/nonexistent/r.lock");
        err = test_stderr_end();
        is_int(r, -ENOENT, "pip: a missing lockfile is -ENOENT");
        like(err, "/nonexistent/r.lock", "...naming it");
        free(err);
}

static void check_npm(const char *what, const char *content, int expected_r, const char *err_part) {
        char *f = test_write_file(tmpdir, "package-lock.json", content), *err;
        int r;

        test_stderr_begin();
        r = deps_check_npm_lockfile(f);
        err = test_stderr_end();
        is_int(r, expected_r, "npm: %s", what);
        if (err_part)
                like(err, err_part, "npm: %s: the error says where and why", what);
        else
                is_str(err, "", "npm: %s: nothing is logged", what);
        test_stderr_begin();
        is_int(deps_check_lockfile_data(DEPS_NPM, "mem", content, strlen(content)), expected_r,
               "npm: %s (from memory)", what);
        free(test_stderr_end());
        free(err);
        free(f);
}

#define NPM_HEAD(v) "{ \"name\": \"t\", \"lockfileVersion\": " v ", \"requires\": true, \"packages\": { \"\": { \"name\": \"t\" }"
#define NPM_ENTRY(name, body) ", \"node_modules/" name "\": { " body " }"
#define NPM_TAIL " } }"

static void test_npm(void) {
        check_npm("a lockfile v3 with integrity", NPM_HEAD("3") NPM_ENTRY("is-number", "\"version\": \"7.0.0\", \"integrity\": \"" SHA512 "\"") NPM_TAIL,
                  0, NULL);
        check_npm("a lockfile v2 with resolved and integrity",
                  NPM_HEAD("2") NPM_ENTRY("is-number", "\"version\": \"7.0.0\", \"resolved\": \"https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz\", \"integrity\": \"" SHA512 "\"")
                  NPM_ENTRY("a/node_modules/b", "\"inBundle\": true") NPM_TAIL,
                  0, NULL);
        check_npm("a package without integrity",
                  NPM_HEAD("3") NPM_ENTRY("is-number", "\"version\": \"7.0.0\", \"integrity\": \"" SHA512 "\"")
                  NPM_ENTRY("left-pad", "\"version\": \"1.3.0\"") NPM_TAIL,
                  -EINVAL, "packages[\"node_modules/left-pad\"]: no \"integrity\"");
        check_npm("a sha1 integrity", NPM_HEAD("3") NPM_ENTRY("x", "\"integrity\": \"sha1-AAAAAAAAAAAAAAAAAAAAAAAAAAA=\"") NPM_TAIL,
                  -EINVAL, "sha512");
        check_npm("a git source", NPM_HEAD("3") NPM_ENTRY("x", "\"resolved\": \"git+ssh://git@example.org/x.git\", \"integrity\": \"" SHA512 "\"") NPM_TAIL,
                  -EINVAL, "https://");
        check_npm("an http source", NPM_HEAD("3") NPM_ENTRY("x", "\"resolved\": \"http://registry.example/x.tgz\", \"integrity\": \"" SHA512 "\"") NPM_TAIL,
                  -EINVAL, "https://");
        check_npm("a link", NPM_HEAD("3") NPM_ENTRY("x", "\"resolved\": \"../x\", \"link\": true") NPM_TAIL, -EINVAL, "links");
        check_npm("lockfileVersion 1", "{ \"lockfileVersion\": 1, \"dependencies\": {} }", -EINVAL, "lockfileVersion");
        check_npm("no lockfileVersion", "{ \"packages\": {} }", -EINVAL, "lockfileVersion");
        check_npm("no packages", "{ \"lockfileVersion\": 3 }", -EINVAL, "packages");
        check_npm("only the root package", NPM_HEAD("3") NPM_TAIL, -EINVAL, "no package");
        check_npm("not JSON", "{ \"lockfileVersion\": 3,", -EINVAL, "not valid JSON");
        check_npm("a JSON array", "[1, 2]", -EINVAL, "lockfileVersion");
        check_npm("trailing garbage", NPM_HEAD("3") NPM_ENTRY("x", "\"integrity\": \"" SHA512 "\"") NPM_TAIL " x", -EINVAL, "not valid JSON");
}

int main(void) {
        tmpdir = test_tmpdir_new();

        test_path_check();
        test_ecosystems();
        test_cache_dir();
        test_pip();
        test_npm();

        test_tmpdir_remove(tmpdir);
        return tap_done();
}
