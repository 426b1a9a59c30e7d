/* Helpers shared by the test programs. */
#ifndef ENPU_TESTUTIL_H
#define ENPU_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
/* cmocka needs the three includes above first. */
#include <cmocka.h>

#define ENPU_SKIP 77

/* Path of a file under ../shared/models, or NULL when the folder is absent
 * (the caller then skips, having printed why). */
const char *enpu_test_shared_model(const char *rel);
/* True if ../shared/models exists; prints the skip message when it does not. */
int enpu_test_have_shared_models(void);
/* Runs a shell command, returns its exit status (-1 if it did not exit);
 * stdout+stderr go to *out (malloc'd, NUL-terminated) when out is non-NULL. */
int enpu_test_run(const char *cmd, char **out);

#endif
