/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once
#include "ctl.h"
/* Placeholder until the ctl-run helper lands cloisterctl run (owner: ctl-run). */
int verb_run(int argc, char *argv[], const CtlOptions *o);
