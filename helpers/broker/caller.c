/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Per-caller counts. A linear table: one entry per unit with a connection open, a few
 * dozen at most on a real host. */
#include <stdlib.h>

#include "caller.h"

Caller *caller_connect(CallerTable *t, const char *unit) {
        Caller *c, **l;

        for (size_t i = 0; i < t->n; i++)
                if (streq_ptr(t->callers[i]->unit, unit)) {
                        t->callers[i]->connections++;
                        return t->callers[i];
                }
        l = reallocarray(t->callers, t->n + 1, sizeof(Caller *));
        if (!l)
                return NULL;
        t->callers = l;
        c = calloc(1, sizeof(Caller));
        if (!c || (unit && !(c->unit = strdup(unit))))
                return mfree(c);
        c->connections = 1;
        t->callers[t->n++] = c;
        return c;
}

void caller_disconnect(CallerTable *t, Caller *c) {
        if (!c)
                return;
        if (c->connections > 0)
                c->connections--;
        if (c->connections > 0 || c->bytes > 0)
                return;
        for (size_t i = 0; i < t->n; i++)
                if (t->callers[i] == c) {
                        t->callers[i] = t->callers[--t->n];
                        break;
                }
        free(c->unit);
        free(c);
}

void caller_table_done(CallerTable *t) {
        for (size_t i = 0; i < t->n; i++) {
                free(t->callers[i]->unit);
                free(t->callers[i]);
        }
        t->callers = mfree(t->callers);
        t->n = 0;
}
