/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "rate-limit.h"
#include "role.h"

/* What the broker needs to know: cloister.conf, the roles and each role's rate-limit state.
 * Read at start and again on reload (SIGHUP); a request holds a reference to the config it
 * started with, so a reload never changes the rules under a request in flight. */
typedef struct BrokerConfig {
        unsigned n_ref;
        CloisterConf *conf;
        Role **roles;
        RateLimit **limits;     /* per role, parallel to roles */
        size_t n_roles;
        char *llm_endpoint;     /* [LLM] Endpoint=, falling back to [Chat] */
        char *llm_model;        /* default model, [LLM] falling back to [Chat] */
        char *llm_api_key;      /* the credential's contents, or NULL */
        usec_t idle_timeout;
} BrokerConfig;

typedef enum BrokerConfigMode {
        BROKER_CONFIG_LENIENT,  /* start: a refused role file is left out, the others served */
        BROKER_CONFIG_STRICT,   /* reload, --check-config: a refused file refuses the whole config */
} BrokerConfigMode;

int broker_config_load(BrokerConfigMode mode, BrokerConfig **ret);
BrokerConfig *broker_config_ref(BrokerConfig *c);
BrokerConfig *broker_config_unref(BrokerConfig *c);
DEFINE_TRIVIAL_CLEANUP_FUNC(BrokerConfig *, broker_config_unref);

/* A reloaded config takes over the rate-limit state of the roles that keep their name: a
 * reload neither resets a role's minute nor frees the concurrent slots of its requests. */
void broker_config_adopt_limits(BrokerConfig *c, const BrokerConfig *old);

/* The role, read on first use if it was added after the broker started. */
const Role *broker_config_find_role(BrokerConfig *c, const char *name);
/* The rate-limit state of one of c's roles, or NULL. */
RateLimit *broker_config_role_limit(const BrokerConfig *c, const Role *role);

/* Reads systemd credential `name` from $CREDENTIALS_DIRECTORY (LoadCredential=): the broker
 * never reads secrets from anywhere else. Trailing newlines are dropped. */
int broker_credential_read(const char *name, char **ret);

/* The model a role's /v1 requests are forced to, or NULL if the caller's choice stands. */
const char *broker_config_role_model(const BrokerConfig *c, const Role *role);
