/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Standalone driver for the libFuzzer targets in builds without -Dfuzz=true (as systemd's
 * src/fuzz/fuzz-main.c): runs LLVMFuzzerTestOneInput() once per file named on the command line
 * (a directory: every file in it, in name order), so the seed and regression corpora are
 * replayed by every build, under gcc, valgrind and ASan alike. A target reports a violated
 * invariant by abort(), which fails the test. */
#include <dirent.h>
#include <stdint.h>
#include <sys/stat.h>

#include "macro.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        _cleanup_free_ char *buf = NULL;
        size_t size = 0, alloc = 0, n;

        if (!f) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -errno;
        }
        do {
                char *b;
                if (size + 4096 > alloc) {
                        alloc = (size + 4096) * 2;
                        b = realloc(buf, alloc);
                        if (!b)
                                return -ENOMEM;
                        buf = b;
                }
                n = fread(buf + size, 1, alloc - size, f);
                size += n;
        } while (n > 0);
        if (ferror(f))
                return -EIO;
        /* an exact-size copy, so that ASan and valgrind see reads past the input */
        _cleanup_free_ uint8_t *exact = malloc(size ?: 1);
        if (!exact)
                return -ENOMEM;
        memcpy(exact, buf, size);
        (void) LLVMFuzzerTestOneInput(exact, size);
        return 0;
}

static int name_cmp(const void *a, const void *b) {
        return strcmp(*(char * const *) a, *(char * const *) b);
}

static int run_path(const char *path, unsigned *count) {
        struct stat st;
        int r = 0;

        if (stat(path, &st) < 0) {
                fprintf(stderr, "%s: %s\n", path, strerror(errno));
                return -errno;
        }
        if (!S_ISDIR(st.st_mode)) {
                (*count)++;
                return run_file(path);
        }
        _cleanup_(closedir_p) DIR *d = opendir(path);
        char **names = NULL;
        size_t n = 0;
        struct dirent *de;

        if (!d)
                return -errno;
        while ((de = readdir(d))) {
                char **t;
                if (de->d_name[0] == '.')
                        continue;
                t = realloc(names, sizeof(char *) * (n + 1));
                if (!t) {
                        r = -ENOMEM;
                        break;
                }
                names = t;
                names[n] = strprintf("%s/%s", path, de->d_name);
                if (!names[n]) {
                        r = -ENOMEM;
                        break;
                }
                n++;
        }
        if (n > 0)
                qsort(names, n, sizeof(char *), name_cmp);
        for (size_t i = 0; i < n; i++) {
                if (r >= 0)
                        r = run_path(names[i], count);
                free(names[i]);
        }
        free(names);
        return r;
}

int main(int argc, char *argv[]) {
        unsigned count = 0;

        for (int i = 1; i < argc; i++)
                if (run_path(argv[i], &count) < 0)
                        return 1;
        /* A replay of nothing proves nothing: a missing or emptied corpus fails. */
        if (count == 0) {
                fprintf(stderr, "%s: no inputs to replay (a corpus directory or file is required)\n", argv[0]);
                return 1;
        }
        printf("%s: %u inputs, no invariant violated\n", argv[0], count);
        return 0;
}
