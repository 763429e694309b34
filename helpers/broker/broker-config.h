/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "role.h"

/* What the broker needs to know, read once at start (restart the broker to re-read:
 * socket activation keeps the socket, so no request is lost). */
typedef struct BrokerConfig {
        CloisterConf *conf;
        Role **roles;
        size_t n_roles;
        char *llm_endpoint;     /* [LLM] Endpoint=, falling back to [Chat] */
        char *llm_model;        /* default model, [LLM] falling back to [Chat] */
        char *llm_api_key;      /* the credential's contents, or NULL */
        usec_t idle_timeout;
} BrokerConfig;

int broker_config_load(BrokerConfig **ret);
BrokerConfig *broker_config_free(BrokerConfig *c);

/* The role, read on first use if it was added after the broker started. */
const Role *broker_config_find_role(BrokerConfig *c, const char *name);

/* Reads systemd credential `name` from $CREDENTIALS_DIRECTORY (LoadCredential=): the broker
 * never reads secrets from anywhere else. Trailing newlines are dropped. */
int broker_credential_read(const char *name, char **ret);

/* The model a role's /v1 requests are forced to, or NULL if the caller's choice stands. */
const char *broker_config_role_model(const BrokerConfig *c, const Role *role);
