/* Variables between an agent's steps (DESIGN §8): the rules a variable's name and size are
 * judged by, the same on the way in (a request's variables, refused whole if one breaks them)
 * and on the way out (what a tool leaves, each variable that breaks them not kept, and named).
 * Pure decisions; the runner (runner/vars.c) asks Python the facts they need. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy/reasons.h"

#define POL_VARIABLES_COUNT_MAX 1000 /* variables in one object, in or out */
#define POL_VARIABLE_NAME_MAX 128    /* bytes of a name (VAR_NAME_LONG says so) */
/* The nesting a variable's value may have on the way out. Python's json decodes what it
 * encoded only within the interpreter's recursion limit (1000 by default, frames included):
 * anything kept here decodes in the next step. */
#define POL_VARIABLES_DEPTH_MAX 100

/* The name rules. identifier: str.isidentifier(); keyword: a Python keyword; builtin: the
 * name of a builtin of the jail's interpreter (final_answer included). POL_WHY_NONE, or one of
 * the VAR_ whys, in this order: too long, private or dunder, not an identifier, a keyword, a
 * builtin's. */
enum pol_why pol_var_name(const char *name, size_t len, bool identifier, bool keyword, bool builtin);

/* The bytes a kept variable adds to the object's JSON text: `"name":value`, and the comma
 * before it unless it is the first. A name that passed pol_var_name needs no escapes. */
uint64_t pol_var_cost(size_t kept_before, size_t name_len, size_t value_len);

/* The object's text with nothing kept: "{}". */
#define POL_VARIABLES_EMPTY_COST 2

/* The fewest bytes of JSON a list or tuple (items), a dict (entries) or a str (characters)
 * of n can take, to turn down a value that cannot fit before encoding it. */
enum pol_var_shape { POL_VAR_LIST, POL_VAR_DICT, POL_VAR_STR };
uint64_t pol_var_min_json(enum pol_var_shape shape, uint64_t n);

/* A name or key as shown in a message, between quotes: printable ASCII as it is, ' and \ and
 * every other byte as \xNN, at most 64 bytes of the original, "..." after a cut. Always
 * terminated. */
void pol_var_show(const char *s, size_t n, char *out, size_t size);
