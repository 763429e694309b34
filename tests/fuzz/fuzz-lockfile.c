/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: arbitrary bytes as a dependency lockfile (cloister.project(5)), through the pip
 * hash-pin check and the npm integrity check. The first byte picks the ecosystem. */
#include <stdint.h>

#include "deps.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static bool init;
        char sha[65];

        if (!init) {
                log_set_max_level(LOG_EMERG - 1); /* quiet */
                init = true;
        }
        if (size < 1)
                return 0;
        (void) deps_check_lockfile_data(data[0] & 1 ? DEPS_NPM : DEPS_PIP, "fuzz.lock",
                                        (const char *) data + 1, size - 1);
        if (deps_data_sha256(data + 1, size - 1, sha) < 0 || strlen(sha) != 64)
                abort();
        return 0;
}
