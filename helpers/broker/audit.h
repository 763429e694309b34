/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdint.h>

/* One structured journal record per broker request (cloister-broker(8)). No bodies, no secrets.
 * journalctl MESSAGE_ID=8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b */
#define CLOISTER_BROKER_MESSAGE_ID "8d2e4f1a6b7c4e0f9a3b5c7d1e2f4a6b"

typedef struct AuditRecord {
        const char *role;       /* NULL: an unknown peer */
        const char *unit;
        int peer_pid;
        const char *route;      /* health, llm, mcp, upstream, none */
        const char *upstream;   /* the upstream's name, "llm" for the LLM endpoint */
        const char *method;
        const char *path;
        unsigned status;
        uint64_t bytes_in, bytes_out;
        uint64_t duration_usec;
        const char *model;
        uint64_t prompt_tokens, completion_tokens;
        const char *error;      /* why the broker answered an error itself */
} AuditRecord;

void audit_log(const AuditRecord *a);
