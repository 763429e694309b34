/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "project.h"
#include "unit-settings.h"

/* cloister-deps@<project>.service (cloister.project(5)): the one step with egress, the
 * hardening base otherwise (its differences: hardening.h). */
int profile_deps_unit(const Project *p, UnitSettings *ret);
