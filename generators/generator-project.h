/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "generator-output.h"

/* cloister-deps@<project>.service for every project that declares dependency sets (cloister.project(5)).
 * Returns 0, or 1 if some project file was rejected. */
int generate_projects(const GeneratorOutput *o, char * const *config_dirs);
