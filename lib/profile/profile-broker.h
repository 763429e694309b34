/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "hardening.h"

/* cloister-broker.service (cloister-broker(8)): the one cloister process with network egress,
 * rendered at build time (units/render-template.c) from the hardening base with the changes
 * below. */
extern const HardeningChange profile_broker_hardening[];

int profile_broker(UnitSettings *ret);
