/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: arbitrary bytes as projects/<name>.project (cloister.project(5)). An accepted file has
 * its required Workspace=, and that workspace is a place a sandbox may write to. */
#include "fuzz-util.h"
#include "project.h"
#include "writable-path.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_free_ char *path = fuzz_write("projects/fuzz.project", data, size);
        _cleanup_(project_freep) Project *p = NULL;

        if (!path)
                return 0;
        if (project_load(path, &p) < 0) {
                fuzz_assert(!p, "a refused project returns nothing");
                return 0;
        }
        fuzz_assert(p && streq(p->name, "fuzz") && p->workspace, "an accepted project has a Workspace=");
        fuzz_assert(p->workspace[0] == '/' && !writable_path_check(p->workspace),
                    "Workspace=%s is not a writable place: %s", p->workspace, writable_path_check(p->workspace));
        return 0;
}
