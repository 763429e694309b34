/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>

#include "log.h"
#include "profile-gpu.h"
#include "sandbox-keys.h"
#include "start-check.h"

/* Opened by every CUDA process; uvm-tools only by profilers, so it is optional. */
static const struct {
        const char *node;
        bool required;
} gpu_common_nodes[] = {
        { "/dev/nvidiactl",        true },
        { "/dev/nvidia-uvm",       true },
        { "/dev/nvidia-uvm-tools", false },
};

/* DRM render nodes are renderD128 and up. */
#define RENDER_NODE_BASE 128

/* Names in `dir` that are `prefix` + a number in base…base+63 (no leading zero), as a bitmap
 * of number - base. */
static uint64_t numbered_nodes(const char *dir, const char *prefix, unsigned base) {
        _cleanup_(closedir_p) DIR *d = opendir(dir);
        uint64_t found = 0;
        struct dirent *de;

        while (d && (de = readdir(d))) {
                const char *p = startswith(de->d_name, prefix);
                size_t digits = p ? strspn(p, "0123456789") : 0;
                unsigned long n;

                if (!p || digits == 0 || digits > 3 || p[digits] || (p[0] == '0' && digits > 1))
                        continue;
                n = strtoul(p, NULL, 10);
                if (n >= base && n - base <= GPU_INDEX_MAX)
                        found |= UINT64_C(1) << (n - base);
        }
        return found;
}

/* "0,1,3" (checked by conf_parse_gpus()) as a bitmap. */
static uint64_t gpu_list(const char *gpus) {
        uint64_t l = 0;

        for (const char *p = gpus; *p; p += *p == ',') {
                char *end;
                unsigned long i = strtoul(p, &end, 10);
                if (end == p || i > GPU_INDEX_MAX)
                        break;
                l |= UINT64_C(1) << i;
                p = end;
        }
        return l;
}

/* The bind tolerates a missing node ("-"), so that the start check inside the sandbox can
 * say which one is missing (a failed bind would stop namespace setup with a bare errno). */
static int add_node(UnitSettings *s, const char *node, bool required) {
        int r = unit_settings_addf(s, "Service", "DeviceAllow", "%s rw", node);

        if (r >= 0)
                r = unit_settings_addf(s, "Service", "BindReadOnlyPaths", "-%s", node);
        if (r >= 0 && required)
                r = profile_add_start_check(s, "test -c \"$1\"",
                                            "GPUs= needs the device node $1, which does not exist on this host (is the NVIDIA driver loaded?)",
                                            node, NULL);
        return r;
}

static int add_numbered(UnitSettings *s, const char *prefix, unsigned base, uint64_t set, bool required) {
        int r = 0;

        for (unsigned i = 0; i <= GPU_INDEX_MAX && r >= 0; i++)
                if (set & (UINT64_C(1) << i)) {
                        _cleanup_free_ char *n = strprintf("%s%u", prefix, base + i);
                        r = n ? add_node(s, n, required) : -ENOMEM;
                }
        return r;
}

int profile_add_gpus(UnitSettings *s, const char *gpus, const char *source) {
        uint64_t indices, render = 0;
        int r = 0;

        if (isempty(gpus))
                return 0;
        if (streq(gpus, "all")) {
                /* What the host has now; the generator runs again at every daemon-reload. */
                indices = numbered_nodes("/dev", "nvidia", 0);
                if (indices == 0) {
                        log_warning("%s: GPUs=all, but no /dev/nvidia<N> exists now, so the unit requires /dev/nvidia0. "
                                    "Run \"systemctl daemon-reload\" once the NVIDIA driver's nodes exist, or list the GPUs (GPUs=0,1).",
                                    source);
                        indices = 1;
                }
                /* Only with "all": a render node's number says nothing about the GPU index. */
                render = numbered_nodes("/dev/dri", "renderD", RENDER_NODE_BASE);
        } else
                indices = gpu_list(gpus);

        for (size_t i = 0; i < ELEMENTSOF(gpu_common_nodes) && r >= 0; i++)
                r = add_node(s, gpu_common_nodes[i].node, gpu_common_nodes[i].required);
        if (r >= 0)
                r = add_numbered(s, "/dev/nvidia", 0, indices, true);
        if (r >= 0)
                r = add_numbered(s, "/dev/dri/renderD", RENDER_NODE_BASE, render, false);
        return r;
}
