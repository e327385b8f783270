/* cli/admin.h -- `argusq compact`, `argusq backup FILE`, `argusq info`,
 * `argusq dump`:
 * each returns the process's exit status (0, 1 failed, 2 no archive). */
#ifndef ARGUSQ_CLI_ADMIN_H
#define ARGUSQ_CLI_ADMIN_H

#include <stdbool.h>

#include "db/db.h"

/* db_open, and an archive of an earlier format migrated first when it
 * may be written (query_migrate; its progress on stderr). */
db_archive *cli_open_archive(const char *path, bool readonly, db_error *de);
int cli_compact(const char *archive, bool json);
int cli_backup(const char *archive, const char *to, bool json);
int cli_info(const char *archive, bool json);
/* `argusq dump [--trace NAME] [-o FILE]`: trace NAME (NULL: the latest)
 * as an Argus trace, to FILE (NULL or "-": standard output), through
 * libargusq's argusq_dump. */
int cli_dump(const char *archive, const char *trace, const char *to, bool json);

#endif
