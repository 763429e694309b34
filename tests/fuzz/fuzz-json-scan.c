/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* libFuzzer target: lib/basic/json-scan.c, the broker's validating scan of a request body.
 * Invariants: it never accepts a text that json-c, parsing strictly (json_parse_strict), refuses;
 * it refuses what json-c accepts only where json-c's strict mode is looser than RFC 8259 (its
 * numbers: a leading zero, NaN, Infinity); and each member it reports
 * for a top-level object is that object's member as json-c reads it: the same key, in the same
 * order, with a value that parses alone to the same kind. */
#include <json-c/json.h>

#include "fuzz-util.h"
#include "json-scan.h"
#include "json-strict.h"

static json_type kind_type(JsonKind k) {
        static const json_type t[] = {
                [JSON_KIND_NULL] = json_type_null,      [JSON_KIND_BOOLEAN] = json_type_boolean,
                [JSON_KIND_NUMBER] = json_type_double,  [JSON_KIND_STRING] = json_type_string,
                [JSON_KIND_ARRAY] = json_type_array,    [JSON_KIND_OBJECT] = json_type_object,
        };
        return t[k];
}

static bool same_kind(json_object *o, JsonKind k) {
        json_type t = json_object_get_type(o);
        return t == kind_type(k) || (k == JSON_KIND_NUMBER && t == json_type_int);
}

/* Whether a run of number-like bytes is a number by RFC 8259 (or a literal). */
static bool rfc_number(const uint8_t *d, size_t n) {
        size_t i = 0, digits;

        if ((n == 4 && (memcmp(d, "true", 4) == 0 || memcmp(d, "null", 4) == 0)) || (n == 5 && memcmp(d, "false", 5) == 0))
                return true;
        if (i < n && d[i] == '-')
                i++;
        for (digits = 0; i < n && d[i] >= '0' && d[i] <= '9'; i++, digits++)
                ;
        if (digits == 0 || (digits > 1 && d[i - digits] == '0'))
                return false;
        if (i < n && d[i] == '.') {
                for (i++, digits = 0; i < n && d[i] >= '0' && d[i] <= '9'; i++, digits++)
                        ;
                if (digits == 0)
                        return false;
        }
        if (i < n && (d[i] == 'e' || d[i] == 'E')) {
                i++;
                if (i < n && (d[i] == '+' || d[i] == '-'))
                        i++;
                for (digits = 0; i < n && d[i] >= '0' && d[i] <= '9'; i++, digits++)
                        ;
                if (digits == 0)
                        return false;
        }
        return i == n;
}

/* Where json-c's strict mode takes a number RFC 8259 does not ("01", "1.", NaN, Infinity…):
 * any run of number-like bytes outside a string that is no RFC number. */
static bool has_loose_number(const uint8_t *d, size_t n) {
        bool in_string = false;

        for (size_t i = 0; i < n; i++) {
                size_t start = i;

                if (in_string) {
                        if (d[i] == '\\')
                                i++;
                        else if (d[i] == '"')
                                in_string = false;
                        continue;
                }
                if (d[i] == '"') {
                        in_string = true;
                        continue;
                }
                while (i < n && d[i] && strchr("+-.0123456789eEaflnrstuINy", d[i]))
                        i++;
                if (i > start && !rfc_number(d + start, i - start))
                        return true;
                if (i > start)
                        i--;
        }
        return false;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(json_scan_done) JsonScan scan = {};
        json_object *tree = NULL;
        int r, depth = 16;
        bool json_c;

        r = json_scan((const char *) data, size, (unsigned) depth, &scan);
        fuzz_assert(r == 0 || r == -EBADMSG, "json_scan: %d", r);
        /* a space after it: json-c cannot tell where a number alone ends */
        _cleanup_free_ char *spaced = malloc(size + 1);
        fuzz_assert(spaced, "out of memory");
        memcpy(spaced, data, size);
        spaced[size] = ' ';
        json_c = json_parse_strict(spaced, size + 1, depth, &tree) >= 0; /* both: containers open at once */
        if (r == 0)
                /* json_parse_strict() has no way to return a top-level null */
                fuzz_assert(json_c || scan.kind == JSON_KIND_NULL, "json_scan accepts a text json-c refuses");
        else
                fuzz_assert(!json_c || has_loose_number(data, size), "json_scan refuses a text json-c accepts");
        if (r < 0 || !json_c) {
                json_object_put(tree);
                return 0;
        }
        fuzz_assert(same_kind(tree, scan.kind), "top-level kind");
        fuzz_assert((scan.kind == JSON_KIND_OBJECT) == (scan.open != NULL), "the object's opening");
        if (scan.kind == JSON_KIND_OBJECT && (size_t) json_object_object_length(tree) == scan.n_members) {
                /* keys all distinct (json-c keeps one of each): same order, same values */
                size_t i = 0;
                json_object_object_foreach(tree, key, val) {
                        const JsonMember *m = &scan.members[i++];
                        _cleanup_free_ char *wrapped = NULL;
                        json_object *array = NULL, *alone;
                        /* in an array: json-c cannot tell where a number alone ends */
                        fuzz_assert(wrapped = strprintf("[%.*s]", (int) m->value_n, m->value), "out of memory");
                        fuzz_assert(json_parse_strict(wrapped, m->value_n + 2, depth + 2, &array) >= 0 &&
                                    json_object_array_length(array) == 1,
                                    "member %zu's value does not parse alone", i);
                        alone = json_object_array_get_idx(array, 0);
                        fuzz_assert(same_kind(alone, m->kind) && same_kind(val, m->kind), "member %zu's kind", i);
                        fuzz_assert(json_object_equal(alone, val), "member %zu's value", i);
                        if (!memchr(m->key, '\\', m->key_n))
                                fuzz_assert(strlen(key) == m->key_n && memcmp(key, m->key, m->key_n) == 0,
                                            "member %zu's key", i);
                        json_object_put(array);
                }
        }
        json_object_put(tree);
        return 0;
}
