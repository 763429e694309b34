/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Shared by the fuzz targets: one scratch directory per process (removed at exit), files
 * written into it, logging silenced, and a check that aborts (the fuzzer's "crash"). */

#include <ftw.h>
#include <stdint.h>
#include <sys/stat.h>

#include "log.h"
#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* An invariant: abort with the reason, so both libFuzzer and fuzz-main.c report it. */
#define fuzz_assert(expr, ...)                                                  \
        do {                                                                    \
                if (!(expr)) {                                                  \
                        fprintf(stderr, "invariant violated: %s: ", #expr);     \
                        fprintf(stderr, __VA_ARGS__);                           \
                        fputc('\n', stderr);                                    \
                        abort();                                                \
                }                                                               \
        } while (0)

static char fuzz_dir[] = "/tmp/cloister-fuzz-XXXXXX";

static inline int fuzz_rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        return remove(p) < 0 ? 0 : 0;
}

static inline void fuzz_rm_rf(const char *path) {
        (void) nftw(path, fuzz_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static inline void fuzz_cleanup(void) {
        fuzz_rm_rf(fuzz_dir);
}

/* The scratch directory; created (and logging silenced) on first use. */
static inline const char *fuzz_scratch(void) {
        static bool init;

        if (!init) {
                if (!mkdtemp(fuzz_dir))
                        abort();
                atexit(fuzz_cleanup);
                log_set_max_level(LOG_EMERG - 1); /* quiet: every rejected input logs */
                init = true;
        }
        return fuzz_dir;
}

/* Writes <scratch>/<rel> (creating one level of directory); returns the malloc'd path. */
static inline char *fuzz_write(const char *rel, const void *data, size_t size) {
        char *path = strprintf("%s/%s", fuzz_scratch(), rel), *slash;
        FILE *f;

        if (!path)
                return NULL;
        slash = strrchr(path, '/');
        *slash = 0;
        (void) mkdir(path, 0755);
        *slash = '/';
        f = fopen(path, "we");
        if (!f) {
                free(path);
                return NULL;
        }
        if (size > 0)
                fwrite(data, 1, size, f);
        if (fclose(f) != 0) {
                free(path);
                return NULL;
        }
        return path;
}
